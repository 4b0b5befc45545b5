"""One simulation: a scenario, a policy and a seed in; a judged history out.

``simulate`` is the single entry the CLI, the explorers, the sweeps and the notebooks
call. The same inputs give the same history digest in any process.
"""

from __future__ import annotations

import gc
import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from checks import Index, Validity, Verdict, index_of
from checks import history as H
from checks import judge as judge_history
from checks.history import Op
from model.constants import LEASE_S
from model.errors import LeaselabError
from model.policy import Policy, parse_flag_assignment, preset_name, resolve_policy
from model.requests import Request
from scenarios.families import FAMILIES
from scenarios.limits import MAX_SEED
from scenarios.loader import load_scenario
from scenarios.overrides import AS_WRITTEN, cell_overrides, shaped
from scenarios.schema import Scenario, quiet_phase_s
from sim.world import processes
from sim.world.faults import Fault
from sim.world.interpreter import World
from sim.world.kernel import TieControl
from sim.world.recorder import OK
from sim.world.workload import plan_runs


@dataclass(frozen=True)
class SimulationResult:
    """Everything one simulation produced. ``violations`` names the invariants judged false."""

    scenario: str
    policy: Policy
    seed: int
    history: list[Op]
    verdicts: dict[str, Verdict]
    coverage: dict[str, bool]
    faults_fired: dict[str, int]
    fault_script: tuple[Fault, ...]
    stats: dict[str, Any] = field(default_factory=dict)
    request_types: list[type[Request]] = field(default_factory=list, repr=False)
    ties: TieControl | None = field(default=None, repr=False)
    index: Index | None = field(default=None, repr=False)
    """The index the judging pass built (None when not judged): what a later stage reads the history
    through (the register's recognisers, mechanisms), never built again."""

    def indexed(self) -> Index:
        """The judging pass's index, or one built now for a history simulated without judging."""
        if self.index is None:
            object.__setattr__(self, "index", index_of(self.history))  # frozen: filled in once, like a cache
        assert self.index is not None
        return self.index

    @cached_property
    def digest(self) -> str:
        """The history digest, computed on first use: hashing a history costs as much as judging
        it, and most callers (explorers, the bench) read the digest of few simulations."""
        return H.digest(self.history)

    def __repr__(self) -> str:
        """One short line (the history, verdicts and statistics are attributes, not the repr: a notebook
        cell that ends in a result would otherwise print hundreds of thousands of characters)."""
        name = preset_name(self.policy) or "custom policy"
        return (
            f"<SimulationResult {self.scenario} {name} seed {self.seed}: digest {self.digest}, "
            f"{len(self.history):,} records, violated: {', '.join(self.violations) or 'none'}>"
        )

    @property
    def violations(self) -> list[str]:
        return [name for name, v in self.verdicts.items() if v.valid is Validity.INVALID]

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def judged(self) -> dict[str, int]:
        """Cases each invariant judged (a sweep writes them as ``judged.<invariant>`` columns)."""
        return {name: v.judged for name, v in self.verdicts.items()}


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for one simulation.

    A simulation allocates thousands of short-lived objects (records, dicts, generator frames)
    and triggers many young-generation collections that find nothing to free: about 15-30% of
    its time. Its own cycles (world, processes, simpy events) are all garbage once it returns,
    and are collected by the first collection after the collector is back on, so memory does
    not grow across simulations (``leaselab bench`` measures that).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_world(
    scenario: Scenario,
    policy: Policy,
    seed: int,
    script: Sequence[Fault] | None = None,
    ties: TieControl | None = None,
    anchored: Sequence[Fault] | None = None,
    keep: Sequence[Fault] = (),
) -> World:
    """A world with every process started, ready to run (``keep``: see :func:`simulate`)."""
    rng = random.Random(seed)
    runs = plan_runs(scenario, rng)
    world = World(
        scenario,
        policy,
        rng,
        list(script) if script is not None else None,
        ties,
        list(anchored) if anchored is not None else None,
    )
    if keep:
        world.plan.keep(keep)
        world._decide = world.plan.decide
    env, cfg = world.env, scenario.world
    env.process(processes.phases(world))
    world.open_creators = len(runs)
    for i, planned in enumerate(runs):
        env.process(processes.creator(world, planned, i % cfg.hosts + 1))
    for slot in range(1, cfg.workers + 1):
        env.process(processes.worker(world, slot))
    for slot in range(1, cfg.approvers + 1):
        env.process(processes.approver(world, slot))
    env.process(processes.reaper(world))
    return world


def run_world(world: World) -> None:
    """Run the chaos and quiet phases, then, while a run is still RUNNING and a segment is still at work
    (``busy``), up to one more quiet phase in steps of a lease: the grace a live run gets to finish.

    The quiet phase is sized for the scenario's calls as written; a drawn tempo can make every call last
    several leases (``reaper_races_heartbeat`` at a latency factor near 3: 2,600 s per provider call), and
    on the Sync transport the attempt the reaper dispatches runs inline in its tick, so a run can still be
    in a live segment, renewing, when the quiet phase ends: a harness horizon, not a stranded run. A
    RUNNING row nobody works on ends the world at once and is judged stranded as before; a world that
    ends within the quiet phase (or with no RUNNING row) ends exactly where it did."""
    cfg = world.scenario.world
    quiet_s = quiet_phase_s(world.scenario)
    env = world.env
    env.run(until=env.any_of([world.done, env.timeout(cfg.chaos_s + quiet_s)]))
    grace_end = env.now + quiet_s
    while not world.done.triggered and world.busy and world.db.has_running() and env.now < grace_end:
        env.run(until=env.any_of([world.done, env.timeout(min(float(LEASE_S), grace_end - env.now))]))
    for uuid, row in world.db.rows.items():
        world.recorder.add(H.WORLD, H.FINAL, uuid, OK, {"row": H.row_value(row)})


def simulate(
    scenario: str | Path | Scenario,
    policy: str | Policy = "head",
    seed: int = 0,
    *,
    flags: Mapping[str, bool | str] | str | None = None,
    intensity: float = 1.0,
    latency_ratio: float = AS_WRITTEN,
    transport: str = "",
    fault_ranges: str = "",
    collation: str = "",
    script: Sequence[Fault] | None = None,
    judge: bool = True,
    ties: TieControl | None = None,
    anchored: Sequence[Fault] | None = None,
    keep: Sequence[Fault] = (),
) -> SimulationResult:
    """Run one simulation and judge its history.

    ``seed`` is an integer from 0 to 2^63-1 (a string or a negative number is refused, not hashed
    into another history). ``flags`` overrides the policy's flags: a mapping, or a sweep row's
    ``flags`` text (``"idempotency_keys=true"``). ``intensity``, ``latency_ratio``, ``transport``,
    ``fault_ranges`` and ``collation`` are the other keys of a sweep row (1, 0, '', '' and '' keep
    the scenario as written), so the row's values give the row's digest::

        simulate(row.scenario, row.preset, row.seed, flags=row.flags, intensity=row.intensity,
                 latency_ratio=row.latency_ratio, transport=row.transport, fault_ranges=row.fault_ranges,
                 collation=row.collation)

    ``script`` switches the fault plan to script mode: exactly those faults fire, at
    their request indexes (the scenario's own targeted faults do not: a recorded
    script already holds those that fired). ``anchored`` is the shrinker's mode: the
    faults fire at their anchors (run, request type, occurrence) instead. ``keep`` (profile
    mode only) fires those faults at their anchors on top of the profile's draws
    (:meth:`FaultPlan.keep`); the result's ``fault_script`` replays it in script mode.
    """
    checked_seed(seed)
    cell_overrides(intensity, latency_ratio, transport, fault_ranges, collation)
    loaded = load_scenario(scenario)
    if intensity != 1.0 or latency_ratio != AS_WRITTEN or transport or fault_ranges or collation:
        loaded, _ = shaped(
            loaded,
            intensity=intensity,
            latency_ratio=latency_ratio,
            transport=transport,
            fault_ranges=fault_ranges,
            collation=collation,
        )
    resolved = resolve_policy(policy, parse_flags_text(flags) if isinstance(flags, str) else flags)
    with gc_paused():
        world = build_world(loaded, resolved, seed, script, ties, anchored, keep)
        run_world(world)
        result = _judged(world, loaded.name, resolved, seed, ties, judge)
        _release(world)
        return result


def checked_seed(seed: object) -> int:
    """``seed`` if it is an integer from 0 to 2^63-1; else a one-line LeaselabError (``random.Random``
    would hash a string or take a negative number's absolute value: another history, silently)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise LeaselabError(f"must be an integer, not {type(seed).__name__} {seed!r}", field="seed")
    if not 0 <= seed <= MAX_SEED:
        raise LeaselabError(f"must be from 0 to 2^63-1, not {seed}", field="seed")
    return seed


def parse_flags_text(text: str) -> dict[str, bool]:
    """A sweep row's ``flags`` (``name=true,name=false``; '' for none) as overrides."""
    return dict(parse_flag_assignment(part) for part in text.split(",") if part.strip())


def _release(world: World) -> None:
    """Break the finished world's reference cycles (see :meth:`Kernel.release`) so that it is
    freed by reference counting rather than by the cyclic collector, which would walk every
    history record of every simulation again."""
    world.env.release()
    world.__dict__.clear()


def _judged(
    world: World, name: str, policy: Policy, seed: int, ties: TieControl | None, judge: bool
) -> SimulationResult:
    history = world.recorder.history
    judged = judge_history(history) if judge else None
    verdicts = judged.verdicts if judged is not None else {}
    reached = judged.coverage if judged is not None else {}
    statuses = Counter(row.status.value for row in world.db.rows.values())
    stats = {
        "runs": len(world.db.rows),
        "final_status": dict(sorted(statuses.items())),
        "simulated_s": round(world.env.now, 3),
        "requests": world.requests,
        "history_records": len(history),
        "simpy_events": world.env.scheduled,
        "simpy_events_dispatched": world.env.scheduled - world.env.taken_at_once,
        "landings": world.tools.landings,
        "ended_early": world.done.triggered,
    }
    fired = {family: world.recorder.faults_fired.get(family, 0) for family in FAMILIES}
    return SimulationResult(
        scenario=name,
        policy=policy,
        seed=seed,
        history=history,
        verdicts=verdicts,
        coverage=reached,
        faults_fired=fired,
        fault_script=tuple(world.plan.fired),
        stats=stats,
        request_types=world.request_types,
        ties=ties,
        index=judged.index if judged is not None else None,
    )
