"""A report directory written again: the files of an earlier run that this run did not write.

``leaselab report`` into a directory that already holds a report rewrites ``index.html``,
``report.md`` and ``report.json``, keeps or redoes its shards (``sim.review.provenance.fresh_shards``),
and writes the counterexamples and figures it found. Those of the earlier run that this run did not
write would stay beside them, and a reviewer listing ``counterexamples/`` would see ones this report
never mentions; :func:`remove_stale` deletes them, and returns which, for the command to say so.

A file is this run's when it was written (its modification time) at or after the run started: every
file the report writes is written whole through a temporary file and a rename, so a file untouched
since before the start is the earlier run's. Only the report's own folders are cleaned
(:data:`OWN_FOLDERS`); anything else a user put in the directory is left alone.
"""

from __future__ import annotations

from pathlib import Path

from sim.sweep.directory import COUNTEREXAMPLES

FIGURES = "figures"
OWN_FOLDERS = (COUNTEREXAMPLES, FIGURES)
"""The folders a report writes whole on every run (shards are kept or redone by their own rules)."""


def stale_files(out: Path, started_ns: int) -> list[Path]:
    """Files under ``out``'s own folders last written before ``started_ns`` (``time.time_ns()``)."""
    found = []
    for folder in OWN_FOLDERS:
        root = out / folder
        if root.is_dir():
            found += [p for p in sorted(root.rglob("*")) if p.is_file() and p.stat().st_mtime_ns < started_ns]
    return found


def remove_stale(out: Path, started_ns: int) -> list[Path]:
    """Delete :func:`stale_files` and the folders they leave empty; return the files, relative to ``out``."""
    removed = stale_files(out, started_ns)
    for path in removed:
        path.unlink()
    for folder in OWN_FOLDERS:
        root = out / folder
        if root.is_dir():
            for directory in sorted((d for d in root.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)):
                if not any(directory.iterdir()):
                    directory.rmdir()
    return [path.relative_to(out) for path in removed]


def removed_line(removed: list[Path], limit: int = 3) -> str:
    """``removed 46 files of an earlier run that this one did not write: counterexamples/a.toml, ... (46)``."""
    if not removed:
        return ""
    shown = ", ".join(str(p) for p in removed[:limit])
    more = f", ... ({len(removed):,} in all)" if len(removed) > limit else ""
    noun = "file" if len(removed) == 1 else "files"
    return f"removed {len(removed):,} {noun} of an earlier run that this one did not write: {shown}{more}"
