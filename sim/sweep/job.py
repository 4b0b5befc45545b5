"""A sweep job: a configuration run into a sweep directory, resumably; and the library entry points.

``run_job`` prepares DIR (manifest, lock), runs the missing tasks through the engine
(:mod:`sim.sweep.engine`), writes each violation's counterexample in the format ``leaselab replay``
reads, and returns counts; ``sweep`` does the same and returns the rows; ``load`` reads a
directory back. Progress is reported through a callback; showing it is the caller's business.
The verdict of a sweep is that of one policy (the configuration's last, unless one is named):
which invariants failed in any of its simulations. Knows configurations, the engine and the
directory layout; not the CLI.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq

from checks.columns import INV, WHY
from model.errors import LeaselabError
from scenarios.user_files import check_output_directory
from sim.explore.counterexample import INVARIANT_NAMES
from sim.explore.counterexample import write as write_counterexample
from sim.sweep.config import SweepConfig, as_config
from sim.sweep.directory import COUNTEREXAMPLES, HISTORIES, SHARDS, load, locked, prepare, refuse_foreign
from sim.sweep.engine import SweepProgress, run_sweep, write_atomic
from sim.sweep.met import met_comparison
from sim.sweep.rows import Violation
from sim.sweep.task import SweepTask
from sim.sweep.toml_out import dumps

__all__ = [
    "ExplainingTasks",
    "JobResult",
    "Rate",
    "explanation_tallies",
    "judged_policy",
    "load",
    "run_job",
    "sweep",
    "violation_counts",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.+=-]+")


@dataclass
class Rate:
    """Simulations per second over this session (shards found on disk excluded) and the ETA."""

    started: float = field(default_factory=time.perf_counter)

    def of(self, progress: SweepProgress) -> tuple[float, float | None]:
        """(simulations per second, seconds left or None while unknown)."""
        elapsed = time.perf_counter() - self.started
        fresh = progress.simulations - progress.skipped_simulations
        rate = fresh / elapsed if elapsed > 0 else 0.0
        remaining = progress.simulations_total - progress.simulations
        return rate, (remaining / rate if rate > 0 else None)


@dataclass
class JobResult:
    out: Path
    config: SweepConfig
    progress: SweepProgress
    warnings: list[str]
    elapsed_s: float
    counterexamples: list[Path]

    @property
    def fresh_simulations(self) -> int:
        return self.progress.simulations - self.progress.skipped_simulations

    def summary(self, judged: str | None = None) -> dict[str, Any]:
        """Counts for people and pipelines; ``judged`` (default: the last policy) is the policy whose
        failed invariants decide the verdict, with the simulations that violated each. ``register_met``:
        the judged policy's cells against the register's record of where each entry was met
        (:mod:`register.met_rates`: the entries no longer met, or met too rarely there to say)."""
        p = self.progress
        fresh, elapsed = self.fresh_simulations, self.elapsed_s
        label = judged_policy(self.config, judged)
        every, mine = violation_tallies(p.paths, label)
        why, simulations = explanation_tallies(p.paths, label)
        on_disk = sorted(self.out.joinpath(COUNTEREXAMPLES).glob("*/*.toml"))
        met = met_comparison(p.paths, label)
        return {
            "name": self.config.name,
            "out": str(self.out),
            "tasks": p.total,
            "shards_reused": p.skipped,
            "shards_redone": p.redone,
            "tasks_resubmitted": p.resubmitted,
            "simulations": p.simulations,
            "simulations_this_run": fresh,
            "elapsed_s": round(self.elapsed_s, 3),
            "simulations_per_s": round(fresh / elapsed, 1) if fresh and elapsed > 0 else None,
            "violating_simulations": every,
            "judged": {
                "policy": label,
                "simulations": simulations,
                "failed": mine,
                "explained_by": {name: why.get(name, {}) for name in mine},
            },
            "counterexamples_written": len(self.counterexamples),
            "counterexamples": len(on_disk),
            "warnings": self.warnings,
            "register_met": met.document(),
        }


class _CounterexampleWriter:
    """Writes each violation as DIR/counterexamples/<invariant>/<task key>__seed<N>.toml; a scenario
    changed by latency or transport overrides goes beside it, and the file names it by absolute path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.written: list[Path] = []

    def __call__(self, violation: Violation) -> None:
        cx = violation.counterexample
        key = _UNSAFE.sub("_", violation.key or f"{Path(cx.scenario).stem}__{cx.policy}")
        if violation.scenario is not None:
            scenario_path = (self.root / "scenarios" / f"{key}.toml").resolve()
            scenario_path.parent.mkdir(parents=True, exist_ok=True)
            text = dumps(violation.scenario.model_dump(mode="json"))
            write_atomic(scenario_path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
            cx = dataclasses.replace(cx, scenario=str(scenario_path))
        path = self.root / cx.invariant / f"{key}__seed{cx.seed}.toml"
        try:
            self.written.append(write_counterexample(cx, path))
        except OSError as error:
            raise LeaselabError(
                f"cannot write: {error.strerror or error}", file=str(path), hint="finished shards are kept"
            ) from None


def _as_executor(executor: Any) -> Executor | None:
    """An Executor, or a Dask ``distributed.Client`` (its executor), or None for the local pool."""
    if executor is None or isinstance(executor, Executor):
        return executor
    get = getattr(executor, "get_executor", None)
    if callable(get):
        converted = get(pure=False)
        if isinstance(converted, Executor):
            return converted
    raise TypeError(f"not an executor: {executor!r}")


def run_job(
    config: SweepConfig | str | Path,
    out: str | Path,
    *,
    executor: Any = None,
    workers: int | None = None,
    keep_histories: bool = False,
    on_progress: Callable[[SweepProgress], None] | None = None,
    window: int | None = None,
    explain: str | None = None,
) -> JobResult:
    """Run (or resume) a sweep into ``out``; only counts and paths come back. ``explain`` names a
    policy label whose tasks explain each violation in the worker (``why.*`` columns: the register
    entry that explains it), which the summary then tallies."""
    cfg, out = as_config(config), Path(out)
    check_output_directory(out)
    started = time.perf_counter()
    refuse_foreign(out, cfg)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise LeaselabError(f"cannot create: {error.strerror}", file=str(out)) from None
    with locked(out):
        warnings = prepare(out, cfg)
        writer = _CounterexampleWriter(out / COUNTEREXAMPLES)
        progress = run_sweep(
            ExplainingTasks(cfg, explain) if explain is not None else cfg,
            out / SHARDS,
            executor=_as_executor(executor),
            workers=workers,
            on_task_done=on_progress,
            on_violation=writer,
            keep_histories=keep_histories,
            history_dir=out / HISTORIES if keep_histories else None,
            window=window,
        )
    return JobResult(out, cfg, progress, warnings, time.perf_counter() - started, writer.written)


@dataclass(frozen=True)
class ExplainingTasks:
    """A configuration's tasks, those of policy ``label`` marked ``explain`` (their rows say which
    register entry explains each violation); the shard keys are unchanged."""

    config: SweepConfig
    label: str

    def iter_tasks(self) -> Iterator[SweepTask]:
        for task in self.config.iter_tasks():
            yield dataclasses.replace(task, explain=True) if task.policy_label == self.label else task

    def tasks(self) -> list[SweepTask]:
        return list(self.iter_tasks())

    def size(self) -> tuple[int, int]:
        return self.config.size()


def sweep(
    config: SweepConfig | str | Path,
    out: str | Path,
    executor: Any = None,
    *,
    workers: int | None = None,
    keep_histories: bool = False,
) -> pd.DataFrame:
    """Run or resume a sweep and return all its rows (``leaselab.sweep``)."""
    run_job(config, out, executor=executor, workers=workers, keep_histories=keep_histories)
    return load(out)


def judged_policy(config: SweepConfig, label: str | None) -> str:
    """The policy a sweep's verdict is about: ``label`` when given (it must be one of the
    configuration's), else the last policy the configuration lists."""
    labels = [p.label for p in config.policy]
    if label is None:
        return labels[-1]
    if label not in labels:
        what = f"no policy labelled '{label}' in sweep '{config.name}'"
        raise LeaselabError(what, field="--policy", hint="valid: " + ", ".join(labels))
    return label


def violation_counts(paths: Iterable[Path], policy: str | None = None) -> dict[str, int]:
    """Simulations violating each invariant (verdict false; null is unknown, not a violation); of
    one policy label when ``policy`` is given."""
    every, mine = violation_tallies(paths, policy)
    return every if policy is None else mine


def violation_tallies(paths: Iterable[Path], policy: str | None) -> tuple[dict[str, int], dict[str, int]]:
    """Per invariant, the simulations violating it: of every policy, and of ``policy``. One pass,
    shard by shard, reading only the verdict columns and the policy label."""
    every: Counter[str] = Counter()
    mine: Counter[str] = Counter()
    columns = [INV + name for name in INVARIANT_NAMES]
    for path in paths:
        names = pq.read_schema(path).names
        table = pq.read_table(path, columns=[c for c in columns if c in names] + ["policy"])
        chosen = pc.equal(table.column("policy"), policy) if policy is not None else None
        for column in (c for c in table.column_names if c.startswith(INV)):
            violated = pc.invert(table.column(column))  # false -> true; unknown (null) stays null
            name = column.removeprefix(INV)
            every[name] += int(pc.sum(violated).as_py() or 0)
            if chosen is not None:
                mine[name] += int(pc.sum(pc.and_(violated, chosen)).as_py() or 0)
    return {n: every[n] for n in INVARIANT_NAMES if every[n]}, {n: mine[n] for n in INVARIANT_NAMES if mine[n]}


def explanation_tallies(paths: Iterable[Path], policy: str) -> tuple[dict[str, dict[str, int]], int]:
    """Per invariant violated by ``policy``, its violating simulations by what explains them (a finding
    or non-guarantee id; '' none does; ``?`` not examined: a shard written without ``why.*`` columns),
    and the simulations of ``policy``."""
    tallies: dict[str, Counter[str]] = {}
    simulations = 0
    columns = [INV + name for name in INVARIANT_NAMES]
    for path in paths:
        names = pq.read_schema(path).names
        wanted = [c for c in columns if c in names] + [WHY + n for n in INVARIANT_NAMES if WHY + n in names]
        table = pq.read_table(path, columns=[*wanted, "policy"], filters=[("policy", "=", policy)])
        simulations += table.num_rows
        for column in (c for c in table.column_names if c.startswith(INV)):
            name = column.removeprefix(INV)
            violated = pc.fill_null(pc.invert(table.column(column)), False)
            if not pc.any(violated).as_py():
                continue
            why_column = WHY + name
            if why_column in table.column_names:
                whys = pc.filter(table.column(why_column), violated).to_pylist()
            else:
                whys = ["?"] * int(pc.sum(violated).as_py() or 0)
            tallies.setdefault(name, Counter()).update("?" if why is None else why for why in whys)
    return {name: dict(sorted(counter.items())) for name, counter in tallies.items()}, simulations
