"""A sweep directory: its manifest (configuration and package versions), its lock, and reading it back.

Layout of DIR::

    sweep.json              the configuration, its fingerprint, the package versions, the base
                            directory scenario paths resolve against
    shards/<key>.parquet    one shard per task (the sweep row contract)
    counterexamples/        one replayable file per (task, violated invariant), first seed only
    histories/<key>.parquet only with --keep-histories
    .lock                   held while a sweep runs, so two sweeps never write one directory

Resuming checks the manifest: a different configuration is refused (its rows would be mixed
with another sweep's); different package versions are only reported, since digests of a
library scenario may then differ. Knows files and the configuration; not executors or the CLI.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from model.errors import LeaselabError
from sim.sweep.config import SweepConfig, parse_config
from sim.sweep.engine import shard_problem, write_atomic
from sim.sweep.task import SweepTask

MANIFEST = "sweep.json"
SHARDS = "shards"
COUNTEREXAMPLES = "counterexamples"
HISTORIES = "histories"
LOCK = ".lock"
FORMAT = 1
_PACKAGES = ("leaselab", "simpy", "pydantic", "pyarrow", "pandas")
_SPARSE = ("hit.", "dl.")


def versions(packages: tuple[str, ...] = _PACKAGES) -> dict[str, str]:
    """Python's version and each package's ('not installed' when missing)."""
    out = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def manifest(config: SweepConfig) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "name": config.name,
        "fingerprint": config.fingerprint(),
        "source": config.source,
        "base": str(config.base),
        "config": config.model_dump(mode="json"),
        "versions": versions(),
    }


def read_manifest(out: Path) -> dict[str, Any] | None:
    path = out / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise LeaselabError(f"unreadable sweep manifest: {error}", file=str(path)) from None
    if not isinstance(data, dict) or "fingerprint" not in data or "config" not in data:
        raise LeaselabError("not a sweep manifest", file=str(path))
    return data


def prepare(out: Path, config: SweepConfig) -> list[str]:
    """Create DIR or check it holds this configuration; returns warnings (version changes)."""
    try:
        (out / SHARDS).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise LeaselabError(f"cannot create: {error.strerror}", file=str(out)) from None
    wanted = manifest(config)
    found = read_manifest(out)
    if found is None:
        text = json.dumps(wanted, indent=2, sort_keys=True) + "\n"
        write_atomic(out / MANIFEST, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        return []
    if found["fingerprint"] != wanted["fingerprint"]:
        raise LeaselabError(
            f"holds sweep '{found.get('name', '?')}' with a different configuration",
            file=str(out / MANIFEST),
            field="fingerprint",
            hint=f"resume it with its own configuration, or give another --out for '{config.name}'",
        )
    old = found.get("versions", {})
    return [
        f"{out / MANIFEST}: {name} was {old.get(name)} when this sweep started, now {version}"
        for name, version in wanted["versions"].items()
        if old.get(name) != version
    ]


_HELD_LOCKS: set[int] = set()


def _close_held_locks_in_child() -> None:
    """After a fork, in the child: close the lock files the parent holds. A forked pool worker
    would otherwise share the parent's lock and keep it after a kill -9 of the parent."""
    for fd in list(_HELD_LOCKS):
        with suppress(OSError):
            os.close(fd)
    _HELD_LOCKS.clear()


os.register_at_fork(after_in_child=_close_held_locks_in_child)


@contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold DIR/.lock for the sweep's duration; a second sweep on DIR fails at once (one line)."""
    path = out / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise LeaselabError(f"cannot create: {error.strerror}", file=str(path)) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LeaselabError(
                "another sweep is writing this directory", file=str(out), hint="wait for it or stop it"
            ) from None
        _HELD_LOCKS.add(fd)
        yield
    finally:
        _HELD_LOCKS.discard(fd)
        os.close(fd)


def config_of(out: Path) -> SweepConfig | None:
    """The configuration a sweep directory records (None for a bare directory of shards)."""
    found = read_manifest(out)
    if found is None:
        return None
    base = Path(found.get("base") or out)
    return parse_config(found["config"], source=str(out / MANIFEST), base=base)


def _shard_paths(out: Path) -> list[tuple[Path, SweepTask | None]]:
    config = config_of(out)
    shard_dir = out / SHARDS if (out / SHARDS).is_dir() else out
    if config is None:
        return [(p, None) for p in sorted(shard_dir.glob("*.parquet"))]
    paths: list[tuple[Path, SweepTask | None]] = []
    for task in config.tasks():
        path = shard_dir / f"{task.key}.parquet"
        if path.exists():
            paths.append((path, task))
    return paths


def load(out: str | Path) -> pd.DataFrame:
    """Every row of a sweep directory (or of a bare directory of shards) as one DataFrame.

    A shard that fails validation is an error, never skipped silently: resume the sweep to
    redo it. Missing shards of an unfinished sweep are simply absent. Sparse ``hit.*`` /
    ``dl.*`` columns are 0 where a shard did not have them.
    """
    out = Path(out)
    if not out.is_dir():
        raise LeaselabError("no such sweep directory", file=str(out))
    tables = []
    for path, task in _shard_paths(out):
        problem = shard_problem(path, task) if task is not None else ""
        try:
            if problem:
                raise LeaselabError(problem)
            tables.append(pq.read_table(path))
        except (OSError, pa.ArrowException, LeaselabError) as error:
            raise LeaselabError(
                f"bad shard: {error}", file=str(path), hint="run the sweep again on this directory to redo it"
            ) from None
    if not tables:
        return pd.DataFrame()
    frame: pd.DataFrame = pa.concat_tables(tables, promote_options="default").to_pandas()
    sparse = [c for c in frame.columns if c.startswith(_SPARSE)]
    if sparse:
        frame[sparse] = frame[sparse].fillna(0).astype("int64")
    return frame
