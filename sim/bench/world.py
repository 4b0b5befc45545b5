"""Benchmark of the world: simulations per second, simpy events per second against raw simpy, memory.

Everything one ``leaselab bench`` reports is measured in one process, one after the other, so
the shared machine's noise affects every side alike; the throughput targets are ratios read from
that one run:

- ``default`` simulations per second against the figure measured before the speed work
  (:data:`BEFORE`), both as is and normalised by the raw simpy rate of each run (the
  normalised one is the fair comparison across runs on a noisy machine);
- ``single_run`` simulations per second on one core;
- simpy events per second inside ``simulate`` on ``default`` against raw simpy's bare-timeout rate;
- memory per simulation over many simulations in one process (resident set size, sampled).

The layer targets are read from the same run (:func:`layer_targets`): the layer table's world +
judge against runtime + simpy per ``default`` simulation, and ``single_run`` judged per second.

Rates are CPU-time rates of this process (``time.process_time``), i.e. per core.

It knows only ``simulate`` and the scenario loader, never the CLI.
"""

from __future__ import annotations

import gc
import os
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import simpy

from scenarios.loader import load_scenario
from sim.bench.defaults import MEMORY_SIMULATIONS
from sim.bench.layers import layer_budget
from sim.world.simulate import simulate

STANDARD_WORKLOAD = "single_run"
WORKLOADS = ("default", "single_run")

BEFORE: dict[str, dict[str, float]] = {
    "default": {"simulations_per_s": 112.2, "raw_simpy_events_per_s": 1_963_829.2, "ratio_to_raw_simpy": 0.0319},
    "single_run": {"simulations_per_s": 1294.6, "raw_simpy_events_per_s": 1_988_217.3, "ratio_to_raw_simpy": 0.0143},
}
"""``leaselab bench --json`` before the speed work (the tree and the run: benchmarks/PROFILE.md)."""

LAYER_SIMULATIONS = 60
"""Profiled simulations of ``default`` for the layer shares (single_run: ten times as many)."""

Progress = Callable[[str, int, int], None]
"""progress(step, done, total): simulations of a step, reported outside every timed loop (at its ends),
and every :data:`MEMORY_REPORT_EVERY` simulations of the memory check (which times nothing)."""
MEMORY_REPORT_EVERY = 1000

TARGETS = {
    "default_speedup": 5.0,
    "single_run_simulations_per_s_per_core": 2500.0,
    "ratio_to_raw_simpy": 0.2,
}
"""The throughput targets (ratios against :data:`BEFORE`)."""

LAYER_TARGETS = {
    "world_plus_judge_over_runtime_plus_simpy": 1.0,
    "single_run_judged_simulations_per_s_per_core": 3500.0,
}
"""The layer targets that one run can measure: the world and the judge together cost no more per
``default`` simulation than the runtime and simpy (the layer table), and ``single_run`` judged at
3,500 simulations per second per core. A speed-up against an older tree needs that tree in the same
run: ``benchmarks/ab_world.py`` and ``benchmarks/bench_judge.py --compare``."""


def layer_targets(
    layers: dict[str, Any], single_run_per_s: float, memory_growth_bytes_per_sim: float
) -> dict[str, Any]:
    """The layer targets against this run's figures: each figure, its target and whether it is met."""
    ratio = float(layers["default"]["world_plus_judge_over_runtime_plus_simpy"])
    return {
        "default_world_plus_judge_us": layers["default"]["world_plus_judge_us"],
        "default_runtime_plus_simpy_us": layers["default"]["runtime_plus_simpy_us"],
        "default_world_plus_judge_over_runtime_plus_simpy": ratio,
        "single_run_judged_simulations_per_s_per_core": single_run_per_s,
        "targets": LAYER_TARGETS,
        "met": {
            "world_plus_judge_within_runtime_plus_simpy": ratio
            <= LAYER_TARGETS["world_plus_judge_over_runtime_plus_simpy"],
            "single_run_3500_judged_per_core": single_run_per_s
            >= LAYER_TARGETS["single_run_judged_simulations_per_s_per_core"],
            "memory_flat": abs(memory_growth_bytes_per_sim) < 64,
        },
    }


@dataclass(frozen=True)
class WorldBench:
    """One workload's figures."""

    workload: str
    simulations: int
    simulations_per_s: float
    simulations_per_s_unjudged: float
    simpy_events_per_sim: float
    simpy_events_per_s: float
    simpy_events_dispatched_per_sim: float
    """Of ``simpy_events_per_sim``, the events simpy's queue ran; the rest are waits the kernel took at
    once (``Kernel.advance``: nothing else could run first). Rates use all of them, as before the
    shortcut existed, so that they compare with :data:`BEFORE`."""
    requests_per_s: float
    history_records_per_s: float
    raw_simpy_events_per_s: float
    ratio_to_raw_simpy: float
    memory_growth_bytes_per_sim: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _cpu() -> float:
    """CPU seconds of this process. Rates are per core: on a machine shared by other jobs, wall
    time would count the time they take; both sides of every ratio are measured this way."""
    return time.process_time()


def raw_simpy_rate(events: int = 200_000) -> float:
    """Bare timeouts of one process: the fastest simpy can schedule and run events here."""
    env = simpy.Environment()

    def ticker() -> Any:
        timeout = env.timeout
        for _ in range(events):
            yield timeout(1)

    env.process(ticker())
    start = _cpu()
    env.run()
    return events / (_cpu() - start)


def _rss_bytes() -> int:
    """Resident set size from /proc (Linux); 0 where there is none."""
    try:
        with open(f"/proc/{os.getpid()}/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def memory_growth(workload: str, simulations: int, progress: Progress | None = None) -> dict[str, Any]:
    """Resident memory after the first tenth of ``simulations`` and at the end, and the growth per
    simulation in between: ~0 when nothing accumulates from one simulation to the next."""
    scenario = load_scenario(workload)
    warm = max(1, simulations // 10)
    for seed in range(warm):
        simulate(scenario, "head", seed)
    gc.collect()
    first = _rss_bytes()
    for seed in range(warm, simulations):
        simulate(scenario, "head", seed)
        if progress is not None and seed % MEMORY_REPORT_EVERY == 0:
            progress("memory", seed, simulations)
    gc.collect()
    if progress is not None:
        progress("memory", simulations, simulations)
    last = _rss_bytes()
    return {
        "workload": workload,
        "simulations": simulations,
        "rss_after_first_tenth_bytes": first,
        "rss_at_end_bytes": last,
        "growth_bytes_per_sim": round((last - first) / max(1, simulations - warm), 2),
    }


def traced_growth(workload: str, simulations: int) -> float:
    """Bytes still allocated per simulation after running many (tracemalloc: exact, but slow, so
    for a few hundred simulations; :func:`memory_growth` samples the RSS over many more)."""
    scenario = load_scenario(workload)
    for seed in range(20):
        simulate(scenario, "head", seed)
    gc.collect()
    tracemalloc.start()
    first = tracemalloc.get_traced_memory()[0]
    for seed in range(simulations):
        simulate(scenario, "head", seed)
    gc.collect()
    last = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return round((last - first) / simulations, 1)


def world_bench(workload: str = STANDARD_WORKLOAD, simulations: int = 2000, raw: float | None = None) -> WorldBench:
    scenario = load_scenario(workload)
    simulate(scenario, "head", 0)
    raw = raw_simpy_rate() if raw is None else raw
    events = dispatched = requests = records = 0
    start = _cpu()
    for seed in range(simulations):
        result = simulate(scenario, "head", seed)
        events += result.stats["simpy_events"]
        dispatched += result.stats["simpy_events_dispatched"]
        requests += result.stats["requests"]
        records += result.stats["history_records"]
    judged_s = _cpu() - start
    start = _cpu()
    for seed in range(simulations):
        simulate(scenario, "head", seed, judge=False)
    unjudged_s = _cpu() - start
    events_per_s = events / judged_s
    growth = traced_growth(workload, min(simulations, 300))
    return WorldBench(
        workload=workload,
        simulations=simulations,
        simulations_per_s=round(simulations / judged_s, 1),
        simulations_per_s_unjudged=round(simulations / unjudged_s, 1),
        simpy_events_per_sim=round(events / simulations, 2),
        simpy_events_per_s=round(events_per_s, 1),
        simpy_events_dispatched_per_sim=round(dispatched / simulations, 2),
        requests_per_s=round(requests / judged_s, 1),
        history_records_per_s=round(records / judged_s, 1),
        raw_simpy_events_per_s=round(raw, 1),
        ratio_to_raw_simpy=round(events_per_s / raw, 4),
        memory_growth_bytes_per_sim=growth,
    )


def targets_bench(
    simulations: int = 2000, memory_simulations: int = MEMORY_SIMULATIONS, progress: Progress | None = None
) -> dict[str, Any]:
    """Both workloads and the memory check in one run, with the targets as ratios.

    ``simulations`` is for single_run; default runs a tenth as many (it is ~10x longer).
    """
    tell = progress or (lambda step, done, total: None)
    raw = raw_simpy_rate()
    default_simulations = max(10, simulations // 10)
    tell("default", 0, default_simulations)
    default = world_bench("default", default_simulations, raw)
    tell("default", default_simulations, default_simulations)
    tell("single_run", 0, simulations)
    single = world_bench("single_run", simulations, raw)
    tell("single_run", simulations, simulations)
    memory = memory_growth(STANDARD_WORKLOAD, memory_simulations, progress)
    before = BEFORE["default"]
    speedup = default.simulations_per_s / before["simulations_per_s"]
    normalised = (default.simulations_per_s / raw) / (before["simulations_per_s"] / before["raw_simpy_events_per_s"])
    ratios = {
        "default_speedup_vs_before": round(speedup, 2),
        "default_speedup_vs_before_normalised_by_raw_simpy": round(normalised, 2),
        "single_run_simulations_per_s_per_core": single.simulations_per_s,
        "single_run_speedup_vs_before": round(single.simulations_per_s / BEFORE["single_run"]["simulations_per_s"], 2),
        "default_events_per_s_over_raw_simpy": default.ratio_to_raw_simpy,
        "memory_growth_bytes_per_sim": memory["growth_bytes_per_sim"],
    }
    met = {
        "default_5x": normalised >= TARGETS["default_speedup"],
        "single_run_2500_per_core": single.simulations_per_s >= TARGETS["single_run_simulations_per_s_per_core"],
        "events_one_fifth_of_raw": default.ratio_to_raw_simpy >= TARGETS["ratio_to_raw_simpy"],
        "memory_flat": abs(memory["growth_bytes_per_sim"]) < 64,
    }
    # The time budget each target leaves one simulation, next to what its layers cost (bench_layers).
    target_rate = TARGETS["default_speedup"] * before["simulations_per_s"] * raw / before["raw_simpy_events_per_s"]
    default_budget_us = 1e6 / target_rate
    single_budget_us = 1e6 / TARGETS["single_run_simulations_per_s_per_core"]
    profiled = min(LAYER_SIMULATIONS, max(5, simulations // 30))
    layers = {
        "default": layer_budget("default", profiled, 1e6 / default.simulations_per_s, default_budget_us),
        "single_run": layer_budget("single_run", profiled * 10, 1e6 / single.simulations_per_s, single_budget_us),
    }
    return {
        "raw_simpy_events_per_s": round(raw, 1),
        "default": default.as_dict(),
        "single_run": single.as_dict(),
        "memory": memory,
        "before": BEFORE,
        "ratios": ratios,
        "targets": TARGETS,
        "met": met,
        "layers": layers,
        "layer_targets": layer_targets(layers, single.simulations_per_s, memory["growth_bytes_per_sim"]),
    }
