"""Where ``leaselab report``'s time goes: wall and CPU seconds per phase, coordinator and workers.

    .venv/bin/python benchmarks/report_phases.py --seeds 10 [--workers 2] [--out /tmp/phases] [--json]

Runs the built-in review exactly as ``leaselab report`` does (same executor, same jobs), with each
coordinator step timed in place: start-up (imports), fresh shards, the sweep, reading shards,
planning the evidence, the evidence jobs (per kind: CPU seconds inside the workers, and when the
last job of each kind finished), counterexample replays, findings, provenance and rendering.
CPU is the process's own (``time.process_time``) for the coordinator and psutil's user+system of
the pool's worker processes for the workers. Knows the review's module layout; changes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

STARTED = time.perf_counter()
START_CPU = time.process_time()

import psutil  # noqa: E402

from leaselab.cmd_report import render  # noqa: E402
from sim.review import review as R  # noqa: E402
from sim.review.builtin import builtin_review  # noqa: E402
from sim.sweep.executors import executor_for  # noqa: E402

IMPORT_WALL_S = time.perf_counter() - STARTED
IMPORT_CPU_S = time.process_time() - START_CPU


def workers_cpu_s() -> float:
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


class Phases:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.jobs: dict[str, dict[str, float]] = {}

    def timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            wall, cpu, wcpu = time.perf_counter(), time.process_time(), workers_cpu_s()
            try:
                return fn(*args, **kwargs)
            finally:
                self.rows.append(
                    {
                        "phase": name,
                        "wall_s": time.perf_counter() - wall,
                        "coordinator_cpu_s": time.process_time() - cpu,
                        "workers_cpu_s": workers_cpu_s() - wcpu,
                    }
                )

        return wrapper


def _timed_job(kind: str, fn: Callable[[Any], Any], job: Any) -> tuple[Any, float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = fn(job)
    return result, time.process_time() - cpu, time.perf_counter() - wall


def make_run_jobs(phases: Phases) -> Callable[..., Any]:
    """``sim.review.review._run_jobs`` with each job timed inside its worker: every job submitted at
    once, a counterexample's causality curve as its shrink finishes (``curve_budget`` 0: none)."""

    def add(kind: str, cpu_s: float, wall_s: float) -> None:
        stats = phases.jobs.setdefault(kind, {"jobs": 0, "cpu_s": 0.0, "max_job_s": 0.0})
        stats["jobs"] += 1
        stats["cpu_s"] += cpu_s
        stats["max_job_s"] = max(stats["max_job_s"], wall_s)

    def run_jobs(  # type: ignore[no-untyped-def]
        executor: Any,
        shrinks: list[Any],
        recognitions: list[Any],
        verifications: list[Any],
        tell: Any,
        curve_budget: int = 0,
    ):
        started = time.perf_counter()
        kinds = [
            ("shrink", R.run_shrink, shrinks),
            ("recognise", R.run_recognise, recognitions),
            ("verify", R.run_verify, verifications),
        ]
        futures: list[tuple[str, Future[Any]]] = []
        for kind, fn, jobs in kinds:
            futures += [(kind, executor.submit(_timed_job, kind, fn, job)) for job in jobs]
        results = []
        curve_futures: list[Future[Any] | None] = []
        for kind, future in futures:
            result, cpu_s, wall_s = future.result()
            add(kind, cpu_s, wall_s)
            results.append(result)
            if kind == "shrink":
                cx = result.counterexample
                wanted = cx is not None and curve_budget > 0
                job = R.CurveJob(cx, curve_budget) if wanted else None
                curve_futures.append(executor.submit(_timed_job, "curve", R.run_curve, job) if wanted else None)
        curves: list[Any] = []
        for pending in curve_futures:
            if pending is None:
                curves.append(None)
                continue
            curve, cpu_s, wall_s = pending.result()
            add("curve", cpu_s, wall_s)
            curves.append(curve)
        phases.jobs["_wall_s"] = {"wall_s": time.perf_counter() - started}
        a, b = len(shrinks), len(shrinks) + len(recognitions)
        return results[:a], results[a:b], results[b:], curves

    return run_jobs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=Path("/tmp/report-phases"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--save-review", type=Path, help="pickle the Review here (to profile rendering alone)")
    args = parser.parse_args()
    phases = Phases()
    for name in (
        "fresh_shards",
        "run_sweep",
        "read_shards",
        "plan_shrinks",
        "plan_recognition",
        "plan_verification",
        "counterexamples",
        "findings",
        "explanations",
        "provenance",
    ):
        setattr(R, name, phases.timed(name, getattr(R, name)))
    R._run_jobs = phases.timed("evidence jobs", make_run_jobs(phases))
    config = builtin_review()
    options = R.ReviewOptions(out=args.out, seeds=args.seeds, workers=args.workers)
    total_wall, total_cpu = time.perf_counter(), time.process_time()
    with executor_for(None, args.workers) as executor:
        review = phases.timed("run_review", R.run_review)(config, options, executor)
        if args.save_review is not None:
            args.save_review.write_bytes(pickle.dumps(review))
        phases.timed("render", render)(review, executor)  # figures drawn in the pool, as leaselab report does
        pool_cpu = workers_cpu_s()
    out = {
        "seeds": args.seeds,
        "workers": args.workers,
        "simulations": review.simulations,
        "imports": {"wall_s": IMPORT_WALL_S, "cpu_s": IMPORT_CPU_S},
        "phases": phases.rows,
        "jobs": phases.jobs,
        "total": {
            "wall_s": time.perf_counter() - total_wall,
            "coordinator_cpu_s": time.process_time() - total_cpu,
            "workers_cpu_s": pool_cpu,
        },
        "load_average": os.getloadavg(),
    }
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
        return
    print(f"seeds {args.seeds}, {review.simulations} simulations, workers {args.workers}, load {os.getloadavg()}")
    print(f"imports: wall {IMPORT_WALL_S:.2f} s, cpu {IMPORT_CPU_S:.2f} s")
    print(f"{'phase':<20} {'wall s':>8} {'coord cpu':>10} {'workers cpu':>12}")
    for row in phases.rows:
        print(f"{row['phase']:<20} {row['wall_s']:8.2f} {row['coordinator_cpu_s']:10.2f} {row['workers_cpu_s']:12.2f}")
    for kind, stats in phases.jobs.items():
        print(f"  jobs {kind}: {stats}")
    t = out["total"]
    print(
        f"total: wall {t['wall_s']:.1f} s, coordinator cpu {t['coordinator_cpu_s']:.1f} s, "
        f"workers cpu {t['workers_cpu_s']:.1f} s"
    )


if __name__ == "__main__":
    main()
