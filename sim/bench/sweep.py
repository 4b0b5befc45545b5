"""The sweep benchmark: local scaling, the Dask path's overhead, and the coordinator's memory.

Three measurements on the cheapest scenario (``single_run``), each a real sweep into a
temporary directory through :func:`sim.sweep.job.run_job`:

- scaling: simulations per second with 1 and 2 local workers on the same work, and the
  efficiency ``rate(2) / (2 x rate(1))``;
- Dask: a ``distributed.LocalCluster`` (2 worker processes, 1 thread each, bound to 127.0.0.1)
  against the local pool of 2 on the same work; overhead ``time(dask) / time(local) - 1``
  (cluster start-up excluded: a cluster outlives a sweep);
- memory: the coordinator's resident memory sampled after every task over a long sweep, its
  peak, its growth per 1,000 tasks (least squares over the second half) and the extrapolation
  to 1,000,000 simulations. The coordinator must not hold rows, so the growth is near zero.

Ratios measured in one run are what matter on a shared machine; absolute times are noisy.
Knows the sweep job and the optional Dask package; nothing of the CLI.
"""

from __future__ import annotations

import importlib
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from model.errors import LeaselabError
from sim.sweep.config import SweepConfig
from sim.sweep.engine import SweepProgress
from sim.sweep.job import run_job

CHEAPEST = "single_run"
TARGET_EFFICIENCY = 0.85
TARGET_DASK_OVERHEAD = 0.15
TARGET_MEMORY_1M_BYTES = 1 << 30
MILLION = 1_000_000
_PAGE = 4096


def bench_config(simulations: int, seeds_per_task: int, name: str = "bench") -> SweepConfig:
    """One policy (head) x the cheapest scenario x ``simulations`` seeds."""
    return SweepConfig.model_validate(
        {
            "name": name,
            "seeds": simulations,
            "seeds_per_task": seeds_per_task,
            "policy": [{"label": "head", "preset": "head"}],
            "grid": [{"name": "main", "scenarios": [CHEAPEST]}],
        }
    )


def _timed(config: SweepConfig, *, workers: int | None = None, executor: Any = None) -> float:
    with tempfile.TemporaryDirectory(prefix="leaselab-bench-") as tmp:
        result = run_job(config, Path(tmp), workers=workers, executor=executor)
        assert result.progress.simulations == config.seeds, "a benchmark sweep lost simulations"
        return result.elapsed_s


def _cpu() -> tuple[float, float]:
    """(this process's CPU seconds, its reaped children's): workers are reaped when a pool shuts down."""
    t = os.times()
    return t.user + t.system, t.children_user + t.children_system


def scaling(simulations: int, seeds_per_task: int, repeats: int = 2) -> dict[str, Any]:
    """Best of ``repeats`` for 1 and 2 workers, interleaved so drift in the machine's load hits both.

    Wall-clock efficiency needs two otherwise idle cores; on a shared machine it measures the
    other tenants. The CPU figures do not: CPU seconds per 1,000 simulations (workers plus the
    coordinator) with 1 and 2 workers, and their ratio (1.0 = adding a worker costs no extra CPU
    per simulation, i.e. the sweep machinery itself scales).
    """
    config = bench_config(simulations, seeds_per_task)
    _timed(bench_config(2 * seeds_per_task, seeds_per_task), workers=2)  # warm caches and imports
    best = {1: float("inf"), 2: float("inf")}
    cpu = {1: float("inf"), 2: float("inf")}
    coordinator = {1: 0.0, 2: 0.0}
    for _ in range(repeats):
        for workers in (1, 2):
            own0, kids0 = _cpu()
            best[workers] = min(best[workers], _timed(config, workers=workers))
            own1, kids1 = _cpu()
            total = (own1 - own0) + (kids1 - kids0)
            if total < cpu[workers]:
                cpu[workers], coordinator[workers] = total, (own1 - own0) / total if total else 0.0
    rate1, rate2 = simulations / best[1], simulations / best[2]
    efficiency = rate2 / (2 * rate1)
    return {
        "simulations": simulations,
        "seeds_per_task": seeds_per_task,
        "sims_per_s_1_worker": round(rate1, 1),
        "sims_per_s_2_workers": round(rate2, 1),
        "scaling_efficiency": round(efficiency, 3),
        "meets_target": efficiency >= TARGET_EFFICIENCY,
        "target": TARGET_EFFICIENCY,
        "cpu_s_per_1000_sims_1_worker": round(cpu[1] * 1000 / simulations, 3),
        "cpu_s_per_1000_sims_2_workers": round(cpu[2] * 1000 / simulations, 3),
        "cpu_efficiency": round(cpu[1] / cpu[2], 3) if cpu[2] else None,
        "coordinator_cpu_share_2_workers": round(coordinator[2], 3),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def _process_cpu_s() -> float:
    """CPU seconds of the calling process (run on each Dask worker through ``client.run``)."""
    t = os.times()
    return t.user + t.system


def dask_overhead(simulations: int, seeds_per_task: int, repeats: int = 2) -> dict[str, Any]:
    """The same sweep on a LocalCluster of 2 worker processes and on the local pool of 2.

    Besides wall time, the CPU both paths spend per simulation (Dask: its workers, plus this
    process, which hosts the scheduler and the coordinator; local: the pool's workers plus the
    coordinator), which a shared machine's scheduling does not distort.
    """
    try:
        distributed: Any = importlib.import_module("distributed")  # optional and untyped
    except ImportError:
        raise LeaselabError(
            "dask.distributed is not installed", field="--sweep", hint="pip install 'leaselab[dask]'"
        ) from None
    config = bench_config(simulations, seeds_per_task)
    warm = bench_config(2 * seeds_per_task, seeds_per_task)
    with (
        distributed.LocalCluster(
            host="127.0.0.1", n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        _timed(warm, executor=client)  # import the simulation modules on the workers
        _timed(warm, workers=2)
        dask_s = local_s = dask_cpu = local_cpu = float("inf")
        for _ in range(repeats):
            own0, workers0 = _cpu()[0], sum(client.run(_process_cpu_s).values())
            dask_s = min(dask_s, _timed(config, executor=client))
            own1, workers1 = _cpu()[0], sum(client.run(_process_cpu_s).values())
            dask_cpu = min(dask_cpu, (own1 - own0) + (workers1 - workers0))
            own0, kids0 = _cpu()
            local_s = min(local_s, _timed(config, workers=2))
            own1, kids1 = _cpu()
            local_cpu = min(local_cpu, (own1 - own0) + (kids1 - kids0))
    overhead = dask_s / local_s - 1
    return {
        "simulations": simulations,
        "seeds_per_task": seeds_per_task,
        "sims_per_s_local_pool": round(simulations / local_s, 1),
        "sims_per_s_dask": round(simulations / dask_s, 1),
        "dask_overhead": round(overhead, 3),
        "meets_target": overhead <= TARGET_DASK_OVERHEAD,
        "target": TARGET_DASK_OVERHEAD,
        "cpu_s_per_1000_sims_local_pool": round(local_cpu * 1000 / simulations, 3),
        "cpu_s_per_1000_sims_dask": round(dask_cpu * 1000 / simulations, 3),
        "dask_cpu_overhead": round(dask_cpu / local_cpu - 1, 3) if local_cpu else None,
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * _PAGE


def peak_rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _slope(points: list[tuple[int, int]]) -> float:
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / var if var else 0.0


def memory(
    simulations: int,
    seeds_per_task: int,
    workers: int = 2,
    out: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Resident memory of this process (the coordinator) after every finished task."""
    config = bench_config(simulations, seeds_per_task, name="bench-memory")
    samples: list[tuple[int, int]] = []
    started = time.perf_counter()
    last = [started]

    def sample(p: SweepProgress) -> None:
        samples.append((p.done, rss_bytes()))
        now = time.perf_counter()
        if progress is not None and now - last[0] >= 10:
            last[0] = now
            progress(f"memory sweep: {p.simulations}/{p.simulations_total} simulations, rss {rss_bytes() >> 20} MiB")

    before = rss_bytes()
    with tempfile.TemporaryDirectory(prefix="leaselab-bench-mem-") as tmp:
        where = out or Path(tmp)
        result = run_job(config, where, workers=workers, on_progress=sample)
    tasks = result.progress.total
    half = samples[len(samples) // 2 :]
    per_task = _slope(half)
    end = samples[-1][1] if samples else before
    peak = max([before, *(rss for _, rss in samples)])
    tasks_1m = MILLION / seeds_per_task
    extrapolated = end + max(per_task, 0.0) * (tasks_1m - tasks)
    return {
        "simulations": simulations,
        "seeds_per_task": seeds_per_task,
        "tasks": tasks,
        "elapsed_s": round(result.elapsed_s, 1),
        "sims_per_s": round(simulations / result.elapsed_s, 1) if result.elapsed_s else None,
        "rss_before_mib": round(before / 2**20, 1),
        "rss_peak_mib": round(peak / 2**20, 1),
        "rss_end_mib": round(end / 2**20, 1),
        "process_peak_mib": round(peak_rss_bytes() / 2**20, 1),
        "growth_per_1000_tasks_kib": round(per_task * 1000 / 1024, 1),
        "extrapolated_1m_simulations_mib": round(extrapolated / 2**20, 1),
        "meets_target": extrapolated <= TARGET_MEMORY_1M_BYTES,
        "target_mib": TARGET_MEMORY_1M_BYTES >> 20,
    }


def sweep_bench(
    simulations: int = 4000,
    memory_simulations: int = 200_000,
    seeds_per_task: int = 250,
    memory_seeds_per_task: int = 100,
    dask: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """All three measurements as one JSON-able document."""
    say = progress or (lambda _line: None)
    say(f"scaling: {simulations} simulations of {CHEAPEST}, 1 and 2 workers")
    document: dict[str, Any] = {"scenario": CHEAPEST, "scaling": scaling(simulations, seeds_per_task)}
    if dask:
        say("dask: LocalCluster of 2 worker processes against the local pool of 2")
        document["dask"] = dask_overhead(simulations, seeds_per_task)
    say(f"memory: {memory_simulations} simulations, coordinator resident memory per task")
    document["memory"] = memory(memory_simulations, memory_seeds_per_task, progress=say)
    return document


def table(document: dict[str, Any]) -> list[str]:
    """Plain lines for a terminal: one per measurement."""
    lines = []
    for section in ("scaling", "dask", "memory"):
        if section in document:
            lines.append(f"{section}:")
            lines += [f"  {key:34s} {value}" for key, value in document[section].items()]
    return lines
