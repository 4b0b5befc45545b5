"""What a segment tells its caller: segment_outcome_true and lease_lost_means_lost, on hand-built
histories that pass and that fail. Each verdict's count of judged cases is checked too."""

from __future__ import annotations

import pytest
from invariant_histories import FAIL, INFO, INVOKE, OTHER, WORKER, History, judge

from checks import Validity, outcomes
from checks.history import READ, SEGMENT, STORE
from checks.outcome_table import OUTCOME_TABLE, table_rows
from model.statements import (
    CANCEL,
    CLAIM_FOR_RESUME,
    CLAIM_QUEUED,
    FINISH_RUN,
    NAMES,
    RENEW_LEASE,
    REQUEUE,
    START_RUN,
    SUSPEND_RUN,
)

TRUE = "segment_outcome_true"
EPOCH_S = 1_700_000_000
LOST = "lease_lost_means_lost"


def _claimed(b: History, entry: str = "run_queued") -> None:
    b.enqueue()
    b.segment(entry)
    b.claim()


def _requeue(b: History, *, matched: bool = True, identity: str = WORKER) -> int:
    return b.store(NAMES[REQUEUE], identity=identity, matched=matched, status="queued", claimed_by="", requeue_count=1)


# -- settled outcomes -----------------------------------------------------------------------------


def test_completed_after_its_own_matched_settle_holds() -> None:
    b = History()
    _claimed(b)
    b.settle("completed", termination_reason="completed")
    b.segment_done(outcome="completed")
    verdict = judge(TRUE, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_completed_after_a_settle_that_matched_nothing_is_a_violation() -> None:
    b = History()
    _claimed(b)
    settle = b.store(NAMES[FINISH_RUN], matched=False)
    done = b.segment_done(outcome="completed")
    verdict = judge(TRUE, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (settle, done)


def test_failed_after_an_unchecked_settle_that_threw_is_a_violation() -> None:
    """runQueued's unguarded position-failure settle threw; the call still says FAILED (spec 3.1)."""
    b = History()
    _claimed(b)
    b.store_fail(NAMES[FINISH_RUN])
    b.segment_done(outcome="failed")
    assert judge(TRUE, b).valid is Validity.INVALID


def test_a_guardrail_outcome_needs_the_policy_reason() -> None:
    good, bad = History(), History()
    for b, reason in ((good, "policy_denied"), (bad, "provider_failed")):
        _claimed(b)
        b.settle("failed", termination_reason=reason)
        b.segment_done(outcome="guardrail_blocked")
    assert judge(TRUE, good).valid is Validity.VALID
    assert judge(TRUE, bad).valid is Validity.INVALID


def test_an_unpersisted_interactive_run_may_report_completed() -> None:
    b = History()
    b.segment("run_interactive")
    b.store_fail(NAMES[START_RUN])
    b.segment_done(outcome="completed")
    verdict = judge(TRUE, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_awaiting_approval_needs_its_own_matched_suspend() -> None:
    good, bad = History(), History()
    for b, matched in ((good, True), (bad, False)):
        _claimed(b)
        b.store(NAMES[SUSPEND_RUN], matched=matched, status="waiting_for_approval", claimed_by="")
        b.segment_done(outcome="awaiting_approval")
    assert judge(TRUE, good).valid is Validity.VALID
    assert judge(TRUE, bad).valid is Validity.INVALID


def test_suspend_failed_after_a_suspend_that_matched_is_a_violation() -> None:
    b = History()
    _claimed(b)
    suspend = b.store(NAMES[SUSPEND_RUN], status="waiting_for_input", claimed_by="")
    done = b.segment_done(outcome="suspend_failed")
    assert judge(TRUE, b).witness == (suspend, done)


def test_cancelled_needs_a_read_that_saw_the_cancel() -> None:
    good, bad = History(), History()
    for b, seen in ((good, "cancelled"), (bad, "running")):
        _claimed(b)
        b.probe(seen)
        b.event(INVOKE, kind="request")
        b.segment_done(outcome="cancelled")
    assert judge(TRUE, good).valid is Validity.VALID
    assert judge(TRUE, bad).valid is Validity.INVALID


# -- requeued, on both transports ---------------------------------------------------------------


def test_requeued_after_its_own_requeue_and_a_returned_dispatch_holds() -> None:
    b = History()
    _claimed(b)
    _requeue(b)
    b.dispatch()
    b.segment_done(outcome="requeued")
    verdict = judge(TRUE, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_requeued_without_a_dispatch_that_returned_is_a_violation() -> None:
    b = History()
    _claimed(b)
    requeue = _requeue(b)
    b.dispatch(FAIL)
    done = b.segment_done(outcome="requeued")
    assert judge(TRUE, b).witness == (requeue, done)


def test_the_sync_outer_call_told_requeued_over_the_nested_attempts_terminal_row_is_a_violation() -> None:
    """The Sync transport's outer call (spec 5.2): its own requeue and dispatch took effect, the nested
    attempt (same process, its own segment) completed the run, and the outer call says REQUEUED."""
    b = History()
    _claimed(b)
    requeue = _requeue(b)
    b.dispatch()
    b.add(SEGMENT, INVOKE, process=WORKER, entry="run_queued", identity=OTHER)
    b.store(NAMES[CLAIM_QUEUED], identity=OTHER, process=WORKER, status="running", claimed_by=OTHER)
    settle = b.store(NAMES[FINISH_RUN], identity=OTHER, process=WORKER, status="completed", claimed_by="")
    b.segment_done(outcome="completed")
    done = b.segment_done(outcome="requeued")
    verdict = judge(TRUE, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (requeue, settle, done)
    assert verdict.judged == 2  # the nested call's completed holds, the outer requeued does not


def test_a_user_cancel_after_the_requeue_does_not_make_requeued_false() -> None:
    """Another process's later write is not what the call did: the row it left is its own requeue."""
    b = History()
    _claimed(b)
    _requeue(b)
    b.store(NAMES[CANCEL], identity="user", process="user", status="cancelled")
    b.dispatch()
    b.segment_done(outcome="requeued")
    assert judge(TRUE, b).valid is Validity.VALID


# -- nothing to do, claims lost, crashes ----------------------------------------------------------


def test_nothing_to_claim_holds_only_when_no_statement_matched() -> None:
    good, bad = History(), History()
    good.enqueue()
    good.segment("run_queued")
    good.store(NAMES[CLAIM_QUEUED], matched=False)
    good.segment_done(outcome=None)  # type: ignore[arg-type]
    bad.enqueue()
    bad.segment("run_queued")
    bad.claim()
    bad.segment_done(outcome=None)  # type: ignore[arg-type]
    assert judge(TRUE, good).valid is Validity.VALID
    assert judge(TRUE, bad).valid is Validity.INVALID


def test_run_already_resuming_needs_a_claim_that_did_not_take_effect() -> None:
    good, bad = History(), History()
    for b, matched in ((good, False), (bad, True)):
        b.segment("approve")
        b.store(NAMES[CLAIM_FOR_RESUME], matched=matched, status="running", claimed_by=WORKER)
        b.segment_done(FAIL)
        b.ops[-1] = b.ops[-1]._replace(value={"error": "RunAlreadyResumingException"})
    assert judge(TRUE, good).valid is Validity.VALID and judge(TRUE, good).judged == 1
    assert judge(TRUE, bad).valid is Validity.INVALID


def test_a_crashed_call_reports_nothing_and_is_not_judged() -> None:
    b = History()
    _claimed(b)
    b.segment_done(INFO)
    assert judge(TRUE, b).judged == 0


# -- LEASE_LOST -----------------------------------------------------------------------------------


def test_lease_lost_after_a_renewal_refused_on_a_row_another_holds_holds() -> None:
    b = History()
    _claimed(b)
    b.claim(identity=OTHER)
    b.store(NAMES[RENEW_LEASE], matched=False)
    b.segment_done(outcome="lease_lost")
    verdict = judge(LOST, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_lease_lost_after_a_store_error_on_a_row_still_held_is_a_violation() -> None:
    b = History()
    _claimed(b)
    claim = len(b.ops) - 1
    failed = b.store_fail(NAMES[RENEW_LEASE])
    done = b.segment_done(outcome="lease_lost")
    verdict = judge(LOST, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (claim, failed, done)


def test_lease_lost_after_a_renewal_that_matched_is_a_violation() -> None:
    """KB-6: a same-second renewal matched (changed no row) and the runtime trusted 'changed rows'."""
    b = History()
    _claimed(b)
    renewal = b.store(NAMES[RENEW_LEASE])
    done = b.segment_done(outcome="lease_lost")
    assert judge(LOST, b).witness == (renewal, done)


def test_a_store_error_after_the_lease_ran_out_in_true_time_is_a_lost_lease() -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    b.store(NAMES[CLAIM_QUEUED], status="running", claimed_by=WORKER, lease_expires=5)
    b.add(STORE, FAIL, transition=NAMES[RENEW_LEASE], identity=WORKER, error="StoreError", time_s=10.0)
    b.segment_done(outcome="lease_lost")
    assert judge(LOST, b).valid is Validity.VALID


@pytest.mark.parametrize(("lease_after_epoch_s", "valid"), [(5, Validity.VALID), (50, Validity.INVALID)])
def test_a_lease_in_unix_seconds_is_put_back_on_the_records_axis(lease_after_epoch_s: int, valid: Validity) -> None:
    """With the epoch the history states, a store error at true time 10 under a lease to epoch + 5 came after
    the lease ran out (a lost lease); under a lease to epoch + 50 the row was still held."""
    b = History()
    b.phase(epoch_s=EPOCH_S)
    b.enqueue()
    b.segment("run_queued")
    b.store(NAMES[CLAIM_QUEUED], status="running", claimed_by=WORKER, lease_expires=EPOCH_S + lease_after_epoch_s)
    b.add(STORE, FAIL, transition=NAMES[RENEW_LEASE], identity=WORKER, error="StoreError", time_s=10.0)
    b.segment_done(outcome="lease_lost")
    verdict = judge(LOST, b)
    assert verdict.valid is valid and verdict.judged == 1
    if valid is Validity.INVALID:
        assert "with its lease to 50" in verdict.explanation


# -- the table ------------------------------------------------------------------------------------


def test_the_module_docstring_carries_every_outcome_of_the_table() -> None:
    doc = " ".join((outcomes.__doc__ or "").split())
    for rule in OUTCOME_TABLE:
        if rule.checker in (TRUE, LOST):
            first = rule.outcome.split(" ")[0].split("/")[0]
            assert first in doc, rule
    assert all(set(row) == {"entry", "outcome", "truth", "spec", "checker"} for row in table_rows())


def test_every_checker_the_table_names_is_catalogued() -> None:
    from checks import INVARIANTS

    assert {rule.checker for rule in OUTCOME_TABLE} <= {inv.name for inv in INVARIANTS}


def test_a_read_of_the_cancel_by_another_process_does_not_count() -> None:
    b = History()
    _claimed(b)
    b.add(READ, INVOKE, process="user", what="FindRun")
    b.add(READ, INVOKE, process="user", what="FindRun", result="cancelled")
    b.segment_done(outcome="cancelled")
    assert judge(TRUE, b).valid is Validity.INVALID
