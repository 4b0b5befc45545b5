"""The explorer interface: a target, a budget, and a report of distinct, shrunk violations.

Distinct means a distinct mechanism (:mod:`sim.explore.discovery`): each registered finding, recorded
non-guarantee or unexplained witness shape is reported once, shrunk while it keeps that mechanism.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from model.policy import Policy, resolve_policy
from register.mechanism import Mechanism, mechanism_of
from scenarios.families import FAMILIES
from scenarios.intensity import Tempo, with_tempo
from scenarios.loader import load_scenario
from scenarios.schema import FaultsModel, Scenario
from scenarios.script import Fault
from sim.explore.costs import is_cost, with_cost
from sim.explore.counterexample import Counterexample
from sim.explore.discovery import mechanism_key
from sim.explore.shrink import ddmin
from sim.world.simulate import SimulationResult, simulate


class NondeterminismError(Exception):
    """A replay of the same inputs gave another history: a harness bug, never a finding."""


@dataclass(frozen=True)
class Target:
    """What to search: a scenario under a policy, with the fault families the search may use."""

    scenario_ref: str
    policy_name: str
    flags: Mapping[str, bool] = field(default_factory=dict)
    families: tuple[str, ...] = FAMILIES
    scenario_override: Scenario | None = None
    cost: str = ""
    """``cost:NAME`` to search for an instance of a cost the report counts (:mod:`sim.explore.costs`)
    as if it were a violated invariant; '' to search for violations."""

    def judged(self, result: SimulationResult) -> SimulationResult:
        """``result`` as this target judges it: with its cost's pseudo-verdict when it names one."""
        return with_cost(result, self.cost) if self.cost else result

    @property
    def scenario(self) -> Scenario:
        return self.scenario_override or load_scenario(self.scenario_ref)

    @property
    def policy(self) -> Policy:
        return resolve_policy(self.policy_name, dict(self.flags))


@dataclass(frozen=True)
class Budget:
    seconds: float = 30.0
    simulations: int | None = None
    seed: int = 0
    max_per_invariant: int = 2
    stop_at_first: bool = False
    shrink_tests: int = 300
    invariants: frozenset[str] | None = None
    """Only violations of these invariants are shrunk, reported and stopped at (None = all)."""
    mechanisms: frozenset[str] | None = None
    """With ``stop_at_first``: stop only at one of these mechanisms (register ids or keys; None = any)."""

    def wants(self, invariant: str) -> bool:
        return self.invariants is None or invariant in self.invariants

    def stops_at(self, key: str) -> bool:
        """Whether meeting the mechanism ``key`` ends a ``stop_at_first`` search."""
        return self.mechanisms is None or key in self.mechanisms


@dataclass(frozen=True)
class Violation:
    invariant: str
    found_after_s: float
    simulations_until_found: int
    counterexample: Counterexample
    signature: tuple[str, ...]
    path: Path | None = None

    @property
    def faults_in_minimal(self) -> int:
        return len(self.counterexample.faults)

    @property
    def mechanism(self) -> str:
        """The shrunk counterexample's mechanism: a register id, or 'unexplained: <witness shape>'."""
        return self.counterexample.mechanism

    @property
    def known(self) -> str:
        """How the terminal names a violation the register explains ('known: F-06', 'non-guarantee:
        NG-identity'), '' for an unexplained one."""
        label = self.mechanism
        if not label or label.startswith("unexplained") or is_cost(label):
            return ""
        return ("non-guarantee: " if label.startswith("NG-") else "known: ") + label


@dataclass
class ExploreReport:
    explorer: str
    target: Target
    simulations: int = 0
    elapsed_s: float = 0.0
    violations: list[Violation] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def document(self) -> dict[str, Any]:
        return {
            "scenario": self.target.scenario_ref,
            "policy": self.target.policy_name,
            "flags": dict(self.target.flags),
            "faults": list(self.target.families),
            "explorer": self.explorer,
            "simulations": self.simulations,
            "elapsed_s": round(self.elapsed_s, 3),
            "violations": [
                {
                    "invariant": v.invariant,
                    "mechanism": v.mechanism,
                    "explained": bool(v.known),
                    "found_after_s": round(v.found_after_s, 3),
                    "simulations_until_found": v.simulations_until_found,
                    "counterexample": str(v.path) if v.path else None,
                    "faults_in_minimal": v.faults_in_minimal,
                    "signature": list(v.signature),
                    "minimal_script": [f.text() for f in v.counterexample.faults],
                    "cuts": [list(c) for c in v.counterexample.cuts],
                }
                for v in self.violations
            ],
            **self.extra,
        }


Progress = Callable[[int, int], None]
"""Called as progress(simulations, violations) after each simulation."""


class Explorer(Protocol):
    name: str

    def explore(
        self, target: Target, budget: Budget, progress: Callable[[int, int], None] | None = None
    ) -> ExploreReport:
        """Search until the budget is spent; report distinct violations, each shrunk."""


def signature(invariant: str, faults: Sequence[Fault]) -> tuple[str, ...]:
    """The root-cause signature of a violation: the invariant and the fault kinds its minimal script needs."""
    return (invariant, *sorted({f"{f.family}/{f.kind}" for f in faults}))


KEEP_MECHANISM = "mechanism"
KEEP_INVARIANT = "invariant"


def mechanism_of_result(result: SimulationResult, invariant: str) -> Mechanism | None:
    """The mechanism of ``result``'s violation of ``invariant`` (None when it does not violate it)."""
    if invariant not in result.violations:
        return None
    if is_cost(invariant):
        return Mechanism(invariant, invariant)
    return mechanism_of(invariant, result.indexed(), result.verdicts[invariant])


def shrink(
    target: Target,
    profile: FaultsModel,
    seed: int,
    invariant: str,
    script: Sequence[Fault],
    *,
    expected_digest: str | None,
    max_tests: int,
    explorer: str,
    tempo: Tempo | None = None,
    keep: str = KEEP_MECHANISM,
) -> tuple[Counterexample, SimulationResult]:
    """Replay ``script`` (must reproduce ``expected_digest``), ddmin it by anchors, and build the
    counterexample from the concrete (indexed) script the minimal anchored run fired.

    ``keep`` says what a smaller script must still show: ``"mechanism"`` (the default) the same
    mechanism as the replay of ``script`` (:func:`register.mechanism.mechanism_of`: the same
    finding or non-guarantee, or for an unexplained violation the same witness shape), so the
    counterexample tells the story that was found; ``"invariant"`` only the same failing invariant,
    which may trade the mechanism for another one that fails it with fewer faults."""
    if keep not in (KEEP_MECHANISM, KEEP_INVARIANT):
        raise ValueError(f"keep must be {KEEP_MECHANISM!r} or {KEEP_INVARIANT!r}, not {keep!r}")
    scenario = with_tempo(target.scenario, tempo).with_faults(profile)
    policy = target.policy
    replay = target.judged(simulate(scenario, policy, seed, script=script))
    if expected_digest is not None and replay.digest != expected_digest:
        raise NondeterminismError(
            f"the fault script of seed {seed} replayed to digest {replay.digest}, not {expected_digest}"
        )
    wanted = mechanism_of_result(replay, invariant) if keep == KEEP_MECHANISM else None

    def shows(result: SimulationResult) -> bool:
        if invariant not in result.violations:
            return False
        return wanted is None or mechanism_of_result(result, invariant) == wanted

    def fails(candidate: Sequence[Fault]) -> bool:
        return shows(target.judged(simulate(scenario, policy, seed, anchored=candidate)))

    minimal, _ = ddmin(script, fails, max_tests=max_tests)
    anchored_run = simulate(scenario, policy, seed, anchored=minimal)
    concrete = anchored_run.fault_script
    final = target.judged(simulate(scenario, policy, seed, script=concrete))
    if final.digest != anchored_run.digest:
        raise NondeterminismError(f"the anchored script of seed {seed} and its concrete replay differ")
    if not shows(final):
        raise NondeterminismError(f"the minimal script of seed {seed} no longer shows its {keep} of {invariant}")
    shown = mechanism_of_result(final, invariant)
    cx = Counterexample(
        scenario=target.scenario_ref,
        policy=target.policy_name,
        seed=seed,
        invariant=invariant,
        digest=final.digest,
        faults=tuple(concrete),
        profile=profile,
        flags=dict(target.flags),
        explorer=explorer,
        tempo=tempo,
        mechanism=shown.label() if shown is not None else "",
    )
    return cx, final


def report_shrunk(
    report: ExploreReport,
    seen: set[str],
    budget: Budget,
    *,
    profile: FaultsModel,
    seed: int,
    invariant: str,
    result: SimulationResult,
    found: tuple[float, int],
    tempo: Tempo | None = None,
) -> bool:
    """Shrink one violation (keeping its mechanism) and add it to ``report`` unless its mechanism was
    already reported (``seen`` holds the keys of :func:`sim.explore.discovery.mechanism_key`)."""
    cx, _ = shrink(
        report.target,
        profile,
        seed,
        invariant,
        result.fault_script,
        expected_digest=result.digest,
        max_tests=budget.shrink_tests,
        explorer=report.explorer,
        tempo=tempo,
    )
    sig = signature(invariant, cx.faults)
    key = mechanism_key(invariant, cx.mechanism)
    if key in seen:
        return False
    seen.add(key)
    report.violations.append(Violation(invariant, found[0], found[1], cx, sig))
    return True


class Clock:
    """Elapsed wall time of a search (the budget), never the simulation's time."""

    def __init__(self) -> None:
        self._start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self._start
