"""One search of one known defect: the three searchers the search benchmark times, and what they found.

For each defect of :data:`register.known_defects.KNOWN_DEFECTS` (in its defective policy and
flags) and each of two origins, the *catalogue* scenario the entry names and ``default``, with
only the defect's fault families allowed in both, three searches run in this process (the
benchmark itself, :mod:`sim.bench.search`, repeats them over seeds and writes the table):

swarm
    :class:`sim.explore.swarm.SwarmExplorer` (profiles and tempos), once per seed, counting as
    found at the first *search* simulation whose history violates the defect's invariant
    (``Budget(invariants={the invariant}, stop_at_first=True)``: other invariants' violations
    are ignored); shrinking follows the search and its time is reported apart.

hypothesis
    What a user would write by hand: ``@given(world seed, schedules(the defect's families))``
    with ``settings(max_examples=10**6, deadline=None, database=None)`` and ``@seed(i)``; each
    example runs the origin without its probabilistic faults in script mode and fails on the
    defect's invariant; no profile, no ``target()``. The clock stops at the first failing
    example (a ``BaseException``, so Hypothesis never shrinks). Its budget is
    :data:`HYPOTHESIS_BUDGET_FACTOR` times the swarm's median for the same defect and origin
    (at least :data:`MIN_HYPOTHESIS_BUDGET_S`, at most the budget): a run censored there proves
    a speed-up of at least that factor without spending minutes on each.

exhaustive
    :class:`sim.explore.exhaustive.ExhaustiveExplorer` up to :data:`EXHAUSTIVE_BOUND` faults of
    the defect's families (deterministic: once per defect and origin), stopped at the first
    violation of the invariant or at the same budget as hypothesis; "where the bound allows".

A run that does not find the defect within its budget counts as that budget (censored); a median
over censored runs is a lower bound, shown with ``>``. "Found" means the defect's invariant is
violated, whatever broke it; as a diagnostic (outside the clock) each first failing input is
replayed as a fault script under the defect's *fixed* policy, and ``fixed_also_fails`` counts the
finds that still violate the invariant there: another root cause, not (only) this defect.
This module may not know the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import given, seed, settings
from hypothesis import strategies as st

from model.errors import LeaselabError
from model.policy import resolve_policy
from register.known_defects import KNOWN_DEFECTS, KnownDefect
from scenarios.schema import Scenario
from scenarios.script import Fault
from scenarios.strategies import schedules
from sim.explore.base import Budget, Clock, Target
from sim.explore.exhaustive import ExhaustiveExplorer
from sim.explore.hypo import schedule_horizon
from sim.explore.profiles import without_probabilities
from sim.explore.swarm import SwarmExplorer
from sim.world.simulate import simulate

HYPOTHESIS_MAX_EXAMPLES = 10**6
EXHAUSTIVE_BOUND = 2


@dataclass(frozen=True, slots=True)
class Run:
    """One search of one defect with one seed. A censored run (not found) counts as the budget."""

    found: bool
    elapsed_s: float
    simulations: int
    faults_in_minimal: int | None = None
    shrink_s: float | None = None
    fixed_also_fails: bool | None = None

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "found": self.found,
            "elapsed_s": round(self.elapsed_s, 3),
            "simulations": self.simulations,
        }
        if self.faults_in_minimal is not None:
            doc["faults_in_minimal"] = self.faults_in_minimal
        if self.shrink_s is not None:
            doc["shrink_s"] = round(self.shrink_s, 3)
        if self.fixed_also_fails is not None:
            doc["fixed_also_fails"] = self.fixed_also_fails
        return doc


def select_defects(ids: Iterable[str] | None) -> list[KnownDefect]:
    """The catalogue entries named (in catalogue order), or all of them."""
    wanted = list(ids or [])
    if not wanted:
        return list(KNOWN_DEFECTS)
    known = [d.id for d in KNOWN_DEFECTS]
    unknown = [i for i in wanted if i not in known]
    if unknown:
        raise LeaselabError(
            f"unknown known-defect id '{unknown[0]}'",
            file="register/known_defects.py",
            field="--defect",
            hint="valid: " + ", ".join(known),
        )
    return [d for d in KNOWN_DEFECTS if d.id in wanted]


def defect_target(entry: KnownDefect, origin: str = "catalogue") -> Target:
    """The defect in its defective policy, from its catalogue scenario or from ``default``, with only
    its fault families allowed."""
    scenario = entry.scenario if origin == "catalogue" else "default"
    return Target(scenario, entry.defective_policy, dict(entry.defective_flags), entry.families)


def fixed_also_fails(entry: KnownDefect, scenario: Scenario, world_seed: int, script: Sequence[Fault]) -> bool:
    """Whether the failing input, replayed as a fault script under the fix, still violates the invariant:
    then the search found the invariant broken by another root cause, not (only) by this defect."""
    fixed = resolve_policy(entry.fixed_policy, dict(entry.fixed_flags))
    return entry.invariant in simulate(scenario, fixed, world_seed, script=script).violations


# ---- swarm ----------------------------------------------------------------------------------------


def swarm_run(entry: KnownDefect, seed_: int, budget_s: float, origin: str = "catalogue") -> Run:
    """The swarm explorer until its first violation of ``entry.invariant``, shrunk after the search."""
    target_ = defect_target(entry, origin)
    budget = Budget(seconds=budget_s, seed=seed_, stop_at_first=True, invariants=frozenset({entry.invariant}))
    report = SwarmExplorer().explore(target_, budget)
    if not report.violations:
        return Run(False, budget_s, report.simulations)
    found = report.violations[0]
    cx = found.counterexample
    in_fixed = fixed_also_fails(entry, cx.effective_scenario(), cx.seed, list(cx.faults))
    shrink_s = max(0.0, report.elapsed_s - float(report.extra.get("search_s", found.found_after_s)))
    return Run(True, found.found_after_s, found.simulations_until_found, len(cx.faults), shrink_s, in_fixed)


# ---- hand-written Hypothesis test -----------------------------------------------------------------


class _HypothesisStop(BaseException):
    """Ends a Hypothesis run at once. Not an ``Exception``: Hypothesis neither shrinks nor reports it."""


class _HypothesisFound(_HypothesisStop):
    def __init__(self, at_s: float, world_seed: int, schedule: list[Fault]) -> None:
        super().__init__(at_s)
        self.at_s = at_s
        self.world_seed = world_seed
        self.schedule = schedule


class _HypothesisOutOfBudget(_HypothesisStop):
    pass


def hypothesis_run(entry: KnownDefect, seed_: int, budget_s: float, origin: str = "catalogue") -> Run:
    """A plain ``@given`` over a world seed and uniform schedules of the defect's families, until the
    first failing example."""
    target_ = defect_target(entry, origin)
    scenario = target_.scenario.with_faults(without_probabilities(target_.scenario.faults))
    policy = target_.policy
    horizon = schedule_horizon(target_)
    families = list(entry.families)
    plans = schedules(families, horizon) if families else st.just([])
    count = 0
    clock = Clock()

    @settings(max_examples=HYPOTHESIS_MAX_EXAMPLES, deadline=None, database=None, derandomize=False)
    @seed(seed_)
    @given(st.integers(0, 2**32 - 1), plans)
    def check(world_seed: int, schedule: list[Fault]) -> None:
        nonlocal count
        if clock.elapsed() >= budget_s:
            raise _HypothesisOutOfBudget
        result = simulate(scenario, policy, world_seed, script=schedule)
        count += 1
        if entry.invariant in result.violations:
            raise _HypothesisFound(clock.elapsed(), world_seed, schedule)

    clock = Clock()
    try:
        check()
    except _HypothesisFound as found:
        in_fixed = fixed_also_fails(entry, scenario, found.world_seed, found.schedule)
        return Run(True, found.at_s, count, fixed_also_fails=in_fixed)
    except _HypothesisOutOfBudget:
        pass
    return Run(False, budget_s, count)


# ---- exhaustive -----------------------------------------------------------------------------------


def exhaustive_run(entry: KnownDefect, budget_s: float, origin: str = "catalogue") -> Run:
    """Every placement of up to :data:`EXHAUSTIVE_BOUND` faults of the defect's families, level by
    level, until the first violation of the invariant or the budget."""
    explorer = ExhaustiveExplorer(ties=False, deadline_s=budget_s, stop_on=entry.invariant)
    report = explorer.verify(defect_target(entry, origin), EXHAUSTIVE_BOUND)
    at_s = report.found_after_s.get(entry.invariant)
    if at_s is None:
        return Run(False, budget_s, report.schedules)
    cx = dict(report.violations)[entry.invariant]
    return Run(True, at_s, report.schedules, len(cx.faults))
