"""Fence and lease invariants: writes_fenced_under_lease, fence_matches_inflight_write."""

from __future__ import annotations

from invariant_histories import OTHER, WORKER, History, judge

from checks import Validity
from checks.history import OpType
from model.statements import (
    CLAIM_FOR_RESUME,
    CLAIM_QUEUED,
    MARK_PENDING_EFFECT,
    NAMES,
    RENEW_LEASE,
    REQUEUE,
    REQUEUE_STALE,
    SUSPEND_RUN,
)

NON_IDEM = "non_idempotent_write"
IDEM = "idempotent_write"


# -- writes_fenced_under_lease -----------------------------------------------------------


def test_fenced_write_under_a_held_lease_is_valid() -> None:
    b = History()
    b.enqueue()
    b.claim()
    b.write("c1", NON_IDEM)
    b.write("c2", IDEM, execution=2, seq=1)
    assert judge("writes_fenced_under_lease", b).valid is Validity.VALID


def test_write_without_a_fence_stamp_is_a_violation() -> None:
    b = History()
    start = b.start()
    invoke = b.tool("c1", NON_IDEM)
    verdict = judge("writes_fenced_under_lease", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (start, invoke)
    assert "fence" in verdict.explanation


def test_write_under_an_expired_lease_is_a_violation() -> None:
    b = History()
    b.start()
    stamp = b.store(NAMES[MARK_PENDING_EFFECT], pending_effect=NON_IDEM, lease_expires=5)
    invoke = b.tool("c1", NON_IDEM, time_s=50.0)
    verdict = judge("writes_fenced_under_lease", b)
    assert verdict.witness == (stamp, invoke)
    assert "lease expired" in verdict.explanation


EPOCH_S = 1_700_000_000


def _with_epoch(lease_after_epoch_s: int) -> tuple[History, int, int]:
    """A write at true time 50 s after an epoch the history states, under a lease of that many seconds
    after the epoch (unix seconds in the row, as the world's clocks write them)."""
    b = History()
    b.add("phase", OpType.INFO, run="", process="nemesis", time_s=0.0, phase="chaos", epoch_s=EPOCH_S)
    b.start()
    stamp = b.store(NAMES[MARK_PENDING_EFFECT], pending_effect=NON_IDEM, lease_expires=EPOCH_S + lease_after_epoch_s)
    invoke = b.tool("c1", NON_IDEM, time_s=50.0)
    return b, stamp, invoke


def test_a_lease_in_unix_seconds_is_judged_against_the_epoch_the_history_states() -> None:
    b, _, _ = _with_epoch(950)
    assert judge("writes_fenced_under_lease", b).valid is Validity.VALID


def test_a_lease_in_unix_seconds_before_the_call_is_a_violation() -> None:
    b, stamp, invoke = _with_epoch(-1665)
    verdict = judge("writes_fenced_under_lease", b)
    assert verdict.witness == (stamp, invoke)
    assert "lease expired (-1665 < 50.0)" in verdict.explanation


def test_write_by_a_segment_that_does_not_hold_the_row_is_a_violation() -> None:
    b = History()
    b.enqueue()
    b.claim(identity=OTHER)
    stamp = b.stamp(NON_IDEM, identity=OTHER)
    invoke = b.tool("c1", NON_IDEM, identity=WORKER)
    assert judge("writes_fenced_under_lease", b).witness == (stamp, invoke)


def test_write_on_a_row_that_is_not_running_is_a_violation() -> None:
    b = History()
    b.start()
    b.stamp(NON_IDEM)
    requeue = b.store(NAMES[REQUEUE_STALE], identity="reaper", status="queued", claimed_by="", lease_expires=0)
    invoke = b.tool("c1", NON_IDEM)
    assert judge("writes_fenced_under_lease", b).witness == (requeue, invoke)


def test_write_fenced_with_another_effect_than_its_true_one_is_a_violation() -> None:
    b = History()
    b.start()
    stamp = b.stamp(IDEM)
    invoke = b.tool("c1", NON_IDEM)
    assert judge("writes_fenced_under_lease", b).witness == (stamp, invoke)


def test_write_of_an_unpersisted_run_is_a_violation() -> None:
    b = History()
    invoke = b.tool("c1", NON_IDEM, run="")
    verdict = judge("writes_fenced_under_lease", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (invoke,)


def test_read_only_tool_needs_no_fence() -> None:
    b = History()
    b.start()
    b.tool("c1", "read_only")
    assert judge("writes_fenced_under_lease", b).valid is Validity.VALID


# -- fence_matches_inflight_write (judged on the fences the store's reads returned) -------


def test_a_read_of_the_current_attempts_fence_is_valid() -> None:
    b = History()
    b.enqueue()
    b.claim()
    b.stamp(NON_IDEM)
    b.find()
    assert judge("fence_matches_inflight_write", b).valid is Validity.VALID


def test_a_fence_stamped_before_the_latest_claim_is_a_violation() -> None:
    """KB-9: the requeue kept the fence; the next attempt's recovery reads the previous attempt's write."""
    b = History()
    b.enqueue()
    b.claim()
    stamp = b.stamp(NON_IDEM)
    b.store(NAMES[REQUEUE], status="queued", claimed_by="", requeue_count=1)
    claim = b.claim(identity=OTHER)
    read = b.find(process=OTHER)
    verdict = judge("fence_matches_inflight_write", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (stamp, claim, read)


def test_a_resume_claim_counts_as_a_claim() -> None:
    b = History()
    b.start()
    stamp = b.stamp(IDEM)
    b.store(NAMES[SUSPEND_RUN], status="waiting_for_approval", claimed_by="")
    claim = b.store(NAMES[CLAIM_FOR_RESUME], identity="resume:h:1", status="running", claimed_by="resume:h:1")
    read = b.find(process="resume:h:1")
    assert judge("fence_matches_inflight_write", b).witness == (stamp, claim, read)


def test_a_fence_no_stamp_ever_set_is_a_violation() -> None:
    b = History()
    b.enqueue()
    claim = b.store(NAMES[CLAIM_QUEUED], status="running", claimed_by=WORKER, pending_effect=NON_IDEM)
    read = b.find()
    assert judge("fence_matches_inflight_write", b).witness == (claim, read)


def test_a_stamp_of_another_value_does_not_vouch_for_the_fence_read() -> None:
    b = History()
    b.enqueue()
    claim = b.claim()
    b.stamp(IDEM)
    b.store(NAMES[RENEW_LEASE], pending_effect=NON_IDEM)
    read = b.find()
    assert judge("fence_matches_inflight_write", b).witness == (claim, read)


def test_a_stale_fence_in_the_reapers_select_is_a_violation() -> None:
    b = History()
    b.enqueue()
    b.claim()
    stamp = b.stamp(IDEM)
    b.store(NAMES[REQUEUE_STALE], status="queued", claimed_by="", requeue_count=1)
    claim = b.claim(identity=OTHER)
    select = b.select_stale("r1")
    assert judge("fence_matches_inflight_write", b).witness == (stamp, claim, select)


def test_a_read_of_an_empty_fence_or_a_read_only_value_is_not_judged() -> None:
    b = History()
    b.enqueue()
    b.claim()
    b.find()
    b.select_stale("r1", fences=["read_only"])
    verdict = judge("fence_matches_inflight_write", b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("0 reads")


def test_the_deciders_notes_are_not_read() -> None:
    """A decide note claiming a stale fence, with no read showing one, is no violation."""
    b = History()
    b.enqueue()
    b.claim()
    b.decide(NON_IDEM)
    assert judge("fence_matches_inflight_write", b).valid is Validity.VALID


def test_a_fence_read_after_a_later_claim_is_judged_against_the_latest_claim_and_stamp() -> None:
    """The fence check reads claims and stamps backwards from each read: the latest of each decides
    (a stamp of an earlier attempt is a violation)."""
    b = History()
    b.claim(identity="w1")
    first = b.stamp("non_idempotent_write", identity="w1")
    b.stamp("non_idempotent_write", identity="w1")
    b.claim(identity="w1")
    latest = b.claim(identity="w2")
    read = b.find(process="w2")
    b.stamp("non_idempotent_write", identity="w2")
    held = b.find(process="w2")
    verdict = judge("fence_matches_inflight_write", b)
    assert verdict.valid is Validity.INVALID and verdict.judged == 2
    assert verdict.witness == (first + 1, latest, read)
    assert held > read
