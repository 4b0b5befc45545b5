"""Files a user names, checked at the boundary: bytes to a TOML mapping, and output directories.

Every TOML input (a scenario, a sweep configuration, a counterexample) is read by
:func:`read_toml`: at most :data:`MAX_FILE_BYTES` (an input is a few kilobytes, and ``/dev/zero``
must not hang a command), UTF-8 only (a UTF-16 or binary file is refused with one line saying what
it looks like, not a UnicodeDecodeError), TOML syntax, and at most :data:`MAX_DEPTH` levels of
nesting (tomllib recurses once per nested array or inline table, so a few hundred levels were a
RecursionError; no schema nests deeper than four). An output directory named by ``--out`` is
checked before any work starts (:func:`check_output_directory`), so a bad one cannot cost what a
search or a sweep found. Every refusal is one :class:`model.errors.LeaselabError` naming the file.
Knows nothing of what the mapping means.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from model.errors import LeaselabError, clamp

MAX_FILE_BYTES = 1 << 20
"""1 MiB: a large scenario is 5 KB, a counterexample 2 KB."""
MAX_DEPTH = 16
"""Tables and arrays nested in each other, the top-level table included (the schemas need 4)."""
_UTF16_32_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
_UTF8_BOM = b"\xef\xbb\xbf"


def read_toml(path: Path, *, what: str) -> dict[str, Any]:
    """The TOML mapping in ``path``; ``what`` names the kind of file in messages ("scenario file")."""
    source = str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise LeaselabError(f"no such {what}", file=source) from None
    except IsADirectoryError:
        raise LeaselabError(f"is a directory, not a {what}", file=source) from None
    except OSError as error:
        raise LeaselabError(f"cannot read: {error.strerror or error}", file=source) from None
    except ValueError:  # a NUL byte in the name
        raise LeaselabError("is not a usable file name", file=source) from None
    if len(data) > MAX_FILE_BYTES:
        raise LeaselabError(f"larger than {MAX_FILE_BYTES >> 20} MiB: not a {what}", file=source)
    return loads_toml(decode_utf8(data, source=source), source=source)


def decode_utf8(data: bytes, *, source: str) -> str:
    """``data`` as UTF-8 text (a UTF-8 byte-order mark is dropped); anything else is refused."""
    if data.startswith(_UTF16_32_BOMS):
        raise LeaselabError("is UTF-16 or UTF-32 text; TOML must be UTF-8 (save it as UTF-8)", file=source)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise LeaselabError(f"has a NUL byte at offset {nul}: binary or UTF-16, not UTF-8 TOML text", file=source)
    try:
        return data.removeprefix(_UTF8_BOM).decode("utf-8")
    except UnicodeDecodeError as error:
        bad = data[error.start]
        raise LeaselabError(
            f"is not UTF-8 text (byte 0x{bad:02x} at offset {error.start}); TOML must be UTF-8", file=source
        ) from None


def loads_toml(text: str, *, source: str) -> dict[str, Any]:
    """The TOML mapping in ``text``: syntax errors and over-deep nesting are one line naming ``source``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LeaselabError(f"bad TOML: {clamp(str(error), 100)}", file=source) from None
    except ValueError as error:  # e.g. an integer of more than 4300 digits
        raise LeaselabError(f"bad TOML: {clamp(str(error), 60)}", file=source) from None
    except RecursionError:
        raise LeaselabError(f"nested deeper than {MAX_DEPTH} levels of arrays and tables", file=source) from None
    field = deepest_beyond(data, MAX_DEPTH)
    if field is not None:
        raise LeaselabError(f"nested deeper than {MAX_DEPTH} levels of arrays and tables", file=source, field=field)
    return data


def deepest_beyond(data: dict[str, Any], limit: int) -> str | None:
    """The path of the first table or array at a depth past ``limit`` (the top-level table is depth 1),
    or None; iterative, so a structure deeper than Python's recursion limit is measured too."""
    stack: list[tuple[Any, tuple[str, ...], int]] = [(data, (), 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict | list) and depth > limit:
            return ".".join(path)
        if isinstance(value, dict):
            stack.extend((v, (*path, str(k)), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*path, str(i)), depth + 1) for i, v in enumerate(value))
    return None


def check_output_directory(path: Path, *, field: str = "--out") -> None:
    """Refuse, before any work, an output directory that cannot be one: an existing file (or a path
    through one), or a place this process may not create or write in. Nothing is created here."""
    source = str(path)
    if path.exists() and not path.is_dir():
        raise LeaselabError("is a file, not a directory: give a directory to write into", file=source, field=field)
    existing = path
    while not existing.exists():
        if existing.is_symlink():
            raise LeaselabError("is a broken symbolic link, not a directory", file=source, field=field)
        parent = existing.parent
        if parent == existing:
            break
        existing = parent
    if existing.exists() and not existing.is_dir():
        what = f"'{existing.name}' in this path is a file, so no directory can be made under it"
        raise LeaselabError(what, file=source, field=field)
    if existing.exists() and not os.access(existing, os.W_OK | os.X_OK):
        raise LeaselabError(f"cannot write in '{existing}' (permission denied)", file=source, field=field)
