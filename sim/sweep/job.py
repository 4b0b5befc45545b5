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
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq

from checks.columns import INV, JUDGED, WHY
from model.errors import LeaselabError
from scenarios.user_files import check_output_directory
from sim.explore.counterexample import INVARIANT_NAMES
from sim.explore.counterexample import write as write_counterexample
from sim.explore.discovery import mechanism_tag
from sim.sweep.config import SweepConfig, as_config
from sim.sweep.directory import COUNTEREXAMPLES, HISTORIES, SHARDS, load, locked, prepare, refuse_foreign
from sim.sweep.engine import SweepProgress, local_pool, run_sweep, write_atomic
from sim.sweep.met import met_comparison
from sim.sweep.rows import Violation
from sim.sweep.task import SweepTask
from sim.sweep.toml_out import dumps

__all__ = [
    "MECHANISMS",
    "ExplainingTasks",
    "JobResult",
    "Rate",
    "explanation_tallies",
    "judged_policy",
    "load",
    "read_mechanisms",
    "run_job",
    "sweep",
    "unjudged_invariants",
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
        idle = unjudged_invariants(p.paths, label)
        kept = read_mechanisms(self.out / COUNTEREXAMPLES)
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
                "unjudged": idle,
                "held": len(INVARIANT_NAMES) - len(mine) - len(idle),
                "explained_by": {name: why.get(name, {}) for name in mine},
            },
            "counterexamples_written": len(self.counterexamples),
            "counterexamples": len(kept),
            "mechanisms": [
                {
                    **{k: e[k] for k in ("policy", "mechanism", "invariant", "first_simulation", "first_s", "file")},
                    **{k: e[k] for k in ("shrunk", "faults_found", "faults") if k in e},
                }
                for e in kept
            ],
            "warnings": self.warnings,
            "register_met": met.document(),
        }


MECHANISMS = "mechanisms.json"
"""In ``DIR/counterexamples``: every counterexample kept, by policy and mechanism, with its first meeting."""


def read_mechanisms(root: Path) -> list[dict[str, Any]]:
    """The kept counterexamples of a sweep's ``counterexamples`` directory (``[]`` when none was kept),
    ordered by policy and first meeting."""
    path = root / MECHANISMS
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["mechanisms"]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise LeaselabError(
            f"unreadable mechanism index: {error}",
            file=str(path),
            hint="remove the counterexamples directory and run the sweep again",
        ) from None
    return list(entries)


class _CounterexampleWriter:
    """Keeps one counterexample per policy and distinct mechanism (a registered finding, a recorded
    non-guarantee, or an unexplained witness shape: :mod:`sim.explore.discovery`), so a second
    mechanism behind an invariant already seen gets its own file and a thousand simulations of one
    mechanism get one: DIR/counterexamples/<invariant>/<policy>--<mechanism tag>.toml.

    Of the simulations that met a mechanism, the one kept is the first in the plan's order
    (``Violation.first_simulation``), whichever worker finished it first, so a local pool of any size,
    a Dask cluster and a resumed sweep keep the same files as one process. ``mechanisms.json`` lists them
    with the simulations and seconds until first met (seconds: the earliest this sweep, or an earlier
    run of it, met the mechanism), and is what a resumed run compares against. A scenario changed by
    latency, transport or collation overrides goes beside the file, which names it by absolute path.
    The files are the sweep's own draws, shrunk after the sweep only when asked (:meth:`shrink`)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.kept = {self._key(e["policy"], e["key"]): e for e in read_mechanisms(root)}
        self.written: dict[str, Path] = {}
        self._dirty = False

    @staticmethod
    def _key(policy: str, mechanism: str) -> str:
        return f"{policy}\x00{mechanism}"

    def __call__(self, violation: Violation) -> None:
        key = self._key(violation.label, violation.mechanism)
        kept = self.kept.get(key)
        if kept is not None and kept["first_simulation"] <= violation.first_simulation:
            if violation.first_s < kept["first_s"]:  # a later draw of the plan, met sooner by another worker
                kept["first_s"] = round(violation.first_s, 3)
                self._dirty = True
            return
        cx = violation.counterexample
        name = f"{_UNSAFE.sub('_', violation.label)}--{mechanism_tag(cx.mechanism)}"
        scenario_file = ""
        try:
            if violation.scenario is not None:
                scenario_path = (self.root / "scenarios" / f"{cx.invariant}--{name}.toml").resolve()
                scenario_path.parent.mkdir(parents=True, exist_ok=True)
                text = dumps(violation.scenario.model_dump(mode="json"))
                write_atomic(scenario_path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
                cx = dataclasses.replace(cx, scenario=str(scenario_path))
                scenario_file = str(scenario_path.relative_to(self.root.resolve()))
            path = self.root / cx.invariant / f"{name}.toml"
            write_counterexample(cx, path)
        except OSError as error:
            raise LeaselabError(
                f"cannot write: {error.strerror or error}",
                file=str(error.filename or self.root),
                hint="finished shards are kept",
            ) from None
        entry = {
            "policy": violation.label,
            "key": violation.mechanism,
            "mechanism": cx.mechanism,
            "invariant": cx.invariant,
            "first_simulation": violation.first_simulation,
            "first_s": round(min(violation.first_s, kept["first_s"]) if kept else violation.first_s, 3),
            "scenario": violation.counterexample.scenario,
            "seed": cx.seed,
            "task": violation.key,
            "file": str(path.relative_to(self.root)),
            "scenario_file": scenario_file,
        }
        self.kept[key] = entry
        self.written[key] = path
        self.save()  # before the task's shard: a shard on disk implies its evidence is listed
        if kept is not None:
            for old in (kept["file"], kept["scenario_file"]):
                if old and old not in (entry["file"], entry["scenario_file"]):
                    (self.root / old).unlink(missing_ok=True)

    def shrink(self, executor: Executor, max_tests: int) -> None:
        """Shrink every kept file not shrunk yet, keeping its mechanism (:mod:`sim.sweep.shrinking`), and
        mark it in the index with its faults before and after."""
        from sim.sweep.shrinking import shrink_files

        keys = sorted(k for k, e in self.kept.items() if "shrunk" not in e)
        outcomes = shrink_files([self.root / self.kept[k]["file"] for k in keys], executor, max_tests)
        for key, outcome in zip(keys, outcomes, strict=True):
            entry = self.kept[key]
            entry["shrunk"] = not outcome.problem
            entry["faults_found"], entry["faults"] = outcome.faults_before, outcome.faults_after
            if outcome.problem:
                entry["problem"] = outcome.problem
        if keys:
            self.save()

    def save(self) -> None:
        entries = sorted(self.kept.values(), key=lambda e: (e["policy"], e["first_simulation"], e["key"]))
        text = json.dumps({"mechanisms": entries}, indent=2) + "\n"
        self.root.mkdir(parents=True, exist_ok=True)
        write_atomic(self.root / MECHANISMS, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        self._dirty = False

    def close(self) -> None:
        """Save the earlier seconds learned since the last file was written."""
        if self._dirty:
            self.save()


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
    shrink_tests: int = 0,
) -> JobResult:
    """Run (or resume) a sweep into ``out``; only counts and paths come back. ``explain`` names a
    policy label whose tasks explain each violation in the worker (``why.*`` columns: the register
    entry that explains it), which the summary then tallies. ``shrink_tests`` > 0 then shrinks each
    kept counterexample (one per policy and mechanism) with that many simulations at most, in the
    same executor (a local pool of ``workers`` by default)."""
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
        writer.close()
        if shrink_tests:
            with ExitStack() as stack:
                pool = _as_executor(executor) or stack.enter_context(local_pool(workers or os.cpu_count() or 1))
                writer.shrink(pool, shrink_tests)
    return JobResult(out, cfg, progress, warnings, time.perf_counter() - started, list(writer.written.values()))


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


def unjudged_invariants(paths: Iterable[Path], policy: str) -> list[str]:
    """The invariants that judged no case in any simulation of ``policy``: one that judged nothing has
    shown nothing, so the verdict must not count it as held. An invariant is listed only when every shard
    records its judged count (a shard of an older sweep without the column leaves it unknown, not idle)."""
    judged: Counter[str] = Counter()
    known = set(INVARIANT_NAMES)
    for path in paths:
        names = set(pq.read_schema(path).names)
        known &= {name for name in INVARIANT_NAMES if JUDGED + name in names}
        columns = [JUDGED + name for name in INVARIANT_NAMES if JUDGED + name in names]
        table = pq.read_table(path, columns=columns, filters=[("policy", "=", policy)])
        for column in columns:
            judged[column.removeprefix(JUDGED)] += int(pc.sum(table.column(column)).as_py() or 0)
    return [name for name in INVARIANT_NAMES if name in known and not judged[name]]


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
