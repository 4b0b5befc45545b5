"""Search benchmark: time to the first counterexample of each known defect, per explorer and origin.

For each defect of the catalogue and each origin (its catalogue scenario, and ``default``), the
swarm and a hand-written Hypothesis test run once per seed and the exhaustive explorer once
(:mod:`sim.bench.search_runs` says what each search is and when it counts as found); medians over
censored runs are lower bounds. ``parallel_bench`` measures the ``--workers`` speed-up of one swarm
search; ``summary`` and ``table`` turn the runs into the document and the text ``leaselab bench
--search`` prints. This module may not know the CLI.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from model.errors import LeaselabError
from register.known_defects import KnownDefect
from sim.bench.defaults import DEFAULT_BUDGET_S, DEFAULT_SEEDS, PARALLEL_SIMULATIONS
from sim.bench.search_runs import (
    EXHAUSTIVE_BOUND,
    Run,
    defect_target,
    exhaustive_run,
    hypothesis_run,
    select_defects,
    swarm_run,
)
from sim.bench.stats import Median, Speedup, censored_median
from sim.explore.base import Budget, Clock, Target
from sim.explore.parallel import ParallelSwarmExplorer
from sim.explore.swarm import SwarmExplorer

__all__ = [
    "DEFAULT_BUDGET_S",
    "DEFAULT_SEEDS",
    "PARALLEL_SIMULATIONS",
    "Median",
    "Speedup",
    "censored_median",
    "planned_searches",
    "search_bench",
    "table",
]

SPEEDUP_TARGET = 5.0
MAX_FAULTS_TARGET = 3
FOUND_WITHIN_S = 30.0
HYPOTHESIS_BUDGET_FACTOR = 6.0
MIN_HYPOTHESIS_BUDGET_S = 2.0
PARALLEL_TARGET = Target("default", "head")
ORIGINS = ("catalogue", "default")

Progress = Callable[[str], None]
"""Called with one line after each search (defect, seed, searcher, outcome)."""


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


def planned_searches(defect_ids: Iterable[str] | None, seeds: int) -> int:
    """How many searches :func:`search_bench` runs (swarm and Hypothesis per seed, exhaustive once, per
    origin; one origin when the catalogue's scenario is ``default``), for a progress count."""
    return sum((1 if entry.scenario == "default" else 2) * (2 * seeds + 1) for entry in select_defects(defect_ids))


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
