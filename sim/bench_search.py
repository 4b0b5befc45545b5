"""Search benchmark: time to the first counterexample of each known defect, per explorer and origin.

For each defect of :data:`scenarios.known_defects.KNOWN_DEFECTS` (in its defective policy and
flags) and each of two origins, the *catalogue* scenario the entry names and ``default``, with
only the defect's fault families allowed in both, three searches run in this process:

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

import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import given, seed, settings
from hypothesis import strategies as st

from model.errors import LeaselabError
from model.policy import resolve_policy
from scenarios.known_defects import KNOWN_DEFECTS, KnownDefect
from scenarios.schema import Scenario
from scenarios.script import Fault
from scenarios.strategies import schedules
from sim.bench_stats import Median, Speedup, censored_median
from sim.explore.base import Budget, Clock, Target
from sim.explore.exhaustive import ExhaustiveExplorer
from sim.explore.hypo import schedule_horizon
from sim.explore.parallel import ParallelSwarmExplorer
from sim.explore.profiles import without_probabilities
from sim.explore.swarm import SwarmExplorer
from sim.simulate import simulate

__all__ = ["Median", "Speedup", "censored_median", "search_bench", "table"]

DEFAULT_SEEDS = 5
DEFAULT_BUDGET_S = 30.0
SPEEDUP_TARGET = 5.0
MAX_FAULTS_TARGET = 3
FOUND_WITHIN_S = 30.0
HYPOTHESIS_MAX_EXAMPLES = 10**6
HYPOTHESIS_BUDGET_FACTOR = 6.0
MIN_HYPOTHESIS_BUDGET_S = 2.0
EXHAUSTIVE_BOUND = 2
PARALLEL_SIMULATIONS = 400
PARALLEL_TARGET = Target("default", "head")
ORIGINS = ("catalogue", "default")

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


# ---- one defect, the whole catalogue --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OriginBench:
    """One defect from one origin: swarm and hypothesis per seed, exhaustive once."""

    origin: str
    scenario: str
    budget_s: float
    hypothesis_budget_s: float
    swarm: tuple[Run, ...]
    hypothesis: tuple[Run, ...]
    exhaustive: Run

    def median_s(self, runs: Sequence[Run], budget_s: float | None = None) -> Median:
        cap = self.budget_s if budget_s is None else budget_s
        return censored_median([(r.elapsed_s if r.found else cap, r.found) for r in runs])

    @staticmethod
    def median_simulations(runs: Sequence[Run]) -> Median:
        return censored_median([(float(r.simulations), r.found) for r in runs])

    @property
    def speedup(self) -> Speedup:
        return Speedup.of(self.median_s(self.hypothesis, self.hypothesis_budget_s), self.median_s(self.swarm))

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

    @property
    def found_within_30s(self) -> bool:
        """The swarm found it at every seed, each within :data:`FOUND_WITHIN_S` seconds."""
        return all(r.found and r.elapsed_s <= FOUND_WITHIN_S for r in self.swarm)

    def document(self) -> dict[str, Any]:
        ex = self.exhaustive
        return {
            "origin": self.origin,
            "scenario": self.scenario,
            "swarm": {**_side(self, self.swarm, self.budget_s), "max_faults_in_minimal": self.max_faults_in_minimal},
            "hypothesis": {
                **_side(self, self.hypothesis, self.hypothesis_budget_s),
                "budget_s": self.hypothesis_budget_s,
            },
            "exhaustive": {"bound": EXHAUSTIVE_BOUND, "budget_s": self.hypothesis_budget_s, **ex.document()},
            "speedup": self.speedup.json_ratio(),
            "speedup_bound": self.speedup.bound,
            "speedup_simulations": self.speedup_simulations.json_ratio(),
            "speedup_simulations_bound": self.speedup_simulations.bound,
            "meets_5x": self.meets_5x,
            "meets_3_faults": self.meets_3_faults,
            "found_within_30s": self.found_within_30s,
        }


@dataclass(frozen=True, slots=True)
class DefectBench:
    entry: KnownDefect
    budget_s: float
    origins: tuple[OriginBench, ...]

    @property
    def catalogue(self) -> OriginBench:
        return self.origins[0]

    @property
    def from_default(self) -> OriginBench:
        return self.origins[-1]

    @property
    def meets_5x(self) -> bool:
        return all(o.meets_5x for o in self.origins)

    @property
    def meets_3_faults(self) -> bool:
        return self.catalogue.meets_3_faults

    def document(self) -> dict[str, Any]:
        cat = self.catalogue.document()
        return {
            "id": self.entry.id,
            "invariant": self.entry.invariant,
            "families": list(self.entry.families),
            "policy": self.entry.defective_policy,
            "flags": dict(self.entry.defective_flags),
            "origin": cat["origin"],
            "scenario": cat["scenario"],
            **{k: cat[k] for k in ("swarm", "hypothesis", "exhaustive", "speedup", "speedup_bound")},
            **{k: cat[k] for k in ("speedup_simulations", "speedup_simulations_bound")},
            "meets_5x": self.catalogue.meets_5x,
            "meets_3_faults": self.catalogue.meets_3_faults,
            "from_default": self.from_default.document(),
        }


def _side(bench: OriginBench, runs: Sequence[Run], budget_s: float) -> dict[str, Any]:
    seconds, simulations = bench.median_s(runs, budget_s), OriginBench.median_simulations(runs)
    return {
        "median_s": round(seconds.value, 3),
        "median_simulations": simulations.value,
        "median_censored": seconds.censored,
        "found": sum(r.found for r in runs),
        "fixed_also_fails": sum(bool(r.fixed_also_fails) for r in runs),
        "seeds": len(runs),
        "runs": [r.document() for r in runs],
    }


def bench_origin(
    entry: KnownDefect, origin: str, seeds: int, budget_s: float, progress: Progress | None = None
) -> OriginBench:
    """Swarm at every seed, then hypothesis at every seed with a budget of a few swarm medians, then
    exhaustive once."""

    def say(name: str, seed_: int | str, run: Run, budget: float) -> None:
        if progress is not None:
            outcome = f"found after {run.elapsed_s:.2f} s" if run.found else f"not found in {budget:g} s"
            progress(f"{entry.id} {origin:9s} seed {seed_} {name:10s} {outcome}, {run.simulations} simulations")

    swarm_runs = []
    for seed_ in range(seeds):
        swarm_runs.append(swarm_run(entry, seed_, budget_s, origin))
        say("swarm", seed_, swarm_runs[-1], budget_s)
    swarm_median = censored_median([(r.elapsed_s if r.found else budget_s, r.found) for r in swarm_runs]).value
    other_budget_s = min(budget_s, max(MIN_HYPOTHESIS_BUDGET_S, HYPOTHESIS_BUDGET_FACTOR * swarm_median))
    hypothesis_runs = []
    for seed_ in range(seeds):
        hypothesis_runs.append(hypothesis_run(entry, seed_, other_budget_s, origin))
        say("hypothesis", seed_, hypothesis_runs[-1], other_budget_s)
    exhaustive = exhaustive_run(entry, other_budget_s, origin)
    say("exhaustive", "-", exhaustive, other_budget_s)
    scenario = defect_target(entry, origin).scenario_ref
    return OriginBench(
        origin, scenario, budget_s, other_budget_s, tuple(swarm_runs), tuple(hypothesis_runs), exhaustive
    )


def bench_defect(entry: KnownDefect, seeds: int, budget_s: float, progress: Progress | None = None) -> DefectBench:
    """Both origins; when the catalogue's scenario is ``default`` the two are one measurement."""
    catalogue = bench_origin(entry, "catalogue", seeds, budget_s, progress)
    if entry.scenario == "default":
        from_default = OriginBench("default", *_fields_after_origin(catalogue))
    else:
        from_default = bench_origin(entry, "default", seeds, budget_s, progress)
    return DefectBench(entry, budget_s, (catalogue, from_default))


def _fields_after_origin(bench: OriginBench) -> tuple[Any, ...]:
    return (bench.scenario, bench.budget_s, bench.hypothesis_budget_s, bench.swarm, bench.hypothesis, bench.exhaustive)


def search_bench(
    defect_ids: Iterable[str] | None = None,
    seeds: int = DEFAULT_SEEDS,
    budget_s: float = DEFAULT_BUDGET_S,
    progress: Progress | None = None,
    workers: int = 2,
    parallel_simulations: int = PARALLEL_SIMULATIONS,
) -> dict[str, Any]:
    """The benchmark document: one entry per defect, a summary against the targets, and the parallel
    explorer's speed-up over ``workers`` processes."""
    if seeds < 1 or budget_s <= 0:
        raise LeaselabError(
            "the search benchmark needs at least one seed and a positive budget",
            field="--seeds/--budget-s",
            hint="e.g. --seeds 5 --budget-s 30",
        )
    benches = [bench_defect(entry, seeds, budget_s, progress) for entry in select_defects(defect_ids)]
    parallel = parallel_bench(workers, parallel_simulations)
    document: dict[str, Any] = {
        "defects": [b.document() for b in benches],
        "summary": summary(benches, seeds, budget_s),
        "parallel": parallel,
    }
    if progress is not None:
        p = parallel
        progress(f"parallel: {p['simulations']} simulations, 1 worker {p['serial_s']} s, {workers} {p['parallel_s']} s")
    return document


def parallel_bench(workers: int = 2, simulations: int = PARALLEL_SIMULATIONS) -> dict[str, Any]:
    """One fixed swarm search (``default`` under head, every family, ``simulations`` simulations) in one
    process and over ``workers`` processes: the wall-clock speed-up of the search phase (what the workers
    share) and of the whole run (shrinking stays in the coordinator), and whether the two found the same
    invariants (the draws differ: worker streams are their own). On a machine whose cores other jobs
    share, the workers do not get a core each."""
    budget = Budget(seconds=math.inf, simulations=simulations, seed=0)
    clock = Clock()
    cpu = time.process_time()
    serial = SwarmExplorer().explore(PARALLEL_TARGET, budget)
    serial_s = clock.elapsed()
    serial_cpu_s = time.process_time() - cpu
    clock = Clock()
    spread = ParallelSwarmExplorer(workers).explore(PARALLEL_TARGET, budget)
    parallel_s = clock.elapsed()
    serial_search_s, parallel_search_s = serial.extra["search_s"], spread.extra["search_s"]
    return {
        "scenario": PARALLEL_TARGET.scenario_ref,
        "policy": PARALLEL_TARGET.policy_name,
        "simulations": simulations,
        "workers": workers,
        "cpus": os.cpu_count(),
        "serial_s": round(serial_s, 3),
        "parallel_s": round(parallel_s, 3),
        "speedup": round(serial_s / parallel_s, 2) if parallel_s > 0 else None,
        "serial_search_s": serial_search_s,
        "parallel_search_s": parallel_search_s,
        "search_speedup": round(serial_search_s / parallel_search_s, 2) if parallel_search_s > 0 else None,
        "serial_cpu_s": round(serial_cpu_s, 3),
        "serial_search_cpu_s": serial.extra["search_cpu_s"],
        "search_cpu_speedup": round(serial.extra["search_cpu_s"] / max(spread.extra["worker_cpu_s"]), 2),
        "worker_cpu_s": spread.extra["worker_cpu_s"],
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "serial_invariants": sorted({v.invariant for v in serial.violations}),
        "parallel_invariants": sorted({v.invariant for v in spread.violations}),
    }


def summary(benches: Sequence[DefectBench], seeds: int, budget_s: float) -> dict[str, Any]:
    return {
        "defects": len(benches),
        "seeds": seeds,
        "budget_s": budget_s,
        "meets_5x": sum(b.catalogue.meets_5x for b in benches),
        "meets_3_faults": sum(b.meets_3_faults for b in benches),
        "meets_both": sum(b.catalogue.meets_5x and b.meets_3_faults for b in benches),
        "missing_5x": [b.entry.id for b in benches if not b.catalogue.meets_5x],
        "missing_3_faults": [b.entry.id for b in benches if not b.meets_3_faults],
        "from_default_found_within_30s": sum(b.from_default.found_within_30s for b in benches),
        "from_default_missing_30s": [b.entry.id for b in benches if not b.from_default.found_within_30s],
        "from_default_meets_5x": sum(b.from_default.meets_5x for b in benches),
        "from_default_missing_5x": [b.entry.id for b in benches if not b.from_default.meets_5x],
        "swarm_runs_found": sum(r.found for b in benches for o in b.origins for r in o.swarm),
        "hypothesis_runs_found": sum(r.found for b in benches for o in b.origins for r in o.hypothesis),
        "swarm_finds_failing_under_fix": sum(bool(r.fixed_also_fails) for b in benches for r in b.catalogue.swarm),
        "hypothesis_finds_failing_under_fix": sum(
            bool(r.fixed_also_fails) for b in benches for r in b.catalogue.hypothesis
        ),
        "runs": len(benches) * seeds,
        "targets": {
            "speedup": f"swarm at least {SPEEDUP_TARGET:g}x sooner (median wall seconds, hypothesis / swarm)",
            "faults": f"each shrunk swarm counterexample has at most {MAX_FAULTS_TARGET} faults",
            "from_default": f"swarm finds each defect from default within {FOUND_WITHIN_S:g} s at every seed",
        },
        "censoring": (
            f"a swarm run that does not find the defect within {budget_s:g} s counts as {budget_s:g} s; "
            f"hypothesis and exhaustive runs get {HYPOTHESIS_BUDGET_FACTOR:g}x the swarm's median "
            f"(at least {MIN_HYPOTHESIS_BUDGET_S:g} s, at most {budget_s:g} s) and count as that budget "
            "when they do not find it; a median over such runs is a lower bound (median_censored, '>' in "
            "the table); a speed-up is then a bound too (speedup_bound) and meets_5x holds only when proven"
        ),
    }


def table(document: dict[str, Any]) -> list[str]:
    """The document as an aligned text table (a row per defect and origin), a summary and the censoring note."""
    header = ("defect", "origin", "invariant", "swarm s", "sims", "found", "hyp s", "found", "exh s")
    rows = [(*header, "speed-up", "faults", "5x", "<=30s", "fix fails")]
    for d in document["defects"]:
        for origin in (d, d["from_default"]):
            sw, hy, ex = origin["swarm"], origin["hypothesis"], origin["exhaustive"]
            rows.append(
                (
                    d["id"],
                    origin.get("origin", "catalogue") + ":" + (origin.get("scenario") or d.get("scenario", "")),
                    d["invariant"],
                    _mark(sw, f"{sw['median_s']:.2f}"),
                    _mark(sw, f"{sw['median_simulations']:.0f}"),
                    f"{sw['found']}/{sw['seeds']}",
                    _mark(hy, f"{hy['median_s']:.2f}"),
                    f"{hy['found']}/{hy['seeds']}",
                    f"{ex['elapsed_s']:.2f}" if ex["found"] else f">{ex['elapsed_s']:.2f}",
                    _ratio(origin["speedup"], origin["speedup_bound"]),
                    "-" if sw["max_faults_in_minimal"] is None else str(sw["max_faults_in_minimal"]),
                    "yes" if origin["meets_5x"] else "no",
                    "yes" if all(r["found"] and r["elapsed_s"] <= FOUND_WITHIN_S for r in sw["runs"]) else "no",
                    f"s{sw['fixed_also_fails']} h{hy['fixed_also_fails']}",
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    s = document["summary"]
    lines += [
        "",
        f"swarm at least {SPEEDUP_TARGET:g}x sooner (catalogue scenario): {s['meets_5x']}/{s['defects']} defects"
        + (f" (not: {', '.join(s['missing_5x'])})" if s["missing_5x"] else ""),
        f"swarm at least {SPEEDUP_TARGET:g}x sooner (from default): {s['from_default_meets_5x']}/{s['defects']}"
        + (f" (not: {', '.join(s['from_default_missing_5x'])})" if s["from_default_missing_5x"] else ""),
        f"found from default within {FOUND_WITHIN_S:g} s at every seed: "
        f"{s['from_default_found_within_30s']}/{s['defects']}"
        + (f" (not: {', '.join(s['from_default_missing_30s'])})" if s["from_default_missing_30s"] else ""),
        f"each shrunk counterexample <= {MAX_FAULTS_TARGET} faults: {s['meets_3_faults']}/{s['defects']} defects"
        + (f" (not: {', '.join(s['missing_3_faults'])})" if s["missing_3_faults"] else ""),
        f"medians over {s['seeds']} seed(s); speed-up = hypothesis / swarm median wall seconds; exh s = "
        f"exhaustive (bound {EXHAUSTIVE_BOUND}) time to the first violation; 'faults' = the largest shrunk "
        "swarm counterexample over the seeds.",
        "fix fails: of the runs that found it (s = swarm, h = hypothesis), how many failing inputs still "
        "violate the invariant under the defect's fixed policy: another root cause, not (only) this defect.",
        "censored: " + s["censoring"] + ".",
    ]
    p = document.get("parallel")
    if p:
        lines.append(
            f"parallel swarm: {p['simulations']} simulations of {p['scenario']} under {p['policy']}: "
            f"search 1 worker {p['serial_search_s']:.2f} s, {p['workers']} workers {p['parallel_search_s']:.2f} s "
            f"(speed-up {p['search_speedup']}x); with shrinking {p['serial_s']:.2f} s / {p['parallel_s']:.2f} s "
            f"({p['speedup']}x); {p['cpus']} cpus, load average {p['load_average'][0]}; search CPU s: 1 worker "
            f"{p['serial_search_cpu_s']:.2f}, each of {p['workers']}: {p['worker_cpu_s']} "
            f"(x{p['search_cpu_speedup']} on free cores)"
        )
    return lines


def _mark(side: dict[str, Any], text: str) -> str:
    return (">" if side["median_censored"] else "") + text


def _ratio(value: float | None, bound: str) -> str:
    if value is None:
        return "?"
    return {"lower": ">", "upper": "<"}.get(bound, "") + f"{value:.1f}x"
