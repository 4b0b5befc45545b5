"""Search benchmark: time to the first counterexample of each known defect, swarm against a hand-written test.

For each defect of :data:`scenarios.known_defects.KNOWN_DEFECTS` and each seed, two searches run
one after the other in this process (so the shared machine's noise affects both alike), each
with the same wall-clock budget:

swarm
    :class:`sim.explore.swarm.SwarmExplorer` on the defect's target (its scenario, defective
    policy and flags, and only its fault families). It counts as found at the first *search*
    simulation whose history violates the defect's invariant. The defective presets violate other
    invariants too (adr-112 and adr-122 carry KB-10), so the benchmark runs the explorer with
    ``Budget(invariants={the defect's invariant}, stop_at_first=True)``: other
    invariants' violations are ignored, and the time and simulation count are those at which the
    explorer found the violation, before it shrank it; the shrink time is reported apart.

hypothesis
    What a user would write by hand: ``@given(uniform_schedules(horizon))`` with
    ``settings(max_examples=10**6, deadline=None, database=None, derandomize=False)`` and
    ``@seed(i)``; each example runs the scenario without its probabilistic faults in script mode
    and fails on the defect's invariant. Every family at once, no profile, no ``target()``. The
    clock stops at the first failing example, which ends the run at once (a ``BaseException``
    Hypothesis does not treat as a test failure), so Hypothesis never shrinks.

A run that does not find the defect within the budget counts as the budget (censored); a median
over censored runs is a lower bound, shown with ``>``. "Found" means the defect's invariant is
violated, whatever broke it; as a diagnostic (outside the clock) each first failing input is
replayed as a fault script under the defect's *fixed* policy, and ``fixed_also_fails`` counts the
finds that still violate the invariant there: another root cause, not (only) this defect.
This module may not know the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import given, seed, settings

from model.errors import LeaselabError
from model.policy import resolve_policy
from scenarios.known_defects import KNOWN_DEFECTS, KnownDefect
from scenarios.schema import Scenario
from scenarios.script import Fault
from scenarios.strategies import uniform_schedules
from sim.explore.base import Budget, Clock, Target
from sim.explore.hypo import schedule_horizon
from sim.explore.profiles import without_probabilities
from sim.explore.swarm import SwarmExplorer
from sim.simulate import simulate

DEFAULT_SEEDS = 5
DEFAULT_BUDGET_S = 60.0
SPEEDUP_TARGET = 5.0
MAX_FAULTS_TARGET = 3
HYPOTHESIS_MAX_EXAMPLES = 10**6

Progress = Callable[[str], None]
"""Called with one line after each search (defect, seed, searcher, outcome)."""


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


@dataclass(frozen=True, slots=True)
class Median:
    """A median over runs; ``censored`` when a middle run did not find the defect (a lower bound)."""

    value: float
    censored: bool


def censored_median(values: Sequence[tuple[float, bool]]) -> Median:
    """The median of ``(value, found)`` pairs, sorting the runs that did not find it last."""
    if not values:
        raise ValueError("a median needs at least one run")
    ordered = sorted(values, key=lambda pair: (not pair[1], pair[0]))
    n = len(ordered)
    middle = ordered[(n - 1) // 2 : n // 2 + 1]
    return Median(sum(v for v, _ in middle) / len(middle), any(not found for _, found in middle))


@dataclass(frozen=True, slots=True)
class Speedup:
    """hypothesis / swarm; ``bound`` is ``exact``, ``lower`` (hypothesis censored), ``upper`` (swarm
    censored) or ``unknown`` (both censored)."""

    ratio: float
    bound: str

    @staticmethod
    def of(hypothesis: Median, swarm: Median) -> Speedup:
        ratio = hypothesis.value / swarm.value if swarm.value > 0 else math.inf
        if hypothesis.censored and swarm.censored:
            return Speedup(ratio, "unknown")
        if hypothesis.censored:
            return Speedup(ratio, "lower")
        if swarm.censored:
            return Speedup(ratio, "upper")
        return Speedup(ratio, "exact")

    def at_least(self, target: float) -> bool:
        """Proven at least ``target``: exact, or a lower bound already past it."""
        return self.bound in ("exact", "lower") and self.ratio >= target

    def json_ratio(self) -> float | None:
        return round(self.ratio, 2) if math.isfinite(self.ratio) and self.bound != "unknown" else None


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
            file="scenarios/known_defects.py",
            field="--defect",
            hint="valid: " + ", ".join(known),
        )
    return [d for d in KNOWN_DEFECTS if d.id in wanted]


def defect_target(entry: KnownDefect) -> Target:
    return Target(entry.scenario, entry.defective_policy, dict(entry.defective_flags), entry.families)


def fixed_also_fails(entry: KnownDefect, scenario: Scenario, world_seed: int, script: Sequence[Fault]) -> bool:
    """Whether the failing input, replayed as a fault script under the fix, still violates the invariant:
    then the search found the invariant broken by another root cause, not (only) by this defect."""
    fixed = resolve_policy(entry.fixed_policy, dict(entry.fixed_flags))
    return entry.invariant in simulate(scenario, fixed, world_seed, script=script).violations


# ---- swarm ----------------------------------------------------------------------------------------


def swarm_run(entry: KnownDefect, seed_: int, budget_s: float) -> Run:
    """The swarm explorer until its first violation of ``entry.invariant``, shrunk as it reports it."""
    target_ = defect_target(entry)
    budget = Budget(seconds=budget_s, seed=seed_, stop_at_first=True, invariants=frozenset({entry.invariant}))
    report = SwarmExplorer().explore(target_, budget)
    if not report.violations:
        return Run(False, budget_s, report.simulations)
    found = report.violations[0]
    cx = found.counterexample
    in_fixed = fixed_also_fails(entry, cx.effective_scenario(), cx.seed, list(cx.faults))
    shrink_s = max(0.0, report.elapsed_s - found.found_after_s)
    return Run(True, found.found_after_s, found.simulations_until_found, len(cx.faults), shrink_s, in_fixed)


# ---- hand-written Hypothesis test -----------------------------------------------------------------


class _HypothesisStop(BaseException):
    """Ends a Hypothesis run at once. Not an ``Exception``: Hypothesis neither shrinks nor reports it."""


class _HypothesisFound(_HypothesisStop):
    def __init__(self, at_s: float, schedule: list[Fault]) -> None:
        super().__init__(at_s)
        self.at_s = at_s
        self.schedule = schedule


class _HypothesisOutOfBudget(_HypothesisStop):
    pass


def hypothesis_run(entry: KnownDefect, seed_: int, budget_s: float) -> Run:
    """A plain ``@given`` over uniform schedules of every family, until the first failing example."""
    target_ = defect_target(entry)
    scenario = target_.scenario.with_faults(without_probabilities(target_.scenario.faults))
    policy = target_.policy
    horizon = schedule_horizon(target_)
    count = 0
    clock = Clock()

    @settings(max_examples=HYPOTHESIS_MAX_EXAMPLES, deadline=None, database=None, derandomize=False)
    @seed(seed_)
    @given(uniform_schedules(horizon))
    def check(schedule: list[Fault]) -> None:
        nonlocal count
        if clock.elapsed() >= budget_s:
            raise _HypothesisOutOfBudget
        result = simulate(scenario, policy, seed_, script=schedule)
        count += 1
        if entry.invariant in result.violations:
            raise _HypothesisFound(clock.elapsed(), schedule)

    clock = Clock()
    try:
        check()
    except _HypothesisFound as found:
        return Run(True, found.at_s, count, fixed_also_fails=fixed_also_fails(entry, scenario, seed_, found.schedule))
    except _HypothesisOutOfBudget:
        pass
    return Run(False, budget_s, count)


# ---- one defect, the whole catalogue --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DefectBench:
    entry: KnownDefect
    budget_s: float
    swarm: tuple[Run, ...]
    hypothesis: tuple[Run, ...]

    def median_s(self, runs: Sequence[Run]) -> Median:
        return censored_median([(r.elapsed_s if r.found else self.budget_s, r.found) for r in runs])

    @staticmethod
    def median_simulations(runs: Sequence[Run]) -> Median:
        return censored_median([(float(r.simulations), r.found) for r in runs])

    @property
    def speedup(self) -> Speedup:
        return Speedup.of(self.median_s(self.hypothesis), self.median_s(self.swarm))

    @property
    def speedup_simulations(self) -> Speedup:
        return Speedup.of(self.median_simulations(self.hypothesis), self.median_simulations(self.swarm))

    @property
    def max_faults_in_minimal(self) -> int | None:
        counts = [r.faults_in_minimal for r in self.swarm if r.faults_in_minimal is not None]
        return max(counts) if counts else None

    @property
    def meets_5x(self) -> bool:
        return self.speedup.at_least(SPEEDUP_TARGET)

    @property
    def meets_3_faults(self) -> bool:
        """Every seed found it and each shrunk counterexample has at most three faults."""
        most = self.max_faults_in_minimal
        return all(r.found for r in self.swarm) and most is not None and most <= MAX_FAULTS_TARGET

    def document(self) -> dict[str, Any]:
        return {
            "id": self.entry.id,
            "invariant": self.entry.invariant,
            "families": list(self.entry.families),
            "swarm": {
                **_side(self, self.swarm),
                "max_faults_in_minimal": self.max_faults_in_minimal,
            },
            "hypothesis": _side(self, self.hypothesis),
            "speedup": self.speedup.json_ratio(),
            "speedup_bound": self.speedup.bound,
            "speedup_simulations": self.speedup_simulations.json_ratio(),
            "speedup_simulations_bound": self.speedup_simulations.bound,
            "meets_5x": self.meets_5x,
            "meets_3_faults": self.meets_3_faults,
        }


def _side(bench: DefectBench, runs: Sequence[Run]) -> dict[str, Any]:
    seconds, simulations = bench.median_s(runs), DefectBench.median_simulations(runs)
    return {
        "median_s": round(seconds.value, 3),
        "median_simulations": simulations.value,
        "median_censored": seconds.censored,
        "found": sum(r.found for r in runs),
        "fixed_also_fails": sum(bool(r.fixed_also_fails) for r in runs),
        "seeds": len(runs),
        "runs": [r.document() for r in runs],
    }


def bench_defect(entry: KnownDefect, seeds: int, budget_s: float, progress: Progress | None = None) -> DefectBench:
    """Per seed, the swarm then the hand-written test (paired in time, so noise hits both alike)."""
    swarm_runs: list[Run] = []
    hypothesis_runs: list[Run] = []
    for seed_ in range(seeds):
        for name, search, runs in (("swarm", swarm_run, swarm_runs), ("hypothesis", hypothesis_run, hypothesis_runs)):
            run = search(entry, seed_, budget_s)
            runs.append(run)
            if progress is not None:
                outcome = f"found after {run.elapsed_s:.2f} s" if run.found else f"not found in {budget_s:g} s"
                progress(f"{entry.id} seed {seed_} {name:10s} {outcome}, {run.simulations} simulations")
    return DefectBench(entry, budget_s, tuple(swarm_runs), tuple(hypothesis_runs))


def search_bench(
    defect_ids: Iterable[str] | None = None,
    seeds: int = DEFAULT_SEEDS,
    budget_s: float = DEFAULT_BUDGET_S,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The benchmark document: one entry per defect and a summary against the two targets."""
    if seeds < 1 or budget_s <= 0:
        raise LeaselabError(
            "the search benchmark needs at least one seed and a positive budget",
            field="--seeds/--budget-s",
            hint="e.g. --seeds 5 --budget-s 60",
        )
    benches = [bench_defect(entry, seeds, budget_s, progress) for entry in select_defects(defect_ids)]
    return {"defects": [b.document() for b in benches], "summary": summary(benches, seeds, budget_s)}


def summary(benches: Sequence[DefectBench], seeds: int, budget_s: float) -> dict[str, Any]:
    return {
        "defects": len(benches),
        "seeds": seeds,
        "budget_s": budget_s,
        "meets_5x": sum(b.meets_5x for b in benches),
        "meets_3_faults": sum(b.meets_3_faults for b in benches),
        "meets_both": sum(b.meets_5x and b.meets_3_faults for b in benches),
        "missing_5x": [b.entry.id for b in benches if not b.meets_5x],
        "missing_3_faults": [b.entry.id for b in benches if not b.meets_3_faults],
        "swarm_runs_found": sum(r.found for b in benches for r in b.swarm),
        "hypothesis_runs_found": sum(r.found for b in benches for r in b.hypothesis),
        "swarm_finds_failing_under_fix": sum(bool(r.fixed_also_fails) for b in benches for r in b.swarm),
        "hypothesis_finds_failing_under_fix": sum(bool(r.fixed_also_fails) for b in benches for r in b.hypothesis),
        "runs": len(benches) * seeds,
        "targets": {
            "speedup": f"swarm at least {SPEEDUP_TARGET:g}x sooner (median wall seconds, hypothesis / swarm)",
            "faults": f"each shrunk swarm counterexample has at most {MAX_FAULTS_TARGET} faults",
        },
        "censoring": (
            f"a run that does not find the defect within {budget_s:g} s counts as {budget_s:g} s; "
            "a median over such runs is a lower bound (median_censored, '>' in the table); a speed-up "
            "is then a bound too (speedup_bound) and meets_5x holds only when proven"
        ),
    }


def table(document: dict[str, Any]) -> list[str]:
    """The document as an aligned text table, a summary and the censoring note."""
    header = ("defect", "invariant", "swarm s", "sims", "found", "hyp s", "sims", "found", "speed-up", "by sims")
    rows = [(*header, "faults", "5x", "<=3", "fix fails")]
    for d in document["defects"]:
        sw, hy = d["swarm"], d["hypothesis"]
        rows.append(
            (
                d["id"],
                d["invariant"],
                _mark(sw, f"{sw['median_s']:.2f}"),
                _mark(sw, f"{sw['median_simulations']:.0f}"),
                f"{sw['found']}/{sw['seeds']}",
                _mark(hy, f"{hy['median_s']:.2f}"),
                _mark(hy, f"{hy['median_simulations']:.0f}"),
                f"{hy['found']}/{hy['seeds']}",
                _ratio(d["speedup"], d["speedup_bound"]),
                _ratio(d["speedup_simulations"], d["speedup_simulations_bound"]),
                "-" if sw["max_faults_in_minimal"] is None else str(sw["max_faults_in_minimal"]),
                "yes" if d["meets_5x"] else "no",
                "yes" if d["meets_3_faults"] else "no",
                f"s{sw['fixed_also_fails']} h{hy['fixed_also_fails']}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    s = document["summary"]
    lines += [
        "",
        f"swarm at least {SPEEDUP_TARGET:g}x sooner: {s['meets_5x']}/{s['defects']} defects"
        + (f" (not: {', '.join(s['missing_5x'])})" if s["missing_5x"] else ""),
        f"each shrunk counterexample <= {MAX_FAULTS_TARGET} faults: {s['meets_3_faults']}/{s['defects']} defects"
        + (f" (not: {', '.join(s['missing_3_faults'])})" if s["missing_3_faults"] else ""),
        f"medians over {s['seeds']} seed(s); speed-up = hypothesis / swarm median wall seconds ('by sims': "
        "median simulations); 'faults' = the largest shrunk swarm counterexample over the seeds.",
        "fix fails: of the runs that found it (s = swarm, h = hypothesis), how many failing inputs still "
        "violate the invariant under the defect's fixed policy: another root cause, not (only) this defect.",
        "censored: " + s["censoring"] + ".",
    ]
    return lines


def _mark(side: dict[str, Any], text: str) -> str:
    return (">" if side["median_censored"] else "") + text


def _ratio(value: float | None, bound: str) -> str:
    if value is None:
        return "?"
    return {"lower": ">", "upper": "<"}.get(bound, "") + f"{value:.1f}x"
