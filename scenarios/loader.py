"""Load scenarios from TOML files or the named library, with one-line errors naming file and field.

Files are read through :func:`scenarios.user_files.read_toml` (size, UTF-8, TOML, nesting depth) and
validated against :class:`scenarios.schema.Scenario`; the first error is one line
(:func:`scenarios.messages.validation_error`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from model.errors import LeaselabError, unknown_name
from scenarios.messages import validation_error
from scenarios.schema import Scenario
from scenarios.user_files import read_toml

LIBRARY_DIR = Path(__file__).resolve().parent / "library"


@dataclass(frozen=True, slots=True)
class LibraryEntry:
    name: str
    description: str
    path: Path


def parse_scenario(data: dict[str, Any], *, source: str) -> Scenario:
    """Validate a decoded TOML mapping; the first error becomes a LeaselabError."""
    try:
        return Scenario.model_validate(data)
    except ValidationError as error:
        raise validation_error(error, model=Scenario, source=source, hint="see scenarios/schema.py") from None


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
    except (OSError, ValueError):
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
    return parse_scenario(read_toml(path, what="scenario file"), source=str(path))


def library() -> list[LibraryEntry]:
    """The named scenarios shipped under scenarios/library, sorted by name."""
    entries = []
    for path in sorted(LIBRARY_DIR.glob("*.toml")):
        scenario = load_file(path)
        entries.append(LibraryEntry(scenario.name, scenario.description, path))
    return entries


def library_names() -> list[str]:
    return sorted(p.stem for p in LIBRARY_DIR.glob("*.toml"))


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; a name no file system accepts (a NUL byte, too long) does not."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def load_scenario(spec: str | Path | Scenario) -> Scenario:
    """A Scenario from itself, a file path, or a library name."""
    if isinstance(spec, Scenario):
        return spec
    path = Path(spec)
    if path.suffix == ".toml" or _exists(path):
        return load_file(path)
    candidate = LIBRARY_DIR / f"{spec}.toml"
    if _exists(candidate):
        return load_file(candidate)
    what, hint = unknown_name("scenario", str(spec), library_names(), see="`leaselab scenarios`; or a .toml path")
    raise LeaselabError(what, field="scenario", hint=hint)
