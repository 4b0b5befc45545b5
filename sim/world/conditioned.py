"""Prefix-conditioned simulations: replay a history up to a cut, then draw everything after afresh.

A *cut* is a number of history records, ``records`` (up to an instant: :func:`records_before`).
The run starts exactly as the given one (the same seed, the same fault script, the same reversed
same-instant groups), so its first ``records`` records are the given history's; the moment the last
of them is appended, the world switches to its suffix:

- the world's one ``random.Random`` is re-seeded with ``suffix_seed``: every later draw (tool and
  provider latencies, approver delays and answers, fault decisions and their kinds and values) is
  fresh. Every component holds that same object, so re-seeding it in place reaches them all;
- the fault plan leaves script mode for profile mode (:meth:`FaultPlan.follow_profile`): the
  scenario's fault profile (for a counterexample, its file's ``[profile]``: the scenario's faults at
  the counterexample's intensity) decides each later request. The scenario's targeted faults stay
  off, as in script mode: a script holds each targeted fault its history needed, at its place, so
  whether one had struck by the cut is part of the prefix;
- the kernel runs every group of same-instant events, from now on and already queued, in an order
  drawn from the same stream (:meth:`Kernel.shuffle_ties`).

What the world decided before the cut stays decided: a call in flight keeps the duration drawn when
it started, a run not yet arrived keeps its planned arrival, a fault already decided still takes
effect. That is the state of the world at that moment, and the question a curve of these runs
answers (:mod:`sim.explore.causality`) is what happens from that state on. ``records = 0`` keeps
nothing: the whole run is drawn from ``suffix_seed`` (arrivals included), as a suffix is.

The same scenario, policy, seed, script, cut and suffix seed give the same history digest in any
process. Nothing here runs unless asked: ``simulate`` and its digests are untouched (the plan's
profile mode is built by the same code; the kernel observes scheduling only with a TieControl, and a
TieControl with nothing reversed gives simpy's own order).
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from checks.history import Op, OpType
from model.policy import Policy, resolve_policy
from model.requests import Request
from scenarios.schema import FaultsModel, Scenario
from sim.world.faults import Fault
from sim.world.interpreter import World
from sim.world.kernel import TieControl, TieKey
from sim.world.simulate import SimulationResult, _judged, _release, build_world, gc_paused, run_world


@dataclass(frozen=True, slots=True)
class Decided:
    """A fault the plan fired, with the moment it was decided: ``records`` records existed then (a cut
    of ``records`` leaves its decision to the suffix, a cut of ``records + 1`` keeps it)."""

    fault: Fault
    records: int
    time_s: float


def records_before(history: Sequence[Op], time_s: float) -> int:
    """The cut of "the history up to instant ``time_s``": the number of records stamped before it (records
    are appended in time order, so they are the history's first ones)."""
    return bisect_left([op.time_s for op in history], time_s)


def simulate_from(
    scenario: Scenario,
    policy: str | Policy,
    seed: int,
    *,
    script: Sequence[Fault],
    records: int,
    suffix_seed: int,
    flags: Mapping[str, bool | str] | None = None,
    reverse: Sequence[TieKey] = (),
    judge: bool = True,
    shuffle: bool = True,
) -> SimulationResult:
    """The run of ``seed`` with fault ``script`` (and same-instant groups ``reverse`` run backwards) up to
    its first ``records`` history records, then drawn afresh from ``suffix_seed`` (see the module).
    ``shuffle=False`` keeps simpy's own order of same-instant events in the suffix, as a plain run has
    it: the continuation is then a draw of the plain process itself (the splitting estimator's need)."""
    resolved = resolve_policy(policy, flags)
    control = TieControl(reverse=frozenset(reverse))
    with gc_paused():
        if records <= 0:
            world = build_world(scenario, resolved, suffix_seed, [], control)
            world.plan.follow_profile()
            world._decide = world.plan.decider()
            if shuffle:
                world.env.shuffle_ties(world.rng)
        else:
            world = build_world(scenario, resolved, seed, list(script), control)
            _cut_after(world, records, suffix_seed, shuffle)
        run_world(world)
        result = _judged(world, scenario.name, resolved, seed, control, judge)
        _release(world)
        return result


Cut = tuple[int, int]
"""A branch point of :func:`simulate_cuts`: (records kept, suffix seed)."""


def simulate_cuts(
    scenario: Scenario,
    policy: str | Policy,
    seed: int,
    *,
    script: Sequence[Fault],
    cuts: Sequence[Cut],
    suffix_faults: FaultsModel | None = None,
    burst: int = 0,
    flags: Mapping[str, bool | str] | None = None,
    judge: bool = True,
    suffix_for: Callable[[int], FaultsModel] | None = None,
) -> SimulationResult:
    """A branch of a branch: the run of ``seed`` with fault ``script`` up to its first ``cuts[0][0]``
    records, then drawn afresh from ``cuts[0][1]`` in profile mode (``suffix_faults``, default the
    scenario's own profile), up to ``cuts[1][0]`` records, then afresh from ``cuts[1][1]``, and so on
    (the guided explorer's footholds, :mod:`sim.explore.footholds`); with ``burst`` > 0 the suffix
    profile holds for that many requests after each cut, then the scenario's own. Unlike :func:`simulate_from`, the
    scenario's targeted faults still ahead at the first cut fire in the suffix, at the occurrence the
    scenario names (:meth:`FaultPlan.count_targeted`), and simpy's own order of same-instant events is
    kept: a suffix is then a run of the plain process from that state, at the suffix's fault rates.
    With ``suffix_for``, each cut's suffix profile is ``suffix_for(its suffix seed)`` instead (a guided
    branch decides the request after each cut by what its chain needs there, and says so in the seed).
    The same arguments give the same digest in any process; a cut at or below the one before it is
    refused."""
    if not cuts:
        raise ValueError("simulate_cuts needs at least one cut (use simulate for none)")
    marks = [records for records, _ in cuts]
    if marks[0] < 1 or any(b <= a for a, b in itertools.pairwise(marks)):
        raise ValueError(f"cuts must be positive and increasing, not {marks}")
    resolved = resolve_policy(policy, flags)
    control = TieControl()
    with gc_paused():
        world = build_world(scenario, resolved, seed, list(script), control)
        plan = world.plan
        if suffix_for is not None:
            suffix_faults = suffix_for(cuts[0][1])
        plan.count_targeted(scenario.script, suffix_faults or scenario.faults, burst)
        recorder, rng = world.recorder, world.rng
        inner_add = recorder.add
        pending = list(cuts)

        def add(process: str, op: str, run: str, type_: OpType, value: dict[str, Any]) -> int:
            index = inner_add(process, op, run, type_, value)
            while pending and index + 1 >= pending[0][0]:
                _, suffix_seed = pending.pop(0)
                rng.seed(suffix_seed)
                if suffix_for is not None:
                    plan.suffix_faults = suffix_for(suffix_seed)
                plan.follow_profile()
            if not pending:
                recorder.add = inner_add
            return index

        world._decide = plan.decide
        recorder.add = add
        run_world(world)
        result = _judged(world, scenario.name, resolved, seed, control, judge)
        _release(world)
        return result


def decisions(
    scenario: Scenario,
    policy: str | Policy,
    seed: int,
    *,
    script: Sequence[Fault],
    flags: Mapping[str, bool | str] | None = None,
    reverse: Sequence[TieKey] = (),
) -> tuple[SimulationResult, list[Decided]]:
    """Run the given history once (as :func:`simulate_from` replays its prefix) and say when each fault
    it fired was decided: the cuts just before and just after each one."""
    resolved = resolve_policy(policy, flags)
    control = TieControl(reverse=frozenset(reverse))
    decided: list[Decided] = []
    with gc_paused():
        world = build_world(scenario, resolved, seed, list(script), control)
        inner, history, env = world._decide, world.recorder.history, world.env

        def decide(index: int, request: Request, process_kind: str) -> Fault | None:
            fault = inner(index, request, process_kind)
            if fault is not None:
                decided.append(Decided(fault, len(history), env.now))
            return fault

        world._decide = decide
        run_world(world)
        result = _judged(world, scenario.name, resolved, seed, control, True)
        _release(world)
    return result, decided


def _cut_after(world: World, records: int, suffix_seed: int, shuffle: bool = True) -> None:
    """Switch ``world`` to its suffix the moment its ``records``-th record is appended.

    One ``add`` can append more than one record: a reaper tick's held invoke and read go first
    (:meth:`Recorder.open_tick`), so the switch comes at the first ``add`` that reaches ``records``."""
    recorder, plan, env, rng = world.recorder, world.plan, world.env, world.rng
    inner_add = recorder.add

    def add(process: str, op: str, run: str, type_: OpType, value: dict[str, Any]) -> int:
        index = inner_add(process, op, run, type_, value)
        if index + 1 >= records:
            recorder.add = inner_add
            rng.seed(suffix_seed)
            plan.follow_profile()
            if shuffle:
                env.shuffle_ties(rng)
        return index

    world._decide = plan.decide  # a script-mode plan's own decider: it follows the switch of mode
    recorder.add = add
