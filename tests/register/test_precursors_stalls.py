"""F-21's and F-13's chains (``register.precursors``: a stalled fence clear, a stale suspend) on the
findings' own counterexamples and on near misses built from them by changing one record.

A chain must follow each recorded counterexample to its last step, and a near miss, the same history
with one condition of a step broken, must stop before that step (else the explorer would spend its
branches on states that cannot go on)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.history import Op, OpType
from register.precursors import STEPS, progress, stale_suspend, stalled_clear
from sim.explore.counterexample import read
from tests.register.test_precursors import changed, history_of

F21 = "F-21-stalled-clear-dead-letter.toml"
F13 = "F-13-stale-suspend-reruns-write.toml"
F21_EARLIER_ROW = Path("tests/properties/data/f21-stalled-earlier-row.toml")


def failed(history: tuple[Op, ...] | list[Op], index: int) -> list[Op]:
    """``history`` with record ``index`` turned into a failed statement (it never applied)."""
    out = list(history)
    out[index] = out[index]._replace(type=OpType.FAIL)
    return out


def test_f21_each_step_is_the_record_the_counterexample_took_it_at() -> None:
    history = history_of(F21)
    marks = stalled_clear(history)
    assert len(marks) == STEPS["F-21"] == 4
    stall, snapshot, reaper_stall, clear = (history[i] for i in marks)
    assert stall.op == "fault" and stall.value["target"] == clear.process
    assert snapshot.value["what"] == "SelectStale" and "run-002" in snapshot.value["result"]
    assert reaper_stall.value["target"] == snapshot.process
    assert clear.value["site"] == "executor.boundary" and clear.value["row"]["pending_effect"] == ""


def test_f21_a_stalled_earlier_row_opens_the_window_too() -> None:
    """The variant whose window is another row's dead-letter, listed first: the reaper's stall comes
    before it decides on the run, and the chain still reaches its last step."""
    history = read(F21_EARLIER_ROW).run().history
    marks = stalled_clear(history)
    assert len(marks) == 4
    assert history[marks[2]].run != history[marks[3]].run  # the stall was on the other row's statement


def test_f21_a_clear_stall_within_the_lease_is_no_first_step() -> None:
    history = history_of(F21)
    first = stalled_clear(history)[0]
    assert first not in stalled_clear(changed(history, first, slow_s=100.0))


def test_f21_a_snapshot_without_the_fence_is_no_second_step() -> None:
    history = history_of(F21)
    marks = stalled_clear(history)
    unfenced = changed(history, marks[1], fences=[""])
    assert stalled_clear(unfenced) == (marks[0],)


def test_f21_a_reaper_stall_that_ends_before_the_clear_is_no_third_step() -> None:
    history = history_of(F21)
    marks = stalled_clear(history)
    assert stalled_clear(changed(history, marks[2], slow_s=60.0)) == marks[:2]


def test_f21_a_clear_that_failed_is_no_last_step() -> None:
    history = history_of(F21)
    marks = stalled_clear(history)
    assert stalled_clear(failed(history, marks[3])) == marks[:3]


def test_f21_a_stalled_stamp_is_not_a_stalled_clear() -> None:
    """The same stall on the fence's stamp (F-11's, F-18's first step) begins no F-21 trail."""
    history = history_of(F21)
    marks = stalled_clear(history)
    issued = history[marks[0] - 1]
    assert issued.value["site"] == "executor.boundary"
    stamp = changed(history, issued.index, site="executor.fence")
    assert marks[0] not in stalled_clear(stamp)


def test_f13_each_step_is_the_record_the_counterexample_took_it_at() -> None:
    history = history_of(F13)
    marks = stale_suspend(history)
    assert len(marks) == STEPS["F-13"] == 4
    stall, requeue, landing, suspend = (history[i] for i in marks)
    assert stall.value["target"] == suspend.process
    assert requeue.value["transition"].startswith("T13")
    assert landing.op == "landing" and landing.value["process"] != suspend.process
    assert suspend.value["row"]["status"] == "waiting_for_approval"
    assert suspend.value["row"]["pending_effect"] == "non_idempotent_write"


def test_f13_a_suspend_stall_within_the_lease_is_no_first_step() -> None:
    history = history_of(F13)
    first = stale_suspend(history)[0]
    assert first not in stale_suspend(changed(history, first, slow_s=300.0))


def test_f13_a_dead_letter_is_no_second_step() -> None:
    history = history_of(F13)
    marks = stale_suspend(history)
    dead = changed(history, marks[1], transition="T14 deadLetterStale")
    assert stale_suspend(dead) == marks[:1]


def test_f13_the_stalled_segments_own_write_is_no_third_step() -> None:
    history = history_of(F13)
    marks = stale_suspend(history)
    stalled = history[marks[-1]].process
    own = changed(history, marks[2], process=stalled)
    assert stale_suspend(own) == marks[:2]


def test_f13_a_suspend_over_a_cleared_fence_is_no_last_step() -> None:
    history = history_of(F13)
    marks = stale_suspend(history)
    suspend = history[marks[3]]
    cleared = changed(history, suspend.index, row={**suspend.value["row"], "pending_effect": ""})
    assert stale_suspend(cleared) == marks[:3]


@pytest.mark.parametrize("finding", ["F-13", "F-21"])
def test_the_other_counterexamples_do_not_reach_these_last_steps(finding: str) -> None:
    """F-15's, F-16's and F-18's counterexamples take no last step of these chains."""
    for name in (
        "F-15-stalled-position-read-settle.toml",
        "F-16-lagging-clock-dead-letter.toml",
        "F-18-stale-snapshot-requeue-reruns-write.toml",
    ):
        reached = {p.finding: p.level for p in progress(history_of(name), [finding])}
        assert reached.get(finding, 0) < STEPS[finding]


@pytest.mark.parametrize("finding", ["F-13", "F-21"])
def test_these_chains_are_climbed_only_by_a_search_that_names_them(finding: str) -> None:
    """An open search's draws stay as they were measured; a search stopping at the finding climbs it."""
    from sim.explore.base import Budget
    from sim.explore.guided import chains

    assert finding not in chains(Budget(seconds=1e9, simulations=10, seed=0))
    named = Budget(seconds=1e9, simulations=10, seed=0, stop_at_first=True, mechanisms=frozenset({finding}))
    assert chains(named) == (finding,)
