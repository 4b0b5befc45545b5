"""The sweep engine: scenarios x policies x fault intensities x seeds, through an executor.

Work is cut into tasks (one scenario, one policy, one intensity, a block of seeds);
each task writes one Parquet shard named after its key, so an interrupted sweep
resumes by skipping the shards already on disk, and a crash mid-task never leaves a
half-written shard (write to a temporary name, then rename). Seeds are paired across
policies: every policy sees the same seeds. The executor is a local process pool by
default, or any ``concurrent.futures.Executor`` (e.g. a Dask client's).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from model.invariants import INVARIANTS
from model.policy import resolve_policy
from scenarios.loader import load_scenario
from scenarios.schema import FAMILIES, Scenario
from sim.intensity import scale_faults
from sim.simulate import simulate


@dataclass(frozen=True, slots=True)
class SweepTask:
    scenario: str
    policy: str
    seed_start: int
    seed_count: int
    intensity: float = 1.0
    flags: tuple[tuple[str, bool], ...] = ()

    @property
    def key(self) -> str:
        text = f"{self.scenario}|{self.policy}|{self.flags}|{self.intensity!r}|{self.seed_start}|{self.seed_count}"
        digest = hashlib.blake2b(text.encode(), digest_size=6).hexdigest()
        return f"{Path(self.scenario).stem}__{self.policy}__x{self.intensity:g}__{self.seed_start}__{digest}"


@dataclass(frozen=True)
class SweepPlan:
    scenarios: Sequence[str]
    policies: Sequence[str]
    seeds: int
    intensities: Sequence[float] = (1.0,)
    seeds_per_task: int = 50
    flags: tuple[tuple[str, bool], ...] = ()

    def tasks(self) -> list[SweepTask]:
        out = []
        for scenario in self.scenarios:
            for intensity in self.intensities:
                for start in range(0, self.seeds, self.seeds_per_task):
                    count = min(self.seeds_per_task, self.seeds - start)
                    for policy in self.policies:
                        out.append(SweepTask(scenario, policy, start, count, intensity, self.flags))
        return out


INVARIANT_NAMES = tuple(inv.name for inv in INVARIANTS)


def run_task(task: SweepTask) -> list[dict[str, Any]]:
    """One row per simulation: identity, verdicts (true/false/unknown), coverage, faults, stats."""
    base = load_scenario(task.scenario)
    scenario = scale_faults(base, task.intensity) if task.intensity != 1.0 else base
    policy = resolve_policy(task.policy, dict(task.flags))
    rows = []
    for seed in range(task.seed_start, task.seed_start + task.seed_count):
        result = simulate(scenario, policy, seed)
        row: dict[str, Any] = {
            "scenario": base.name,
            "policy": task.policy,
            "intensity": task.intensity,
            "seed": seed,
            "digest": result.digest,
        }
        for name in INVARIANT_NAMES:
            row[f"inv.{name}"] = str(result.verdicts[name].valid.json).lower()
        for name, reached in result.coverage.items():
            row[f"cov.{name}"] = reached
        for family in FAMILIES:
            row[f"fault.{family}"] = result.faults_fired.get(family, 0)
        stats = result.stats
        row["stat.simulated_s"] = stats["simulated_s"]
        row["stat.requests"] = stats["requests"]
        row["stat.landings"] = stats["landings"]
        row["stat.runs"] = stats["runs"]
        for status, count in stats["final_status"].items():
            row[f"final.{status}"] = count
        rows.append(row)
    return rows


def _write_shard(out_dir: Path, task: SweepTask, rows: list[dict[str, Any]]) -> Path:
    path = out_dir / f"{task.key}.parquet"
    tmp = path.with_suffix(".parquet.tmp")
    pq.write_table(pa.Table.from_pylist(rows), tmp)
    os.replace(tmp, path)
    return path


def shard_path(out_dir: Path, task: SweepTask) -> Path:
    return out_dir / f"{task.key}.parquet"


@dataclass
class SweepProgress:
    total: int
    done: int = 0
    skipped: int = 0
    paths: list[Path] = field(default_factory=list)


def run_sweep(
    plan: SweepPlan,
    out_dir: Path,
    *,
    executor: Executor | None = None,
    workers: int | None = None,
    on_task_done: Callable[[SweepProgress], None] | None = None,
) -> SweepProgress:
    """Run every task whose shard is missing; return where the shards are."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tasks = plan.tasks()
    progress = SweepProgress(total=len(tasks))
    pending = []
    for task in tasks:
        path = shard_path(out_dir, task)
        if path.exists():
            progress.skipped += 1
            progress.done += 1
            progress.paths.append(path)
        else:
            pending.append(task)
    own = executor is None
    pool = executor or ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1)
    try:
        futures = {pool.submit(run_task, task): task for task in pending}
        for future in as_completed(futures):
            task = futures[future]
            progress.paths.append(_write_shard(out_dir, task, future.result()))
            progress.done += 1
            if on_task_done is not None:
                on_task_done(progress)
    finally:
        if own:
            pool.shutdown(cancel_futures=True)
    progress.paths.sort()
    return progress


def validate_scenarios(names: Sequence[str]) -> list[Scenario]:
    """Load every scenario up front so a bad one fails before any work starts."""
    return [load_scenario(name) for name in names]
