"""A task's shard: its Parquet encoding and metadata, the durable write, and the checks a resume makes.

A shard holds one task's rows (the sweep row contract) with the task's key and seeds in its
schema metadata. Workers encode it (:func:`run_output`); the coordinator writes it, its checksum
first (:mod:`sim.sweep.ledger`). On resume, :func:`verified_shards` trusts a shard only when its
content matches the ledger and its footer names its key. Knows tasks, rows and files; nothing of
executors or progress display.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from checks.columns import INV, SPARSE, STAT_SETTLE_LATENCIES_S, WHY
from sim.sweep.ledger import checksum, mismatch, read_ledger, record, rewrite, write_atomic
from sim.sweep.rows import TaskOutput, run_task_output
from sim.sweep.task import SweepTask

KEY_METADATA = b"leaselab.key"
SEEDS_METADATA = b"leaselab.seeds"
"""Verdict columns: nullable booleans (true held, false violated, null unknown)."""


def run_output(task: SweepTask, keep_histories: bool) -> TaskOutput:
    """What an executor runs: the task, its shard (and history) already encoded as Parquet bytes.

    Encoding in the worker keeps the coordinator's work per task to writing bytes, so it neither
    competes with the workers for a core nor holds rows (its memory stays flat over a long sweep).
    """
    output = run_task_output(task, keep_histories)
    output.shard = parquet_bytes(shard_table(output.rows, shard_metadata(task)))
    output.rows = []
    if keep_histories:
        output.history_shard = parquet_bytes(pa.Table.from_pylist(output.history))
        output.history = []
    return output


def parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


def shard_metadata(task: SweepTask) -> dict[bytes, bytes]:
    return {KEY_METADATA: task.key.encode(), SEEDS_METADATA: f"{task.seed_start}:{task.seed_count}".encode()}


def shard_path(out_dir: Path, task: SweepTask) -> Path:
    return out_dir / f"{task.key}.parquet"


def shard_table(rows: list[dict[str, Any]], metadata: dict[bytes, bytes]) -> pa.Table:
    """Rows to a table with a stable schema: a sparse column (``hit.*``, ``dl.*``) missing from a
    row is 0 there, an explanation (``why.*``) null, and settle latencies are always a list of doubles
    (even when all are empty). Every row gets every column: Arrow takes the columns from the first row."""
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    absent: dict[str, int | None] = {n: 0 for n in names if n.startswith(SPARSE)}
    absent.update((n, None) for n in names if n.startswith(WHY))
    filled = [{**absent, **row} for row in rows] if absent else rows
    table = pa.Table.from_pylist(filled)
    if STAT_SETTLE_LATENCIES_S in table.column_names:
        i = table.column_names.index(STAT_SETTLE_LATENCIES_S)
        table = table.set_column(i, STAT_SETTLE_LATENCIES_S, table.column(i).cast(pa.list_(pa.float64())))
    for i, name in enumerate(table.column_names):
        if name.startswith(INV):  # an all-unknown column would otherwise be of type null
            table = table.set_column(i, name, table.column(i).cast(pa.bool_()))
    return table.replace_schema_metadata(metadata)


def write_shard(out_dir: Path, task: SweepTask, rows: list[dict[str, Any]] | bytes) -> Path:
    """The task's shard, from its rows or from the Parquet bytes a worker encoded; its checksum is
    in the ledger before the shard is in place."""
    path = shard_path(out_dir, task)
    data = rows if isinstance(rows, bytes) else parquet_bytes(shard_table(rows, shard_metadata(task)))
    record(out_dir, path.name, checksum(data))
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


def verified_shards(out_dir: Path, on_checked: Callable[[int, int], None] | None = None) -> tuple[dict[str, int], int]:
    """Verify every shard the ledger records, by its content: (shard name -> rows of those that hold,
    how many did not). A shard that does not match is deleted (its task is redone) and the ledger
    rewritten with the lines that held. ``on_checked(checked, to_check)`` after each shard."""
    for stale in out_dir.glob("*.tmp-*"):
        stale.unlink(missing_ok=True)  # left by a killed writer: never a finished shard or ledger
    recorded = read_ledger(out_dir)
    present = sorted((name, digest) for name, digest in recorded.items() if (out_dir / name).exists())
    kept: dict[str, int] = {}
    for checked, (name, digest) in enumerate(present, 1):
        path = out_dir / name
        rows = _footer_rows(path, name.removesuffix(".parquet"))
        if rows is None or mismatch(path, digest):
            path.unlink(missing_ok=True)
        else:
            kept[name] = rows
        if on_checked is not None:
            on_checked(checked, len(present))
    if recorded.keys() != kept.keys():
        rewrite(out_dir, ((name, recorded[name]) for name in kept))
    return kept, len(present) - len(kept)


def _footer_rows(path: Path, key: str) -> int | None:
    """The row count of a shard whose footer names ``key``; None when the footer is unreadable or wrong."""
    try:
        meta = pq.ParquetFile(path).metadata
    except (OSError, pa.ArrowException):
        return None
    schema_meta = meta.schema.to_arrow_schema().metadata or {}
    return int(meta.num_rows) if schema_meta.get(KEY_METADATA) == key.encode() else None
