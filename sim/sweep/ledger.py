"""Files that survive a kill -9: atomic writes, and the shard ledger (every finished shard's checksum).

:func:`write_atomic` writes a whole file or none. The ledger exists so that a shard is trusted by
its content, not by its footer: a shard can be damaged in its middle (a bad disk block, a partial
copy) with its footer, key and row count intact. So each finished shard's SHA-256 is recorded in
``shards/_checksums.sha256`` *before* the shard is renamed into place: a shard on disk always has
its line, and a line without its shard (a kill in between) only means the task is redone. A
resume re-hashes every recorded shard, deletes and redoes any that does not match, and rewrites
the ledger with the lines that held; :func:`sim.sweep.directory.load` refuses a shard that does
not match and names the command that repairs it.

The file is what ``sha256sum`` writes (``<hex>  <name>``), one line per shard, appended and
fsynced; a later line for the same shard wins, a torn last line is ignored, and
``cd DIR/shards && sha256sum -c _checksums.sha256`` checks a directory by hand. Its name starts
with ``_`` so that ``pyarrow.dataset`` and DuckDB globs of ``*.parquet`` never take it for data.
Knows files and hashes; nothing of tasks or rows.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from model.errors import LeaselabError

LEDGER = "_checksums.sha256"
_LINE = re.compile(r"^([0-9a-f]{64}) [ *](\S+\.parquet)$")
_CHUNK = 1 << 20


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


def checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_checksum(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def ledger_path(shard_dir: Path) -> Path:
    return shard_dir / LEDGER


def read_ledger(shard_dir: Path) -> dict[str, str]:
    """Shard file name -> recorded checksum (the last line for a name wins; malformed lines are skipped)."""
    try:
        text = ledger_path(shard_dir).read_text(encoding="ascii", errors="replace")
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise LeaselabError(f"cannot read: {error.strerror or error}", file=str(ledger_path(shard_dir))) from None
    recorded: dict[str, str] = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            recorded[match.group(2)] = match.group(1)
    return recorded


def record(shard_dir: Path, name: str, digest: str) -> None:
    """Append ``name``'s checksum and make it durable before the shard itself is renamed into place."""
    path = ledger_path(shard_dir)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{digest}  {name}\n".encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        raise LeaselabError(
            f"cannot write: {error.strerror or error}",
            file=str(path),
            hint="finished shards are kept; free space or fix permissions and run the same command again",
        ) from None


def rewrite(shard_dir: Path, recorded: Iterable[tuple[str, str]]) -> None:
    """Replace the ledger with exactly ``recorded`` (name, checksum), atomically."""
    text = "".join(f"{digest}  {name}\n" for name, digest in sorted(recorded))
    write_atomic(ledger_path(shard_dir), lambda tmp: tmp.write_text(text, encoding="ascii"))


def mismatch(path: Path, expected: str | None) -> str:
    """Why the shard's content does not stand ('' when it matches its recorded checksum)."""
    if expected is None:
        return "no checksum was recorded for it"
    try:
        actual = file_checksum(path)
    except OSError as error:
        return f"unreadable ({error.strerror or error})"
    if actual != expected:
        return "its content does not match its recorded checksum"
    return ""
