"""Load scenarios from TOML files or the named library, with one-line errors naming file and field."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from model.errors import LeaselabError
from scenarios.schema import Scenario

LIBRARY_DIR = Path(__file__).resolve().parent / "library"


@dataclass(frozen=True, slots=True)
class LibraryEntry:
    name: str
    description: str
    path: Path


def _field_path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def parse_scenario(data: dict[str, Any], *, source: str) -> Scenario:
    """Validate a decoded TOML mapping; the first error becomes a LeaselabError."""
    try:
        return Scenario.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = _field_path(tuple(first.get("loc", ())))
        message = str(first.get("msg", "invalid value"))
        if first.get("type") == "extra_forbidden":
            message = "unknown key"
        raise LeaselabError(message, file=source, field=field, hint="see scenarios/schema.py") from None


_LOADED: dict[Path, tuple[tuple[int, int], Scenario]] = {}
_LOADED_MAX = 64


def load_file(path: Path) -> Scenario:
    """Parse and validate a scenario file; cached per path while its size and mtime are unchanged.

    Scenarios are frozen, so one parsed object can serve every simulation: parsing and
    validating the TOML cost more than a small simulation (``simulate("default", ...)``
    called in a loop re-read the file each time).
    """
    where = path.absolute()  # the cache key: a relative path names another file after a chdir
    try:
        stat = where.stat()
    except OSError:
        stat = None
    if stat is not None:
        key = (stat.st_mtime_ns, stat.st_size)
        cached = _LOADED.get(where)
        if cached is not None and cached[0] == key:
            return cached[1]
    scenario = _parse_file(path)
    if stat is not None:
        if len(_LOADED) >= _LOADED_MAX:
            _LOADED.pop(next(iter(_LOADED)))
        _LOADED[where] = (key, scenario)
    return scenario


def _parse_file(path: Path) -> Scenario:
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LeaselabError("no such scenario file", file=source) from None
    except OSError as error:
        raise LeaselabError(f"cannot read: {error.strerror}", file=source) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LeaselabError(f"bad TOML: {error}", file=source) from None
    return parse_scenario(data, source=source)


def library() -> list[LibraryEntry]:
    """The named scenarios shipped under scenarios/library, sorted by name."""
    entries = []
    for path in sorted(LIBRARY_DIR.glob("*.toml")):
        scenario = load_file(path)
        entries.append(LibraryEntry(scenario.name, scenario.description, path))
    return entries


def library_names() -> list[str]:
    return sorted(p.stem for p in LIBRARY_DIR.glob("*.toml"))


def load_scenario(spec: str | Path | Scenario) -> Scenario:
    """A Scenario from itself, a file path, or a library name."""
    if isinstance(spec, Scenario):
        return spec
    path = Path(spec)
    if path.suffix == ".toml" or path.exists():
        return load_file(path)
    candidate = LIBRARY_DIR / f"{spec}.toml"
    if candidate.exists():
        return load_file(candidate)
    raise LeaselabError(
        f"unknown scenario '{spec}'",
        field="scenario",
        hint="give a .toml path or one of: " + ", ".join(library_names()),
    )
