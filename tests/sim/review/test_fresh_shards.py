"""A report's shards are reused only at the same clean commit; when they are deleted the report says how
many and why before it recomputes, and Ctrl-C says what a resume will keep."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from leaselab.cli import app
from sim.review import provenance
from sim.review.builtin import builtin_review
from sim.review.provenance import fresh_shards

CONFIG = builtin_review()


def _shards(where: Path, count: int) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (where / f"s{i}.parquet").write_bytes(b"x")
    return where


def _at(monkeypatch: pytest.MonkeyPatch, commit: str) -> None:
    monkeypatch.setattr(provenance, "git_commit", lambda where=None: commit)


def test_the_same_clean_commit_keeps_the_shards_and_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _at(monkeypatch, "a" * 40)
    shards = tmp_path / "shards"
    assert fresh_shards(shards, CONFIG) == ""  # a new directory: nothing to delete
    _shards(shards, 3)
    assert fresh_shards(shards, CONFIG) == ""
    assert len(list(shards.glob("*.parquet"))) == 3


def test_another_commit_deletes_them_and_says_how_many_and_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shards = tmp_path / "shards"
    _at(monkeypatch, "a" * 40)
    fresh_shards(shards, CONFIG)
    _shards(shards, 3)
    _at(monkeypatch, "b" * 40)
    said = fresh_shards(shards, CONFIG)
    assert said == f"{shards}: 3 shards of an earlier run deleted, computed by commit {'a' * 12}, now {'b' * 12}"
    assert not list(shards.glob("*.parquet"))


def test_uncommitted_changes_delete_them_saying_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shards = tmp_path / "shards"
    _at(monkeypatch, "a" * 40 + "+dirty")
    fresh_shards(shards, CONFIG)
    _shards(shards, 2)
    said = fresh_shards(shards, CONFIG)  # the same dirty tree: still not reusable
    assert said.endswith(
        "2 shards of an earlier run deleted, as the code has uncommitted changes: shards are "
        "reused only at the same clean commit"
    )


@pytest.mark.parametrize(("commit", "warned"), [("c" * 40, False), ("c" * 40 + "+dirty", True)])
def test_ctrl_c_during_a_report_says_what_is_kept_and_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, commit: str, warned: bool
) -> None:
    import sim.review.review as review

    out = tmp_path / "out"
    _shards(out / "shards", 2)

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(review, "run_review", interrupted)
    _at(monkeypatch, commit)
    result = CliRunner().invoke(app, ["report", "--out", str(out), "--seeds", "2", "--workers", "1"])
    assert result.exit_code == 130
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"leaselab: interrupted: 2 finished shards kept in {out / 'shards'}; resume with: leaselab")
    assert ("uncommitted changes, so a resume redoes them" in line) is warned
    assert "Traceback" not in result.output
