"""``leaselab mutants --auto``: its bad input, and its text report from a judged report."""

from __future__ import annotations

from collections.abc import Callable

from leaselab.auto_mutants_cli import auto_lines
from sim.explore.auto_judge import AutoReport, Judged, SweepKill
from sim.explore.auto_mutants import AutoMutant, Dropped, MutationSite


def test_auto_refuses_only(refused: Callable[..., str]) -> None:
    line = refused("mutants", "--auto", "--only", "kb1_finish_unguarded", names="--only")
    assert "--auto" in line


def test_auto_refuses_a_zero_sample(refused: Callable[..., str]) -> None:
    refused("mutants", "--auto", "--sample", "0", names="Invalid value for '--sample'")


def mutant(line: int) -> AutoMutant:
    site = MutationSite("hooks.py", "core/AddNot", 0, line)
    return AutoMutant(site, "", f"--- a/model/hooks.py\n+++ b/model/hooks.py\n@@ -{line} @@\n-    a\n+    not a")


def test_the_text_report_gives_the_score_its_interval_and_every_survivor_with_its_diff() -> None:
    report = AutoReport(sites=100, sample=4, seed=0)
    report.judged = [
        Judged(mutant(1), SweepKill("terminal_is_terminal", "unexplained", "default", 3), "tests/x.py::t", 1.0),
        Judged(mutant(2), None, "tests/x.py::u", 1.0),
        Judged(mutant(3), None, None, 1.0),
    ]
    report.dropped = [Dropped(mutant(4), "equivalent", "the same bytecode")]
    lines = auto_lines(report, (0.1, 0.9))
    text = "\n".join(lines)
    assert "sweep-only score among the 2 the unit tests kill: 0.50 (1 of 2)" in text
    assert "95% Wilson interval [0.10, 0.90]" in text
    assert "SURVIVED  hooks.py:2:AddNot#0: tests fail at tests/x.py::u" in text
    assert "+    not a" in text
    assert "unkilled  hooks.py:3:AddNot#0" in text
    assert "equivalent hooks.py:4:AddNot#0: the same bytecode" in text


def _recorded(line: int) -> AutoMutant:
    """A mutant register/blind_mutants.py records (an unused default of RequeueStale)."""
    site = MutationSite("transitions.py", "core/ReplaceTrueWithFalse", 26, line)
    diff = (f"--- a/model/transitions.py\n+++ b/model/transitions.py\n@@ -{line} @@\n     now: int\n"
            "-    clear_fence: bool = True\n+    clear_fence: bool = False")  # fmt: skip
    return AutoMutant(site, "", diff)


def test_a_survivor_on_record_is_listed_with_its_reason_and_the_score_is_given_without_it() -> None:
    report = AutoReport(sites=100, sample=3, seed=0)
    report.judged = [
        Judged(mutant(1), SweepKill("terminal_is_terminal", "unexplained", "default", 3), "tests/x.py::t", 1.0),
        Judged(mutant(2), None, "tests/x.py::u", 1.0),
        Judged(_recorded(346), None, "tests/x.py::v", 1.0),
    ]
    text = "\n".join(auto_lines(report, (0.1, 0.9)))
    assert "0.33 (1 of 3)" in text
    assert "without the 1 survivors register/blind_mutants.py records as equivalent" in text
    assert "0.50 (1 of 2)" in text
    assert "blind     transitions.py:346:ReplaceTrueWithFalse#26 (unreachable): an unused default" in text
    assert "SURVIVED  hooks.py:2:AddNot#0" in text


def test_a_record_matches_only_its_own_change() -> None:
    from register.blind_mutants import reason_for

    assert reason_for(_recorded(5).document()) is not None
    moved = _recorded(400).document()
    assert reason_for(moved) is not None, "a record survives line moves"
    other = {**moved, "diff": str(moved["diff"]).replace("= False", "= None")}
    assert reason_for(other) is None
    assert reason_for({**moved, "file": "model/hooks.py"}) is None


def test_every_blind_record_names_a_line_of_its_file_once() -> None:
    """A record whose line no longer exists would silently explain nothing; two alike would hide a typo."""
    from pathlib import Path

    from register.blind_mutants import BLIND

    root = Path(__file__).resolve().parents[2]
    for record in BLIND:
        lines = {line.strip() for line in (root / record.file).read_text(encoding="utf-8").splitlines()}
        assert record.before in lines, f"{record.file}: {record.before!r}"
        assert record.after != record.before and record.reason
    assert len({(r.file, r.before, r.after) for r in BLIND}) == len(BLIND)
