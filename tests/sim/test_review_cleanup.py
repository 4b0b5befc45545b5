"""A report written again into its directory: the counterexamples and figures of the earlier run that
this run did not write are removed, and named; shards, the manifest and a user's own files stay."""

from __future__ import annotations

import os
import time
from pathlib import Path

from sim.review.cleanup import remove_stale, removed_line, stale_files


def _file(path: Path, mtime_ns: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x", encoding="utf-8")
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


def test_only_the_earlier_runs_files_of_the_reports_own_folders_are_removed(tmp_path: Path) -> None:
    started = time.time_ns()
    before = started - 10**9
    old_cx = _file(tmp_path / "counterexamples" / "adr-104--gone.toml", before)
    old_nested = _file(tmp_path / "counterexamples" / "scenarios" / "gone.toml", before)
    old_png = _file(tmp_path / "figures" / "counterexample-23.png", before)
    new_cx = _file(tmp_path / "counterexamples" / "head--kept.toml")
    new_png = _file(tmp_path / "figures" / "curve-intensity.png")
    shard = _file(tmp_path / "shards" / "main__x.parquet", before)
    manifest = _file(tmp_path / "sweep.json", before)
    notes = _file(tmp_path / "my-notes.txt", before)
    assert stale_files(tmp_path, started) == [old_cx, old_nested, old_png]
    removed = remove_stale(tmp_path, started)
    assert removed == [
        Path("counterexamples/adr-104--gone.toml"),
        Path("counterexamples/scenarios/gone.toml"),
        Path("figures/counterexample-23.png"),
    ]
    assert not old_cx.exists() and not old_png.exists() and not old_nested.parent.exists()
    assert all(p.exists() for p in (new_cx, new_png, shard, manifest, notes))
    assert remove_stale(tmp_path, started) == []


def test_the_line_names_the_files_and_counts_them() -> None:
    files = [Path(f"counterexamples/{i}.toml") for i in range(5)]
    line = removed_line(files)
    assert line.startswith("removed 5 files of an earlier run that this one did not write: counterexamples/0.toml")
    assert line.endswith("... (5 in all)")
    assert removed_line(files[:1]).endswith(": counterexamples/0.toml")
    assert removed_line([]) == ""
