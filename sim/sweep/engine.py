"""The sweep engine: run tasks through an executor and stream each task's rows to its own shard.

Work is cut into tasks (:mod:`sim.sweep.task`: one cell, a block of seeds); each task writes
one Parquet shard named after its key. A shard's checksum goes to the ledger first
(:mod:`sim.sweep.ledger`), then the shard is written to a temporary name, fsynced and renamed, so
a kill -9 at any moment leaves either the whole shard (with its checksum) or none; on resume every
shard on disk is verified by its content (checksum, then footer: key and row count) and a bad one
is redone, never read. Seeds are paired across policies: every policy sees the same seeds.

Planning is lazy: a configuration's tasks are generated as the window of tasks in flight
refills (a sweep of 10^8 seeds starts at once), and its totals come from arithmetic. Progress
reports the verification of a resumed directory (phase ``checking``) before the simulations.

The coordinator holds only counts and paths, never rows: at most ``window`` tasks are in
flight, and each task's rows go to disk as soon as they arrive. The executor is a local
process pool by default, or any ``concurrent.futures.Executor`` (e.g. a Dask client's); a
local worker process that dies is replaced and its tasks resubmitted.

Knows tasks, rows and files; nothing of configuration files, the CLI or how progress is shown.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import pickle
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa

from model.errors import LeaselabError
from scenarios.loader import load_scenario
from scenarios.schema import Scenario
from sim.sweep.ledger import write_atomic
from sim.sweep.rows import TaskOutput, Violation, run_task_output
from sim.sweep.shards import parquet_bytes, run_output, shard_path, shard_problem, verified_shards, write_shard
from sim.sweep.task import SweepPlan, SweepTask

__all__ = [
    "SweepPlan",
    "SweepProgress",
    "SweepTask",
    "run_output",
    "run_sweep",
    "run_task",
    "shard_path",
    "shard_problem",
    "validate_scenarios",
    "write_atomic",
    "write_shard",
]

MAX_POOL_RESTARTS = 5
WATCH_INTERVAL_S = 0.5
SPOOL = ".spool"


class HasTasks(Protocol):
    def tasks(self) -> list[SweepTask]: ...


@runtime_checkable
class LazyPlan(Protocol):
    """A plan that can generate its tasks one by one and count them without generating them."""

    def iter_tasks(self) -> Iterator[SweepTask]: ...

    def size(self) -> tuple[int, int]:
        """(tasks, simulations)."""
        ...


def run_task(task: SweepTask) -> list[dict[str, Any]]:
    """One row per simulation of the task (see the sweep row contract)."""
    return run_task_output(task).rows


@dataclass
class SweepProgress:
    """Counts and paths only: the coordinator never holds rows. ``phase`` is ``checking`` while a
    resumed directory's shards are verified (``checked`` of ``to_check``), then ``simulating``."""

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
    phase: str = "simulating"
    checked: int = 0
    to_check: int = 0


@dataclass
class _Sinks:
    out_dir: Path
    keep_histories: bool
    on_violation: Callable[[Violation], None] | None
    on_task_done: Callable[[SweepProgress], None] | None
    history_dir: Path | None
    positions: dict[str, int] = field(default_factory=dict)
    """Per task in flight, the simulations the plan has before it (:func:`planned_positions`)."""
    started: float = field(default_factory=time.perf_counter)


def planned_positions(tasks: Iterable[SweepTask], positions: dict[str, int]) -> Iterator[SweepTask]:
    """The tasks, lazily, noting for each the simulations planned before it: a violation's place in the
    plan's order (``Violation.first_simulation``) is then the same whichever worker ran it and whenever,
    as a single process running the plan in order would count it. An entry lives while its task is
    pending (:func:`pending_tasks` drops a verified one, :func:`_finish` a finished one)."""
    planned = 0
    for task in tasks:
        positions[task.key] = planned
        planned += task.seed_count
        yield task


def _finish(task: SweepTask, output: TaskOutput, sinks: _Sinks, progress: SweepProgress) -> None:
    """Evidence first, shard last: a shard on disk implies its counterexamples and history are too."""
    before = sinks.positions.pop(task.key, 0)
    if sinks.on_violation is not None:
        seconds = time.perf_counter() - sinks.started
        for violation in output.violations:
            first = before + violation.offset + 1
            sinks.on_violation(dataclasses.replace(violation, first_simulation=first, first_s=seconds))
    if sinks.keep_histories and sinks.history_dir is not None:
        history = output.history_shard or parquet_bytes(pa.Table.from_pylist(output.history))
        write_atomic(sinks.history_dir / f"{task.key}.parquet", lambda tmp: tmp.write_bytes(history))
    progress.paths.append(write_shard(sinks.out_dir, task, output.shard or output.rows))
    progress.done += 1
    progress.simulations += task.seed_count
    progress.violations += len(output.violations)
    if sinks.on_task_done is not None:
        sinks.on_task_done(progress)


def pending_tasks(
    tasks: Iterable[SweepTask],
    out_dir: Path,
    progress: SweepProgress,
    verified: dict[str, int],
    positions: dict[str, int] | None = None,
) -> Iterator[SweepTask]:
    """The tasks without a verified shard, lazily. A shard on disk that the ledger does not vouch for
    (written before shards had checksums) is deleted and redone. Verified shards are tallied in
    ``progress`` as they are met (and dropped from ``positions``)."""
    for task in tasks:
        path = shard_path(out_dir, task)
        if path.name in verified:
            if positions is not None:
                positions.pop(task.key, None)
            progress.skipped += 1
            progress.done += 1
            progress.simulations += task.seed_count
            progress.skipped_simulations += task.seed_count
            progress.paths.append(path)
            continue
        if path.exists():
            path.unlink()
            progress.redone += 1
        yield task


def _planned(plan: HasTasks) -> tuple[Iterable[SweepTask], int, int]:
    """The plan's tasks (lazily when it can) and its totals: (tasks, task count, simulations)."""
    if isinstance(plan, LazyPlan):
        count, simulations = plan.size()
        return plan.iter_tasks(), count, simulations
    tasks = plan.tasks()
    return tasks, len(tasks), sum(t.seed_count for t in tasks)


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
    tasks, count, simulations = _planned(plan)
    progress = SweepProgress(total=count, simulations_total=simulations)
    shutil.rmtree(out_dir / SPOOL, ignore_errors=True)  # outputs of a killed sweep's workers

    def checked(done: int, total: int) -> None:
        progress.checked, progress.to_check = done, total
        if on_task_done is not None:
            on_task_done(progress)

    progress.phase = "checking"
    verified, progress.redone = verified_shards(out_dir, checked)
    progress.phase = "simulating"
    # Verified shards count as done from the start, so the rate and the ETA are this run's own.
    progress.done, progress.simulations = len(verified), sum(verified.values())
    progress.skipped, progress.skipped_simulations = progress.done, progress.simulations
    tally = SweepProgress(total=count)
    sinks = _Sinks(out_dir, keep_histories, on_violation, on_task_done, history_dir or out_dir / "histories")
    pending = pending_tasks(planned_positions(tasks, sinks.positions), out_dir, tally, verified, sinks.positions)
    if on_task_done is not None:
        on_task_done(progress)  # the starting point: what a resumed sweep already has
    if executor is not None:
        _drain_external(executor, pending, sinks, progress, window or 64)
    else:
        _drain_local(pending, sinks, progress, workers or os.cpu_count() or 1, window)
    progress.paths = sorted([*tally.paths, *progress.paths])
    progress.redone += tally.redone
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
    down), instead of waiting forever on a task queue nobody will ever fill; end quietly on Ctrl-C. A forked worker
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
    # Ctrl-C reaches the whole foreground group: the coordinator keeps the finished shards and says how to
    # resume; a worker just ends, as kill -9 would (shards are written whole or not at all), instead of
    # printing a KeyboardInterrupt traceback from wherever it was waiting.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _peeked(tasks: Iterable[SweepTask]) -> Iterator[SweepTask] | None:
    """The tasks as an iterator, or None when there are none (no pool is started for nothing)."""
    queue = iter(tasks)
    first = next(queue, None)
    return None if first is None else itertools.chain((first,), queue)


def _drain_local(
    pending: Iterable[SweepTask], sinks: _Sinks, progress: SweepProgress, workers: int, window: int | None
) -> None:
    """A local pool; when one of its processes dies (killed, out of memory) the pool is replaced
    and the unfinished tasks resubmitted. Only breaks without any task finished in between count
    against MAX_POOL_RESTARTS, so a task that kills its worker every time ends the sweep (its
    finished shards kept) instead of looping."""
    fruitless = 0
    spool = sinks.out_dir / SPOOL
    spool.mkdir(exist_ok=True)
    queue = _peeked(pending)
    try:
        while queue is not None:
            before = progress.done
            pool = local_pool(workers)
            try:
                lost = _drain(pool, queue, sinks, progress, window or max(2 * workers, 4), spool)
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
            queue = _peeked(lost)
    finally:
        shutil.rmtree(spool, ignore_errors=True)  # outputs of workers killed before they were read


def _drain_external(
    executor: Executor, pending: Iterable[SweepTask], sinks: _Sinks, progress: SweepProgress, window: int
) -> None:
    """Another executor (a Dask cluster's): it replaces its own dead workers; tasks lost with one
    are resubmitted, with the same bound on fruitless rounds as the local pool."""
    fruitless = 0
    queue = _peeked(pending)
    while queue is not None:
        before = progress.done
        lost = _drain(executor, queue, sinks, progress, window)
        fruitless = 0 if progress.done > before else fruitless + bool(lost)
        if lost and fruitless > MAX_POOL_RESTARTS:
            raise LeaselabError(
                f"workers died {fruitless} times in a row without finishing a task; {len(lost)} tasks unfinished",
                hint="finished shards are kept: run the same command again to resume",
            )
        progress.resubmitted += len(lost)
        queue = _peeked(lost)


def validate_scenarios(names: Sequence[str]) -> list[Scenario]:
    """Load every scenario up front so a bad one fails before any work starts."""
    return [load_scenario(name) for name in names]
