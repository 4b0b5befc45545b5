"""Fence and lease invariants: writes_fenced_under_lease, fence_matches_inflight_write."""

from __future__ import annotations

from invariant_histories import OTHER, WORKER, History, judge

from model.invariants import Validity

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
    stamp = b.store("T5 markPendingEffect", pending_effect=NON_IDEM, lease_expires=5)
    invoke = b.tool("c1", NON_IDEM, time_s=50.0)
    verdict = judge("writes_fenced_under_lease", b)
    assert verdict.witness == (stamp, invoke)
    assert "lease expired" in verdict.explanation


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
    requeue = b.store("T13 requeueStale", identity="reaper", status="queued", claimed_by="", lease_expires=0)
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


# -- fence_matches_inflight_write --------------------------------------------------------


def test_decider_reading_the_current_attempts_fence_is_valid() -> None:
    b = History()
    b.enqueue()
    b.claim()
    b.stamp(NON_IDEM)
    b.decide(NON_IDEM)
    assert judge("fence_matches_inflight_write", b).valid is Validity.VALID


def test_fence_stamped_before_the_latest_claim_is_a_violation() -> None:
    b = History()
    b.enqueue()
    b.claim()
    stamp = b.stamp(NON_IDEM)
    b.store("T13 requeueStale", identity="reaper", status="queued", claimed_by="", lease_expires=0, requeue_count=1)
    claim = b.claim(identity=OTHER)
    decide = b.decide(NON_IDEM, decider="recovery")
    verdict = judge("fence_matches_inflight_write", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (stamp, claim, decide)


def test_resume_claim_counts_as_a_claim() -> None:
    b = History()
    b.start()
    stamp = b.stamp(NON_IDEM)
    b.store("T9 suspendRun", status="waiting_for_approval", claimed_by="", lease_expires=0)
    claim = b.store("T10 claimForResume", identity="resume:h:1", status="running", claimed_by="resume:h:1")
    decide = b.decide(NON_IDEM)
    assert judge("fence_matches_inflight_write", b).witness == (stamp, claim, decide)


def test_requeue_is_not_mistaken_for_a_t1_claim() -> None:
    b = History()
    b.enqueue()
    b.claim()
    b.stamp(NON_IDEM)
    b.store("T11 requeue", status="queued", claimed_by="", lease_expires=0, requeue_count=1)
    b.decide(NON_IDEM)
    assert judge("fence_matches_inflight_write", b).valid is Validity.VALID


def test_non_idempotent_fence_no_stamp_ever_set_is_a_violation() -> None:
    b = History()
    b.enqueue()
    claim = b.claim()
    decide = b.decide(NON_IDEM)
    assert judge("fence_matches_inflight_write", b).witness == (claim, decide)


def test_decisions_on_no_fence_or_a_non_write_value_are_not_judged() -> None:
    b = History()
    b.enqueue()
    b.claim()
    b.decide("")
    b.decide("read_only")
    verdict = judge("fence_matches_inflight_write", b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("0 ")


def test_idempotent_fence_stamped_after_the_claim_is_valid() -> None:
    b = History()
    b.enqueue()
    b.claim()
    b.stamp(IDEM)
    b.decide(IDEM, decision="requeue")
    assert judge("fence_matches_inflight_write", b).valid is Validity.VALID


def test_idempotent_fence_no_stamp_ever_set_is_a_violation() -> None:
    b = History()
    b.enqueue()
    claim = b.claim()
    decide = b.decide(IDEM)
    verdict = judge("fence_matches_inflight_write", b)
    assert verdict.witness == (claim, decide)
    assert "'idempotent_write'" in verdict.explanation


def test_idempotent_fence_carried_across_a_requeue_and_claim_is_a_violation() -> None:
    """KB-9: the requeue kept the fence, so the next attempt's decider reads the previous attempt's write."""
    b = History()
    b.enqueue()
    b.claim()
    stamp = b.stamp(IDEM)
    b.store("T13 requeueStale", identity="reaper", status="queued", claimed_by="", lease_expires=0, requeue_count=1)
    claim = b.claim(identity=OTHER)
    decide = b.decide(IDEM, decider="recovery", process=OTHER, decision="retry")
    verdict = judge("fence_matches_inflight_write", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (stamp, claim, decide)
    assert "previous attempt" in verdict.explanation


def test_a_stamp_of_another_value_after_the_claim_does_not_vouch_for_the_fence_read() -> None:
    b = History()
    b.enqueue()
    b.claim()
    stamp = b.stamp(NON_IDEM)
    b.store("T11 requeue", status="queued", claimed_by="", lease_expires=0, requeue_count=1)
    claim = b.claim(identity=OTHER)
    b.stamp(IDEM, identity=OTHER)
    decide = b.decide(NON_IDEM, decider="recovery", process=OTHER)
    assert judge("fence_matches_inflight_write", b).witness == (stamp, claim, decide)


def test_the_latest_stamp_of_the_value_read_is_the_one_judged() -> None:
    b = History()
    b.enqueue()
    b.claim()
    b.stamp(IDEM)
    b.store("T11 requeue", status="queued", claimed_by="", lease_expires=0, requeue_count=1)
    b.claim(identity=OTHER)
    b.stamp(IDEM, identity=OTHER)
    b.decide(IDEM, decider="recovery", process=OTHER, decision="retry")
    assert judge("fence_matches_inflight_write", b).valid is Validity.VALID


def test_the_reaper_is_judged_on_the_row_its_select_returned() -> None:
    """A claim between the reaper's SELECT and its decision does not make the snapshot's fence stale."""
    b = History()
    b.enqueue()
    b.claim()
    b.stamp(IDEM)
    b.select_stale("r1")
    b.stamp("")
    b.store("T11 requeue", status="queued", claimed_by="", lease_expires=0, requeue_count=1)
    b.claim(identity=OTHER)
    b.decide(IDEM, decision="requeue")
    assert judge("fence_matches_inflight_write", b).valid is Validity.VALID


def test_a_stale_fence_in_the_reapers_snapshot_is_a_violation() -> None:
    b = History()
    b.enqueue()
    b.claim()
    stamp = b.stamp(IDEM)
    b.store("T13 requeueStale", identity="reaper", status="queued", claimed_by="", lease_expires=0, requeue_count=1)
    claim = b.claim(identity=OTHER)
    b.select_stale("r2", "r1")
    decide = b.decide(IDEM, decision="requeue")
    assert judge("fence_matches_inflight_write", b).witness == (stamp, claim, decide)


def test_only_the_reaper_decides_on_a_snapshot() -> None:
    """The recovery re-reads the row: a SELECT of the same process is not its snapshot."""
    b = History()
    b.enqueue()
    b.claim()
    stamp = b.stamp(IDEM)
    b.select_stale("r1", process=WORKER)
    b.store("T11 requeue", status="queued", claimed_by="", lease_expires=0, requeue_count=1)
    claim = b.claim()
    decide = b.decide(IDEM, decider="recovery", process=WORKER, decision="retry")
    assert judge("fence_matches_inflight_write", b).witness == (stamp, claim, decide)
