"""``leaselab mutants --auto``: its bad input, and its text report from a judged report."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from leaselab.auto_mutants_cli import auto_lines
from sim.explore.auto_judge import AutoReport, Judged, SweepKill, differing
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


def _with_recorded(differ: int | None, paired: int) -> AutoReport:
    report = AutoReport(sites=100, sample=3, seed=0)
    report.judged = [
        Judged(mutant(1), SweepKill("terminal_is_terminal", "unexplained", "default", 3), "tests/x.py::t", 1.0),
        Judged(mutant(2), None, "tests/x.py::u", 1.0, 4, 10),
        Judged(_recorded(346), None, "tests/x.py::v", 1.0, differ, paired),
    ]
    return report


def test_a_survivor_on_record_with_identical_histories_is_dropped_as_equivalent_at_head() -> None:
    text = "\n".join(auto_lines(_with_recorded(0, 10), (0.1, 0.9)))
    assert "0.33 (1 of 3)" in text
    assert "without the 1 equivalent mutants of head" in text
    assert "0.50 (1 of 2)" in text
    assert "equiv.    transitions.py:346:ReplaceTrueWithFalse#26 (unreachable): an unused default" in text
    assert "histories differ in 0 of 10 paired draws" in text
    assert "SURVIVED  hooks.py:2:AddNot#0: tests fail at tests/x.py::u; histories differ in 4 of 10" in text


@pytest.mark.parametrize(("differ", "paired"), [(1, 10), (None, 0), (0, 0)])
def test_a_record_whose_histories_differ_or_were_not_compared_is_not_dropped(differ: int | None, paired: int) -> None:
    """The record is a claim; identical histories are its check, and a claim nothing checked is not taken."""
    text = "\n".join(auto_lines(_with_recorded(differ, paired), (0.1, 0.9)))
    assert "equivalent mutants of head" not in text
    assert "blind     transitions.py:346:ReplaceTrueWithFalse#26 (unreachable)" in text
    if differ:
        assert "THE RECORD IS CONTRADICTED: histories differ in 1 of 10" in text
    else:
        assert "CONTRADICTED" not in text, "a record nothing checked is unchecked, not contradicted"


def test_a_world_gap_is_never_dropped_even_with_identical_histories() -> None:
    from register.blind_mutants import BLIND, WORLD_GAP

    gap = next(record for record in BLIND if record.kind == WORLD_GAP)
    diff = f"--- a/{gap.file}\n+++ b/{gap.file}\n@@ -1 @@\n-    {gap.before}\n+    {gap.after}"
    site = MutationSite(gap.file.removeprefix("model/"), "core/AddNot", 0, 1)
    report = AutoReport(sites=100, sample=2, seed=0)
    report.judged = [
        Judged(mutant(1), SweepKill("terminal_is_terminal", "unexplained", "default", 3), "tests/x.py::t", 1.0),
        Judged(AutoMutant(site, "", diff), None, "tests/x.py::v", 1.0, 0, 10),
    ]
    text = "\n".join(auto_lines(report, (0.1, 0.9)))
    assert "(world gap)" in text and "equivalent mutants of head" not in text


def test_histories_differ_counts_changed_and_unpaired_draws() -> None:
    base = {("a", 1): "x", ("a", 2): "y", ("b", 1): "z"}
    assert differing(dict(base), base) == (0, 3)
    assert differing({**base, ("a", 2): "w"}, base) == (1, 3)
    assert differing({("a", 1): "x", ("a", 2): "y"}, base) == (1, 2)
    assert differing({}, base) == (None, 0)


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
