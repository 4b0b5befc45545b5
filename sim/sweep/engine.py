"""The sweep engine: run tasks through an executor and stream each task's rows to its own shard.

Work is cut into tasks (:mod:`sim.sweep.task`: one cell, a block of seeds); each task writes
one Parquet shard named after its key. A shard is written to a temporary name, fsynced and
renamed, so a kill -9 at any moment leaves either the whole shard or none; on resume every
shard on disk is validated (footer readable, row count and key match its task) and a bad one
is redone, never read. Seeds are paired across policies: every policy sees the same seeds.

The coordinator holds only counts and paths, never rows: at most ``window`` tasks are in
flight, and each task's rows go to disk as soon as they arrive. The executor is a local
process pool by default, or any ``concurrent.futures.Executor`` (e.g. a Dask client's); a
local worker process that dies is replaced and its tasks resubmitted.

Knows tasks, rows and files; nothing of configuration files, the CLI or how progress is shown.
"""

from __future__ import annotations

import os
import pickle
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from model.errors import LeaselabError
from scenarios.loader import load_scenario
from scenarios.schema import Scenario
from sim.sweep.rows import INVARIANT_NAMES, TaskOutput, Violation, run_task_output
from sim.sweep.task import SweepPlan, SweepTask

__all__ = [
    "INVARIANT_NAMES",
    "SweepPlan",
    "SweepProgress",
    "SweepTask",
    "run_sweep",
    "run_task",
    "shard_path",
    "validate_scenarios",
]

KEY_METADATA = b"leaselab.key"
SEEDS_METADATA = b"leaselab.seeds"
MAX_POOL_RESTARTS = 5
WATCH_INTERVAL_S = 0.5
SPOOL = ".spool"
SETTLE_COLUMN = "stat.settle_latencies_s"
_SPARSE_PREFIXES = ("hit.", "dl.")


class HasTasks(Protocol):
    def tasks(self) -> list[SweepTask]: ...


def run_task(task: SweepTask) -> list[dict[str, Any]]:
    """One row per simulation of the task (see the sweep row contract)."""
    return run_task_output(task).rows


def run_output(task: SweepTask, keep_histories: bool) -> TaskOutput:
    """What an executor runs: the task, its shard (and history) already encoded as Parquet bytes.

    Encoding in the worker keeps the coordinator's work per task to writing bytes, so it neither
    competes with the workers for a core nor holds rows (its memory stays flat over a long sweep).
    """
    output = run_task_output(task, keep_histories)
    output.shard = parquet_bytes(_table(output.rows, _metadata(task)))
    output.rows = []
    if keep_histories:
        output.history_shard = parquet_bytes(pa.Table.from_pylist(output.history))
        output.history = []
    return output


def parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


def _metadata(task: SweepTask) -> dict[bytes, bytes]:
    return {KEY_METADATA: task.key.encode(), SEEDS_METADATA: f"{task.seed_start}:{task.seed_count}".encode()}


def shard_path(out_dir: Path, task: SweepTask) -> Path:
    return out_dir / f"{task.key}.parquet"


def _table(rows: list[dict[str, Any]], metadata: dict[bytes, bytes]) -> pa.Table:
    """Rows to a table with a stable schema: a sparse column (``hit.*``, ``dl.*``) missing from a
    row is 0 there, and settle latencies are always a list of doubles (even when all are empty)."""
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    sparse = [n for n in names if n.startswith(_SPARSE_PREFIXES)]
    filled = [{**dict.fromkeys(sparse, 0), **row} for row in rows] if sparse else rows
    table = pa.Table.from_pylist(filled)
    if SETTLE_COLUMN in table.column_names:
        i = table.column_names.index(SETTLE_COLUMN)
        table = table.set_column(i, SETTLE_COLUMN, table.column(i).cast(pa.list_(pa.float64())))
    return table.replace_schema_metadata(metadata)


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """Write through a temporary file in the same directory, fsync it, rename it over ``path``
    and fsync the directory: after a crash the file is whole or absent, never partial."""
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        raise LeaselabError(
            f"cannot write: {error.strerror or error}",
            file=str(path),
            hint="finished shards are kept; free space or fix permissions and run the same command again",
        ) from None


def write_shard(out_dir: Path, task: SweepTask, rows: list[dict[str, Any]] | bytes) -> Path:
    """The task's shard, from its rows or from the Parquet bytes a worker encoded."""
    path = shard_path(out_dir, task)
    data = rows if isinstance(rows, bytes) else parquet_bytes(_table(rows, _metadata(task)))
    write_atomic(path, lambda tmp: tmp.write_bytes(data))
    return path


def shard_problem(path: Path, task: SweepTask) -> str:
    """Why the shard on disk cannot stand for ``task`` ('' when it can): unreadable footer,
    wrong key or wrong row count. Reads the footer only, never the rows."""
    try:
        meta = pq.ParquetFile(path).metadata
    except (OSError, pa.ArrowException) as error:
        return f"unreadable ({error})"
    schema_meta = meta.schema.to_arrow_schema().metadata or {}
    if schema_meta.get(KEY_METADATA) != task.key.encode():
        return "its key does not match its name"
    if meta.num_rows != task.seed_count:
        return f"{meta.num_rows} rows, expected {task.seed_count}"
    return ""


@dataclass
class SweepProgress:
    """Counts and paths only: the coordinator never holds rows."""

    total: int
    done: int = 0
    skipped: int = 0
    skipped_simulations: int = 0
    redone: int = 0
    simulations: int = 0
    simulations_total: int = 0
    resubmitted: int = 0
    violations: int = 0
    paths: list[Path] = field(default_factory=list)


@dataclass
class _Sinks:
    out_dir: Path
    keep_histories: bool
    on_violation: Callable[[Violation], None] | None
    on_task_done: Callable[[SweepProgress], None] | None
    history_dir: Path | None


def _finish(task: SweepTask, output: TaskOutput, sinks: _Sinks, progress: SweepProgress) -> None:
    """Evidence first, shard last: a shard on disk implies its counterexamples and history are too."""
    if sinks.on_violation is not None:
        for violation in output.violations:
            sinks.on_violation(violation)
    if sinks.keep_histories and sinks.history_dir is not None:
        history = output.history_shard or parquet_bytes(pa.Table.from_pylist(output.history))
        write_atomic(sinks.history_dir / f"{task.key}.parquet", lambda tmp: tmp.write_bytes(history))
    progress.paths.append(write_shard(sinks.out_dir, task, output.shard or output.rows))
    progress.done += 1
    progress.simulations += task.seed_count
    progress.violations += len(output.violations)
    if sinks.on_task_done is not None:
        sinks.on_task_done(progress)


def pending_tasks(tasks: Sequence[SweepTask], out_dir: Path, progress: SweepProgress) -> list[SweepTask]:
    """The tasks without a valid shard; a shard that fails validation is deleted and redone."""
    for stale in out_dir.glob("*.parquet.tmp-*"):
        stale.unlink(missing_ok=True)  # left by a killed writer: never a finished shard
    shutil.rmtree(out_dir / SPOOL, ignore_errors=True)  # outputs of a killed sweep's workers
    pending = []
    for task in tasks:
        path = shard_path(out_dir, task)
        if path.exists():
            if not shard_problem(path, task):
                progress.skipped += 1
                progress.done += 1
                progress.simulations += task.seed_count
                progress.skipped_simulations += task.seed_count
                progress.paths.append(path)
                continue
            path.unlink()
            progress.redone += 1
        pending.append(task)
    return pending


def run_sweep(
    plan: HasTasks,
    out_dir: Path,
    *,
    executor: Executor | None = None,
    workers: int | None = None,
    on_task_done: Callable[[SweepProgress], None] | None = None,
    on_violation: Callable[[Violation], None] | None = None,
    keep_histories: bool = False,
    history_dir: Path | None = None,
    window: int | None = None,
) -> SweepProgress:
    """Run every task whose shard is missing or bad; return where the shards are."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if history_dir is not None:
            history_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise LeaselabError(f"cannot create: {error.strerror}", file=str(error.filename or out_dir)) from None
    tasks = plan.tasks()
    progress = SweepProgress(total=len(tasks), simulations_total=sum(t.seed_count for t in tasks))
    pending = pending_tasks(tasks, out_dir, progress)
    if on_task_done is not None:
        on_task_done(progress)  # the starting point: what a resumed sweep already has
    sinks = _Sinks(out_dir, keep_histories, on_violation, on_task_done, history_dir or out_dir / "histories")
    if executor is not None:
        _drain_external(executor, pending, sinks, progress, window or 64)
    else:
        _drain_local(pending, sinks, progress, workers or os.cpu_count() or 1, window)
    progress.paths.sort()
    return progress


def _worker_died(error: BaseException) -> bool:
    """The task was lost with its worker (a broken local pool, a Dask worker killed too often),
    not failed by itself: it is resubmitted. Dask is optional, so its exception goes by name."""
    return isinstance(error, BrokenProcessPool) or type(error).__name__ == "KilledWorker"


def run_output_spooled(task: SweepTask, keep_histories: bool, spool: str) -> str:
    """A local worker's task: the output goes to a file in ``spool`` and only its path travels back.

    A result pickled through the pool's pipe can be cut in the middle when its worker is killed
    while writing it, and the pool's reader then waits forever for the rest; a path is a message
    far below the size the pipe writes atomically.
    """
    output = run_output(task, keep_histories)
    path = Path(spool) / f"{task.key}.{os.getpid()}.pickle"
    with open(path, "wb") as file:
        pickle.dump(output, file, protocol=pickle.HIGHEST_PROTOCOL)
    return str(path)


def _unspool(result: str) -> TaskOutput:
    path = Path(result)
    output = pickle.loads(path.read_bytes())
    path.unlink()
    if not isinstance(output, TaskOutput):
        raise TypeError(f"{path} holds no task output")
    return output


def _drain(
    executor: Executor,
    pending: Iterable[SweepTask],
    sinks: _Sinks,
    progress: SweepProgress,
    window: int,
    spool: Path | None = None,
) -> list[SweepTask]:
    """Keep ``window`` tasks in flight; write each as it completes. Returns the tasks lost with a
    dead worker (for resubmission), having finished every other one. With ``spool`` the workers
    hand their outputs over as files (see :func:`run_output_spooled`)."""
    queue = iter(pending)
    running: dict[Future[Any], SweepTask] = {}

    def submit(task: SweepTask) -> Future[Any]:
        if spool is None:
            return executor.submit(run_output, task, sinks.keep_histories)
        return executor.submit(run_output_spooled, task, sinks.keep_histories, str(spool))

    lost: list[SweepTask] = []

    def fill() -> None:
        while len(running) < window:
            task = next(queue, None)
            if task is None:
                return
            try:
                running[submit(task)] = task
            except BrokenProcessPool:
                lost.append(task)
                lost.extend(queue)
                return

    fill()
    while running:
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:
            task = running.pop(future)
            try:
                result = future.result()
                output = _unspool(result) if spool is not None else result
            except OSError as error:  # a worker could not write its output (a full disk, a lost mount)
                raise LeaselabError(
                    f"a worker could not hand over task {task.key}: {error.strerror or error}",
                    file=str(getattr(error, "filename", "") or ""),
                    hint="finished shards are kept: fix the cause and run the same command again",
                ) from None
            except Exception as error:
                if not _worker_died(error):
                    raise
                lost.append(task)
                continue
            _finish(task, output, sinks, progress)
        if not lost:
            fill()
    if lost:
        lost.extend(queue)
    return lost


def local_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool of the platform's default start method whose workers watch the coordinator.

    A worker exits when the coordinator is gone (killed with -9, its pool never shut down)
    instead of waiting forever on a task queue nobody will fill; files the coordinator holds
    across a fork are closed in the child where that matters (see :func:`sim.sweep.directory.locked`).
    """
    return ProcessPoolExecutor(max_workers=workers, initializer=_watch_coordinator, initargs=(os.getpid(),))


def _watch_coordinator(pid: int) -> None:
    """In a pool worker: exit when the coordinator is gone (killed with -9, its pool never shut
    down), instead of waiting forever on a task queue nobody will ever fill. A forked worker
    sees its parent change at once (a dead coordinator may linger as a zombie, which signal 0
    would still find); a worker started otherwise asks whether the process exists."""
    forked = os.getppid() == pid

    def gone() -> bool:
        if forked:
            return os.getppid() != pid
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def watch() -> None:
        while not gone():
            time.sleep(WATCH_INTERVAL_S)
        os._exit(3)

    threading.Thread(target=watch, name="leaselab-watch-coordinator", daemon=True).start()


def _drain_local(
    pending: list[SweepTask], sinks: _Sinks, progress: SweepProgress, workers: int, window: int | None
) -> None:
    """A local pool; when one of its processes dies (killed, out of memory) the pool is replaced
    and the unfinished tasks resubmitted. Only breaks without any task finished in between count
    against MAX_POOL_RESTARTS, so a task that kills its worker every time ends the sweep (its
    finished shards kept) instead of looping."""
    fruitless = 0
    spool = sinks.out_dir / SPOOL
    spool.mkdir(exist_ok=True)
    try:
        while pending:
            before = progress.done
            pool = local_pool(workers)
            try:
                lost = _drain(pool, pending, sinks, progress, window or max(2 * workers, 4), spool)
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            fruitless = 0 if progress.done > before else fruitless + bool(lost)
            if lost and fruitless > MAX_POOL_RESTARTS:
                raise LeaselabError(
                    f"local worker processes died {fruitless} times in a row without finishing a task; "
                    f"{len(lost)} tasks unfinished",
                    hint="finished shards are kept: run the same command again to resume",
                )
            progress.resubmitted += len(lost)
            pending = lost
    finally:
        shutil.rmtree(spool, ignore_errors=True)  # outputs of workers killed before they were read


def _drain_external(
    executor: Executor, pending: list[SweepTask], sinks: _Sinks, progress: SweepProgress, window: int
) -> None:
    """Another executor (a Dask cluster's): it replaces its own dead workers; tasks lost with one
    are resubmitted, with the same bound on fruitless rounds as the local pool."""
    fruitless = 0
    while pending:
        before = progress.done
        lost = _drain(executor, pending, sinks, progress, window)
        fruitless = 0 if progress.done > before else fruitless + bool(lost)
        if lost and fruitless > MAX_POOL_RESTARTS:
            raise LeaselabError(
                f"workers died {fruitless} times in a row without finishing a task; {len(lost)} tasks unfinished",
                hint="finished shards are kept: run the same command again to resume",
            )
        progress.resubmitted += len(lost)
        pending = lost


def validate_scenarios(names: Sequence[str]) -> list[Scenario]:
    """Load every scenario up front so a bad one fails before any work starts."""
    return [load_scenario(name) for name in names]
