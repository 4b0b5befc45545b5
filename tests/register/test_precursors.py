"""The chains the guided explorer climbs (``register.precursors``), on the findings' own counterexamples
and on near misses built from them by changing one record.

A chain must follow each recorded counterexample to its last step (else the explorer would cut short of
where the finding is decided), and a near miss, the same history with one condition of a step broken,
must stop before that step (else it would spend its branches on states that cannot go on)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from checks.history import Op, OpType
from model.constants import LEASE_S
from register.precursors import (
    PRECURSORS,
    STEPS,
    TIMED,
    _stalled_position_read,
    lagging_clock_fence,
    lagging_stamp_gap,
    lagging_stamps,
    progress,
    stale_snapshot_requeue,
    stalled_position_read,
    stamp_latency,
)
from sim.explore.counterexample import read

ENTRIES = Path("register/entries")
CASES = {
    "F-15": ("F-15-stalled-position-read-settle.toml", 5),
    "F-16": ("F-16-lagging-clock-dead-letter.toml", 2),
    "F-18": ("F-18-stale-snapshot-requeue-reruns-write.toml", 4),
    "F-21": ("F-21-stalled-clear-dead-letter.toml", 4),
    "F-13": ("F-13-stale-suspend-reruns-write.toml", 4),
    "F-19": ("F-19-reaper-clock-ahead-requeue-past-budget.toml", 4),
    "F-20": ("F-20-reaper-clock-ahead-dead-letter.toml", 3),
    "F-22": ("F-22-reaper-clock-ahead-exhausted-over-new-fence.toml", 4),
}


@cache
def history_of(name: str) -> tuple[Op, ...]:
    return tuple(read(ENTRIES / name).run().history)


def changed(history: tuple[Op, ...], index: int, **value: object) -> list[Op]:
    """``history`` with record ``index``'s value updated by ``value``."""
    out = list(history)
    op = out[index]
    out[index] = op._replace(value={**op.value, **value})
    return out


@pytest.mark.parametrize("finding", sorted(CASES))
def test_each_counterexample_reaches_the_last_step_of_its_chain(finding: str) -> None:
    name, level = CASES[finding]
    reached = {p.finding: p for p in progress(history_of(name))}
    assert reached[finding].level == level
    assert reached[finding].cut == reached[finding].marks[-1] + 1
    assert list(reached[finding].marks) == sorted(reached[finding].marks)


def test_only_the_named_chains_are_read() -> None:
    history = history_of(CASES["F-18"][0])
    assert [p.finding for p in progress(history, ["F-18"])] == ["F-18"]
    assert progress(history, ["F-15"]) == [] or all(p.finding == "F-15" for p in progress(history, ["F-15"]))
    assert set(PRECURSORS) == set(CASES)


def test_f18_a_short_stamp_stall_is_no_first_step() -> None:
    history = history_of(CASES["F-18"][0])
    stall = next(op for op in history if op.op == "fault")
    assert stale_snapshot_requeue(history)[0] == stall.index
    assert stale_snapshot_requeue(changed(history, stall.index, slow_s=30.0)) == ()


def test_f18_a_reaper_that_read_the_fence_is_no_second_step() -> None:
    history = history_of(CASES["F-18"][0])
    marks = stale_snapshot_requeue(history)
    broken = changed(history, marks[1], pending_effect="non_idempotent_write", decision="not_retryable")
    assert len(stale_snapshot_requeue(broken)) == 1


def test_f18_a_requeue_stall_that_ends_before_the_stamp_is_no_third_step() -> None:
    history = history_of(CASES["F-18"][0])
    marks = stale_snapshot_requeue(history)
    assert len(stale_snapshot_requeue(changed(history, marks[2], slow_s=60.0))) == 2


def test_f15_the_claim_is_the_first_step_and_the_stall_right_after_it_the_second() -> None:
    history = history_of(CASES["F-15"][0])
    claim, stall = (history[i] for i in stalled_position_read(history)[:2])
    assert claim.op == "store" and claim.value["transition"].startswith("T3") and claim.value["matched"]
    assert stall.op == "fault" and stall.value["kind"] == "slow" and stall.value["target"] == claim.process
    assert stall.index == claim.index + 1


def test_f15_a_stall_that_ends_within_the_lease_is_no_second_step() -> None:
    history = history_of(CASES["F-15"][0])
    stall = stalled_position_read(history)[1]
    short = stalled_position_read(changed(history, stall, slow_s=100.0))
    assert stall not in short  # another trail (the new owner's own stall) may begin later
    assert len(short) < 5


def with_quiet_at(history: tuple[Op, ...], time_s: float) -> list[Op]:
    """``history`` with the nemesis going quiet at ``time_s`` (appended last: the chain reads when, not where)."""
    quiet = Op(len(history), time_s, "nemesis", "phase", "", OpType.INFO, {"phase": "quiet"})
    return [*history, quiet]


def test_f15_a_stall_that_ends_after_the_nemesis_went_quiet_is_no_second_step() -> None:
    history = history_of(CASES["F-15"][0])
    stall = history[stalled_position_read(history)[1]]
    ends = stall.time_s + stall.value["slow_s"]
    assert stalled_position_read(with_quiet_at(history, ends + 1.0)) == stalled_position_read(history)
    assert len(stalled_position_read(with_quiet_at(history, ends - 1.0))) == 1  # claims only


def test_f15_a_claim_within_a_lease_of_the_quiet_phase_is_no_step() -> None:
    history = history_of(CASES["F-15"][0])
    claim = history[stalled_position_read(history)[0]]

    def begun(quiet_s: float) -> list[int]:
        return [trail.marks[0] for trail in _stalled_position_read(with_quiet_at(history, quiet_s))]

    assert claim.index in begun(claim.time_s + LEASE_S + 1.0)
    assert claim.index not in begun(claim.time_s + LEASE_S - 1.0)
    assert all(history[i].time_s + LEASE_S < claim.time_s + LEASE_S - 1.0 for i in begun(claim.time_s + LEASE_S - 1.0))


@pytest.mark.parametrize("status", ["completed", "suspended", "queued"])
def test_f15_a_read_that_returns_to_a_row_no_longer_running_is_no_last_step(status: str) -> None:
    history = list(history_of(CASES["F-15"][0]))
    marks = stalled_position_read(history)
    claim = history[marks[3]]
    # the new owner's claim, rewritten as a row no longer running: the stalled read returns to it
    done = changed(tuple(history), claim.index, row={**claim.value["row"], "status": status})
    assert len(stalled_position_read(done)) == 4


def test_f16_a_clock_ahead_is_no_first_step() -> None:
    history = list(history_of(CASES["F-16"][0]))
    for op in history:
        if op.op == "fault" and op.value.get("family") == "clock_skew":
            history[op.index] = op._replace(value={**op.value, "offset_s": abs(float(op.value["offset_s"]))})
    assert lagging_clock_fence(history) == ()


def test_f16_a_fence_for_an_idempotent_write_is_no_second_step() -> None:
    history = history_of(CASES["F-16"][0])
    marks = lagging_clock_fence(history)
    stamp = history[marks[1]]
    broken = changed(history, stamp.index, row={**stamp.value["row"], "pending_effect": "idempotent_write"})
    assert len(lagging_clock_fence(broken)) == 1


@pytest.mark.parametrize("chain", [stalled_position_read, stale_snapshot_requeue, lagging_clock_fence])
def test_an_empty_history_takes_no_step(chain: Callable[[list[Op]], tuple[int, ...]]) -> None:
    assert chain([]) == ()


def retimed(history: tuple[Op, ...], index: int, time_s: float) -> list[Op]:
    """``history`` with record ``index`` stamped at ``time_s`` (nothing else moves)."""
    out = list(history)
    out[index] = out[index]._replace(time_s=time_s)
    return out


def f16_write_return() -> int:
    """The record at which F-16's stamped write returned (the worker's tool ok after the stamp)."""
    history = history_of(CASES["F-16"][0])
    stamp = history[lagging_clock_fence(history)[-1]]
    return next(
        op.index
        for op in history[stamp.index + 1 :]
        if op.process == stamp.process and op.op == "tool" and op.type.value == "ok"
    )


def test_f16_the_counterexample_is_inside_the_window_of_its_coincidence() -> None:
    history = history_of(CASES["F-16"][0])
    marks = lagging_clock_fence(history)
    measured = lagging_stamp_gap(history, marks)
    assert measured is not None
    gap, width = measured
    stamp, returned = history[marks[-1]], history[f16_write_return()]
    statement = stamp.time_s - history[stamp.index - 1].time_s  # the stamp's own latency: the window
    assert gap == 0.0
    assert width == pytest.approx(statement / (returned.time_s - stamp.time_s))


def test_f16_a_write_returning_earlier_is_a_near_miss_by_its_distance_from_the_window() -> None:
    """The write returning half a second sooner: the fence is cleared before the tick's snapshot."""
    history = history_of(CASES["F-16"][0])
    marks = lagging_clock_fence(history)
    index = f16_write_return()
    _, width = lagging_stamp_gap(history, marks) or (0.0, 0.0)
    tick = next(op.time_s for op in history[index:] if op.process.startswith("reaper") and op.op == "segment")
    stamp = history[marks[-1]]
    latency = stamp.time_s - history[stamp.index - 1].time_s
    early = retimed(history, index, tick - latency - 0.5)
    measured = lagging_stamp_gap(early, marks)
    assert measured is not None
    assert measured[0] == pytest.approx(0.5)
    late = retimed(history, index, tick + 0.25)  # after the tick: the dead-letter commits on the fence
    assert (lagging_stamp_gap(late, marks) or (9.0, 0.0))[0] == pytest.approx(0.25)
    assert width > 0


def test_f16_no_gap_without_the_last_step_or_a_returning_write() -> None:
    history = history_of(CASES["F-16"][0])
    marks = lagging_clock_fence(history)
    assert lagging_stamp_gap(history, marks[:1]) is None
    unreturned = [op for op in history if op.index != f16_write_return()]
    assert lagging_stamp_gap(unreturned, marks) is None  # the segment ended before its write returned
    assert set(TIMED) <= set(STEPS) == set(PRECURSORS)


def test_f16_every_lagging_stamp_is_listed_with_its_lag() -> None:
    history = history_of(CASES["F-16"][0])
    marks = lagging_clock_fence(history)
    assert lagging_stamps(history) == [(marks[0], marks[1])]
    stamp = history[marks[-1]]
    assert stamp_latency(history, stamp) == pytest.approx(stamp.time_s - history[stamp.index - 1].time_s)
    unlagged = [op for op in history if op.index != marks[0]]  # no clock fault: no lagging stamp
    assert lagging_stamps(unlagged) == []
