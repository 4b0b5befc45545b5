"""Counterexample files from Python: the public ``read_counterexample`` and ``write_counterexample``.

Thin faces over :mod:`sim.explore.counterexample` that take a path as a ``str`` or a
:class:`pathlib.Path`, as a notebook user writes it.
"""

from __future__ import annotations

from pathlib import Path

from sim.explore.counterexample import Counterexample, read, write


def read_counterexample(path: str | Path) -> Counterexample:
    """The counterexample file at ``path`` (what ``leaselab replay`` reads), checked whole: a bad file is
    one :class:`model.errors.LeaselabError` naming the file and the field. ``.run()`` replays it."""
    return read(Path(path))


def write_counterexample(cx: Counterexample, path: str | Path) -> Path:
    """Write ``cx`` to ``path`` as a versioned TOML counterexample file (folders created, written whole
    through a temporary file); return the path."""
    return write(cx, Path(path))
