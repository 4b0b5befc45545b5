"""A sweep directory: its manifest (configuration and package versions), its lock, and reading it back.

Layout of DIR::

    sweep.json              the manifest: what made the directory (``kind``: a sweep or a report),
                            the configuration, its fingerprint, the package versions, the base
                            directory scenario paths resolve against, the command that (re)makes it
    shards/<key>.parquet    one shard per task (the sweep row contract)
    shards/_checksums.sha256  the manifest's record of every finished shard's checksum
                            (:mod:`sim.sweep.ledger`)
    counterexamples/        one replayable file per (task, violated invariant), first seed only
    histories/<key>.parquet only with --keep-histories
    .lock                   held while a sweep runs, so two sweeps never write one directory

Resuming checks the manifest: a different configuration is refused (its rows would be mixed
with another sweep's), and so is a directory that holds a report (``leaselab report`` writes the
same manifest with ``kind = "report"``) or shards no manifest describes; different package
versions are only reported, since digests of a library scenario may then differ. Loading
verifies every shard by its checksum and names the command that repairs a damaged one. Knows
files and the configuration; not executors or the CLI.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shlex
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from checks.columns import INV, SPARSE
from model.errors import LeaselabError
from sim.sweep.config import SweepConfig, parse_config
from sim.sweep.ledger import LEDGER, mismatch, read_ledger, write_atomic
from sim.sweep.shards import shard_problem
from sim.sweep.task import SweepTask

MANIFEST = "sweep.json"
SHARDS = "shards"
COUNTEREXAMPLES = "counterexamples"
HISTORIES = "histories"
LOCK = ".lock"
FORMAT = 2
"""2: a kind, a command and shard checksums (format 1 had neither; its shards are redone once)."""
SWEEP, REPORT = "sweep", "report"
REPORT_FILES = ("report.json", "index.html", f"{SHARDS}/review-stamp.json")
"""What a report's directory holds even without a manifest (reports written before it had one)."""
_PACKAGES = ("leaselab", "simpy", "pydantic", "pyarrow", "pandas")


def versions(packages: tuple[str, ...] = _PACKAGES) -> dict[str, str]:
    """Python's version and each package's ('not installed' when missing)."""
    out = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def sweep_command(config: SweepConfig, out: Path) -> str:
    """The command that runs (and resumes, and repairs) ``config`` into ``out``."""
    if not config.source:
        return f"leaselab.sweep(<the same configuration>, out={str(out.resolve())!r})"
    return shlex.join(["leaselab", "sweep", str(Path(config.source).resolve()), "--out", str(out.resolve())])


def manifest(config: SweepConfig, kind: str = SWEEP, command: str = "") -> dict[str, Any]:
    return {
        "format": FORMAT,
        "kind": kind,
        "command": command,
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


def _write_manifest(out: Path, document: dict[str, Any]) -> None:
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    write_atomic(out / MANIFEST, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def refuse_foreign(out: Path, config: SweepConfig, kind: str = SWEEP) -> None:
    """A sweep never writes into a report's directory, nor a report into a sweep's, nor a sweep where
    shards lie that no manifest describes: their rows would be mixed, and ``load`` would return the
    wrong ones. Checked before anything is written (the lock included)."""
    found = read_manifest(out) if out.is_dir() else None
    other = "the report" if kind == REPORT else f"sweep '{config.name}'"
    if found is not None:
        held = found.get("kind", SWEEP)
        if held != kind:
            what = f"holds {'a report' if held == REPORT else 'a sweep'} ('{found.get('name', '?')}')"
            raise LeaselabError(what, file=str(out), hint=f"give {other} its own --out")
        return
    if kind == REPORT:
        return
    if any((out / name).exists() for name in REPORT_FILES):
        raise LeaselabError("holds a report", file=str(out), hint=f"give {other} its own --out")
    if any((out / SHARDS).glob("*.parquet")):
        raise LeaselabError(
            f"holds shards without a manifest ({MANIFEST})", file=str(out), hint=f"give {other} its own --out"
        )


def prepare(out: Path, config: SweepConfig, *, kind: str = SWEEP, command: str = "") -> list[str]:
    """Create DIR or check it holds this configuration; returns warnings (version changes).

    ``kind`` says who writes the directory: a sweep (resumed only with its own configuration) or a
    report (whose shards :mod:`sim.review.provenance` renews when the code or configuration changed,
    so its manifest is simply rewritten). Each refuses the other's directory.
    """
    refuse_foreign(out, config, kind)
    found = read_manifest(out)
    try:
        (out / SHARDS).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise LeaselabError(f"cannot create: {error.strerror}", file=str(out)) from None
    wanted = manifest(config, kind, command or sweep_command(config, out))
    if found is None or kind == REPORT:
        _write_manifest(out, wanted)
        return []
    if found["fingerprint"] != wanted["fingerprint"]:
        raise LeaselabError(
            f"holds sweep '{found.get('name', '?')}' with a different configuration",
            file=str(out / MANIFEST),
            field="fingerprint",
            hint=f"resume it with its own configuration, or give another --out for '{config.name}'",
        )
    if found.get("format") != FORMAT or found.get("command") != wanted["command"]:
        _write_manifest(out, {**found, "format": FORMAT, "kind": kind, "command": wanted["command"]})
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


def repair_command(out: Path) -> str:
    """The command that redoes a damaged shard of ``out``: the one the manifest records, pointed at
    ``out`` where the directory is now (it may have been moved or copied); '' when none is recorded."""
    command = str((read_manifest(out) or {}).get("command") or "")
    words = shlex.split(command) if command.startswith("leaselab ") else []
    if "--out" not in words[:-1]:
        return command
    words[words.index("--out") + 1] = str(out)
    return shlex.join(words)


def _repair_hint(out: Path) -> str:
    command = repair_command(out)
    return f"repair it with: {command}" if command else "run the sweep again on this directory to redo it"


def load(out: str | Path) -> pd.DataFrame:
    """Every row of a sweep directory (or of a bare directory of shards) as one DataFrame.

    A shard that fails validation (its checksum, when the directory records checksums; its footer)
    is an error naming the shard and the command that redoes it, never skipped silently. Missing
    shards of an unfinished sweep are simply absent; a directory with no shard at all is an error (an
    empty table would read as a sweep that found nothing). Sparse ``hit.*`` / ``dl.*`` columns are 0 where
    a shard did not have them; verdict columns ``inv.*`` are nullable booleans (``pd.BooleanDtype``:
    True held, False violated, <NA> unknown).
    """
    out = Path(out)
    if not out.is_dir():
        raise LeaselabError("no such sweep directory", file=str(out))
    shards = _shard_paths(out)
    checked = bool(shards) and shards[0][1] is not None and (out / SHARDS / LEDGER).exists()
    recorded = read_ledger(out / SHARDS) if checked else {}
    tables = []
    for path, task in shards:
        problem = shard_problem(path, task) if task is not None else ""
        if checked and not problem:
            problem = mismatch(path, recorded.get(path.name))
        try:
            if problem:
                raise LeaselabError(problem)
            tables.append(pq.read_table(path))
        except (OSError, pa.ArrowException, LeaselabError) as error:
            raise LeaselabError(f"damaged shard: {error}", file=str(path), hint=_repair_hint(out)) from None
    if not tables:
        raise LeaselabError(
            "holds no shard: not a sweep directory, or a sweep that has not finished one yet",
            file=str(out),
            hint="run `leaselab sweep CONFIG --out DIR` into it first",
        )
    frame: pd.DataFrame = pa.concat_tables(tables, promote_options="default").to_pandas()
    verdicts = [c for c in frame.columns if c.startswith(INV)]
    frame[verdicts] = frame[verdicts].astype("boolean")
    sparse = [c for c in frame.columns if c.startswith(SPARSE)]
    if sparse:
        frame[sparse] = frame[sparse].fillna(0).astype("int64")
    return frame
