"""Benchmarks of the world: simulations per second, simpy events per second, raw simpy rate, memory.

Ratios are measured in one process, one after the other, so the shared machine's
noise affects both sides alike. Absolute figures are for the record only.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from dataclasses import asdict, dataclass
from typing import Any

import simpy

from scenarios.loader import load_scenario
from sim.simulate import simulate

STANDARD_WORKLOAD = "single_run"


@dataclass(frozen=True)
class WorldBench:
    workload: str
    simulations: int
    simulations_per_s: float
    simulations_per_s_unjudged: float
    simpy_events_per_sim: float
    simpy_events_per_s: float
    requests_per_s: float
    history_records_per_s: float
    raw_simpy_events_per_s: float
    ratio_to_raw_simpy: float
    memory_growth_bytes_per_sim: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def raw_simpy_rate(events: int = 200_000) -> float:
    """Bare timeouts of one process: the fastest simpy can schedule and run events here."""
    env = simpy.Environment()

    def ticker() -> Any:
        timeout = env.timeout
        for _ in range(events):
            yield timeout(1)

    env.process(ticker())
    start = time.perf_counter()
    env.run()
    return events / (time.perf_counter() - start)


def _memory_growth(workload: str, simulations: int) -> float:
    """Bytes still allocated per simulation after running many: ~0 when nothing accumulates."""
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
    return (last - first) / simulations


def world_bench(workload: str = STANDARD_WORKLOAD, simulations: int = 2000) -> WorldBench:
    scenario = load_scenario(workload)
    simulate(scenario, "head", 0)
    raw = raw_simpy_rate()
    events = requests = records = 0
    start = time.perf_counter()
    for seed in range(simulations):
        result = simulate(scenario, "head", seed)
        events += result.stats["simpy_events"]
        requests += result.stats["requests"]
        records += result.stats["history_records"]
    judged_s = time.perf_counter() - start
    start = time.perf_counter()
    for seed in range(simulations):
        simulate(scenario, "head", seed, judge=False)
    unjudged_s = time.perf_counter() - start
    events_per_s = events / judged_s
    return WorldBench(
        workload=workload,
        simulations=simulations,
        simulations_per_s=round(simulations / judged_s, 1),
        simulations_per_s_unjudged=round(simulations / unjudged_s, 1),
        simpy_events_per_sim=round(events / simulations, 2),
        simpy_events_per_s=round(events_per_s, 1),
        requests_per_s=round(requests / judged_s, 1),
        history_records_per_s=round(records / judged_s, 1),
        raw_simpy_events_per_s=round(raw, 1),
        ratio_to_raw_simpy=round(events_per_s / raw, 4),
        memory_growth_bytes_per_sim=round(_memory_growth(workload, min(simulations, 300)), 1),
    )
