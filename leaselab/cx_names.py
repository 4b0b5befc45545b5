"""The names of the counterexample files ``explore`` and ``verify`` write, and what a write keeps.

Why: a file is named by what it is a counterexample of (scenario, policy, invariant, mechanism), so
that a rerun of the same search replaces its own file instead of piling up copies. Everything that
changes the simulated system must therefore be in the name: a search with ``--flag`` overrides, or
``explore --ranges deployment``, would otherwise overwrite the plain search's file under a name that
describes neither. And a search stopped by Ctrl-C writes what it found unshrunk: where an earlier
search already left a minimal file of that name, the unshrunk one goes beside it
(``NAME.unshrunk.toml``), so the minimal one is not lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sim.explore.counterexample import Counterexample

NOT_SHRUNK = "not shrunk"
"""What the note of every unshrunk counterexample says (an interrupted search's, a guided branch's)."""


def policy_tag(policy: str, flags: Mapping[str, bool | str]) -> str:
    """``head``, or ``head+idempotency_keys+write_fence=off`` for the overrides that change the preset:
    ``+NAME`` switched on, ``+NAME=off`` switched off, sorted by name."""
    from model.policy import parse_flag_value, resolve_policy

    base = resolve_policy(policy)
    parts = [policy]
    for name in sorted(flags):
        value = parse_flag_value(name, flags[name])
        if getattr(base, name) == value:
            continue  # the preset's own value: the same policy, the same name
        parts.append(name if value else f"{name}=off")
    return "+".join(parts)


def scenario_tag(stem: str, ranges: str = "library") -> str:
    """The scenario's part of a name: its stem, with ``@deployment`` at deployment fault ranges."""
    return stem if ranges == "library" else f"{stem}@{ranges}"


def _is_unshrunk(cx: Counterexample) -> bool:
    return NOT_SHRUNK in cx.note


def write_keeping_minimal(cx: Counterexample, path: Path) -> Path:
    """Write ``cx`` to ``path`` and return where it went: beside ``path`` when ``cx`` is unshrunk and
    ``path`` holds a shrunk counterexample (an earlier search's minimal file is never replaced by an
    unshrunk one); over ``path`` otherwise, as a rerun of the same search replaces its own file."""
    from model.errors import LeaselabError
    from sim.explore.counterexample import read, write

    if _is_unshrunk(cx) and path.is_file():
        try:
            earlier = read(path)
        except LeaselabError:
            earlier = None  # not a counterexample this leaselab reads: nothing minimal to keep
        if earlier is not None and not _is_unshrunk(earlier):
            return write(cx, path.with_name(path.stem + ".unshrunk.toml"))
    return write(cx, path)
