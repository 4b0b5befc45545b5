"""What a row says once a segment is done with it: dead_letter_reason_matches_cause,
segment_outcome_matches_row, terminal_row_no_stale_fence, row_timestamps_kept.

Each on hand-built histories that pass and that fail; the spec's own behaviour that violates one
(head) is a registered non-guarantee or finding, tested in tests/properties.
"""

from __future__ import annotations

from invariant_histories import FAIL, INFO, OTHER, WORKER, History, judge

from checks import Validity
from checks.history import DISPATCH, READ, OpType
from model.statements import (
    CANCEL,
    CLAIM_FOR_RESUME,
    CLAIM_QUEUED,
    DEAD_LETTER_STALE,
    NAMES,
    RENEW_LEASE,
    REQUEUE,
    SUSPEND_RUN,
)

NON_IDEM = "non_idempotent_write"
IDEM = "idempotent_write"


def _worker(b: History, *, requeue_count: int = 0) -> None:
    b.enqueue()
    b.segment("run_queued")
    b.claim()
    if requeue_count:
        b.store(NAMES[RENEW_LEASE], requeue_count=requeue_count)


def _dead_letter(b: History, reason: str) -> int:
    return b.settle("failed", termination_reason=reason, error_class="ProviderException")


# -- dead_letter_reason_matches_cause --------------------------------------------------------

NAME = "dead_letter_reason_matches_cause"


def test_a_non_retryable_failure_dead_lettered_not_retryable_holds() -> None:
    b = History()
    _worker(b)
    b.provider_fail("auth")
    _dead_letter(b, "not_retryable")
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_a_non_retryable_failure_dead_lettered_retries_exhausted_is_a_violation() -> None:
    b = History()
    _worker(b)
    b.provider_fail("auth")
    settle = _dead_letter(b, "retries_exhausted")
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID
    assert settle in verdict.witness


def test_a_retryable_failure_dead_lettered_not_retryable_without_a_fence_is_a_violation() -> None:
    """KB-13 or a wrong classifier: the fault plan's class (serverError) was retryable."""
    b = History()
    _worker(b)
    failure = b.provider_fail("serverError", "unknown")
    settle = _dead_letter(b, "not_retryable")
    assert judge(NAME, b).witness == (failure, settle)


def test_a_retryable_failure_over_a_non_idempotent_fence_may_be_dead_lettered_not_retryable() -> None:
    b = History()
    _worker(b)
    b.stamp(NON_IDEM)
    b.provider_fail("serverError")
    b.find()
    _dead_letter(b, "not_retryable")
    assert judge(NAME, b).valid is Validity.VALID


def test_retries_exhausted_needs_a_spent_budget_or_a_failed_set_up() -> None:
    spent = History()
    _worker(spent, requeue_count=3)
    spent.provider_fail("serverError")
    _dead_letter(spent, "retries_exhausted")
    assert judge(NAME, spent).valid is Validity.VALID

    unread = History()
    _worker(unread)
    unread.provider_fail("serverError")
    unread.add(READ, OpType.FAIL, what="FindRun", site="recovery.reread", error="StoreError")
    _dead_letter(unread, "retries_exhausted")
    assert judge(NAME, unread).valid is Validity.VALID

    undispatched = History()
    _worker(undispatched)
    undispatched.provider_fail("serverError")
    undispatched.add(DISPATCH, OpType.FAIL, error="TransportException")
    _dead_letter(undispatched, "retries_exhausted")
    assert judge(NAME, undispatched).valid is Validity.VALID

    early = History()
    _worker(early, requeue_count=1)
    early.provider_fail("serverError")
    settle = _dead_letter(early, "retries_exhausted")
    assert judge(NAME, early).valid is Validity.INVALID and settle in judge(NAME, early).witness


def test_a_reaper_dead_letter_is_judged_on_the_row_it_held() -> None:
    fenced = History()
    fenced.enqueue()
    fenced.claim()
    fenced.stamp(NON_IDEM)
    fenced.store(
        NAMES[DEAD_LETTER_STALE],
        identity="reaper",
        actor="reaper",
        status="failed",
        termination_reason="not_retryable",
        claimed_by="",
    )
    assert judge(NAME, fenced).valid is Validity.VALID

    unfenced = History()
    unfenced.enqueue()
    unfenced.claim()
    prior = unfenced.store(NAMES[RENEW_LEASE])
    settle = unfenced.store(
        NAMES[DEAD_LETTER_STALE],
        identity="reaper",
        actor="reaper",
        status="failed",
        termination_reason="not_retryable",
        claimed_by="",
    )
    assert judge(NAME, unfenced).witness == (prior, settle)


def test_a_scripted_pipeline_stop_is_not_judged_on_its_cause() -> None:
    b = History()
    b.add("plan", OpType.OK, process="world", kind="queued", stops=[1])
    _worker(b)
    b.provider_fail("serverError")
    _dead_letter(b, "not_retryable")
    assert judge(NAME, b).judged == 0


# -- segment_outcome_matches_row --------------------------------------------------------------

OUTCOME = "segment_outcome_matches_row"


def test_a_completed_outcome_over_a_completed_row_holds() -> None:
    b = History()
    _worker(b)
    b.settle("completed")
    b.segment_done(outcome="completed")
    verdict = judge(OUTCOME, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_a_failed_outcome_over_a_queued_row_is_a_violation() -> None:
    """F-05: recovery requeued, the dispatch failed, the guarded dead-letter matched nothing."""
    b = History()
    _worker(b)
    requeue = b.store(NAMES[REQUEUE], status="queued", claimed_by="", requeue_count=1)
    done = b.segment_done(outcome="failed")
    assert judge(OUTCOME, b).witness == (requeue, done)


def test_lease_lost_and_requeued_outcomes_say_nothing_about_the_row() -> None:
    b = History()
    _worker(b)
    b.segment_done(outcome="lease_lost")
    b.segment("run_queued")
    b.segment_done(outcome="requeued")
    assert judge(OUTCOME, b).judged == 0


def test_an_awaiting_approval_outcome_needs_a_waiting_row() -> None:
    b = History()
    _worker(b)
    row = b.store(NAMES[RENEW_LEASE])
    done = b.segment_done(outcome="awaiting_approval")
    assert judge(OUTCOME, b).witness == (row, done)


# -- terminal_row_no_stale_fence --------------------------------------------------------------

FENCE = "terminal_row_no_stale_fence"


def test_a_row_settled_after_its_write_was_cleared_holds() -> None:
    b = History()
    _worker(b)
    b.write("c1", NON_IDEM)
    b.settle("completed")
    verdict = judge(FENCE, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_a_fence_of_a_write_still_in_flight_may_stand_on_a_terminal_row() -> None:
    """Reaped mid-call: the fence is what keeps the write from repeating (spec 7.2)."""
    b = History()
    _worker(b)
    b.stamp(NON_IDEM)
    b.tool("c1", NON_IDEM)
    b.store(
        NAMES[DEAD_LETTER_STALE],
        identity="reaper",
        actor="reaper",
        status="failed",
        termination_reason="not_retryable",
        claimed_by="",
    )
    b.tool_done(INFO)
    assert judge(FENCE, b).valid is Validity.VALID


def test_a_fence_of_a_write_that_returned_is_stale_on_a_terminal_row() -> None:
    b = History()
    _worker(b)
    stamp = b.stamp(NON_IDEM)
    call = b.tool("c1", NON_IDEM)
    b.landing("c1", NON_IDEM)
    returned = b.tool_done()
    cancel = b.store(NAMES[CANCEL], identity="user", actor="user", status="cancelled", claimed_by="")
    assert judge(FENCE, b).witness == (stamp, call, returned, cancel)


def test_a_fence_whose_write_failed_and_returned_is_stale_too() -> None:
    b = History()
    _worker(b)
    b.stamp(IDEM)
    b.tool("c1", IDEM)
    b.tool_done(FAIL)
    b.settle("failed")
    assert judge(FENCE, b).valid is Validity.INVALID


# -- row_timestamps_kept ----------------------------------------------------------------------

TIMES = "row_timestamps_kept"


def test_timestamps_set_once_hold() -> None:
    b = History()
    b.enqueue()
    b.store(NAMES[CLAIM_QUEUED], status="running", claimed_by=WORKER, started_at=5)
    b.store(NAMES[SUSPEND_RUN], status="waiting_for_approval", claimed_by="")
    b.store(NAMES[CLAIM_FOR_RESUME], identity=OTHER, status="running", claimed_by=OTHER)
    b.settle("completed", identity=OTHER, finished_at=9)
    verdict = judge(TIMES, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 2


def test_a_later_claim_overwriting_started_at_is_a_violation() -> None:
    """Spec T3 (started_at=now on every claim): head's NG-claim-restamps-started."""
    b = History()
    b.enqueue()
    first = b.store(NAMES[CLAIM_QUEUED], status="running", claimed_by=WORKER, started_at=5)
    b.store(NAMES[REQUEUE], status="queued", claimed_by="", requeue_count=1)
    again = b.store(NAMES[CLAIM_QUEUED], identity=OTHER, status="running", claimed_by=OTHER, started_at=70)
    assert judge(TIMES, b).witness == (first, again)


def test_a_second_settle_overwriting_finished_at_is_a_violation() -> None:
    """KB-1: an unguarded finishRun on a terminal row."""
    b = History()
    _worker(b)
    first = b.settle("completed", finished_at=10)
    late = b.settle("failed", finished_at=12)
    assert judge(TIMES, b).witness == (first, late)
