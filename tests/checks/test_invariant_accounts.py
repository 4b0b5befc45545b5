"""What the reaper, enqueue and cancel tell their callers: reaper_account_true and
enqueue_cancel_result_true, on hand-built histories that pass and that fail."""

from __future__ import annotations

from invariant_histories import FAIL, OK, OTHER, History, judge

from checks import Validity
from checks.history import SEGMENT
from model.statements import CANCEL, DEAD_LETTER_STALE, ENQUEUE_RUN, NAMES, REQUEUE_STALE

ACCOUNT = "reaper_account_true"
RESULT = "enqueue_cancel_result_true"
REAPER = "reaper:h1:1"


def _stale(b: History) -> None:
    b.enqueue()
    b.claim(identity=OTHER)
    b.segment("reap", run="", process=REAPER)


def _tick_done(b: History, requeued: int = 0, dead_lettered: int = 0, skipped: int = 0) -> int:
    counts = {"exit_code": 0, "requeued": requeued, "dead_lettered": dead_lettered, "skipped": skipped}
    return b.add(SEGMENT, OK, run="", process=REAPER, outcome=counts)


def test_a_requeue_that_matched_and_was_dispatched_is_counted_requeued() -> None:
    b = History()
    _stale(b)
    b.store(NAMES[REQUEUE_STALE], identity=REAPER, status="queued", claimed_by="", requeue_count=1)
    b.dispatch(process=REAPER)
    b.account("requeued", process=REAPER)
    _tick_done(b, requeued=1)
    verdict = judge(ACCOUNT, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 2  # the row's account and the printed counts


def test_a_dead_letter_with_a_dead_letter_reason_holds() -> None:
    b = History()
    _stale(b)
    b.store(NAMES[DEAD_LETTER_STALE], identity=REAPER, status="failed", termination_reason="not_retryable")
    b.account("dead_lettered", "not_retryable", process=REAPER)
    _tick_done(b, dead_lettered=1)
    assert judge(ACCOUNT, b).valid is Validity.VALID


def test_a_dead_letter_whose_row_records_a_retryable_reason_is_a_violation() -> None:
    """Spec 5.1 3e: the reaper's settle after a failed dispatch writes provider_failed."""
    b = History()
    _stale(b)
    requeue = b.store(NAMES[REQUEUE_STALE], identity=REAPER, status="queued", claimed_by="")
    b.dispatch(FAIL, process=REAPER)
    settle = b.settle("failed", identity=REAPER, termination_reason="provider_failed")
    account = b.account("dead_lettered", "provider_failed", process=REAPER)
    _tick_done(b, dead_lettered=1)
    verdict = judge(ACCOUNT, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (requeue, settle, account)
    assert "'provider_failed'" in verdict.explanation


def test_a_dead_letter_counted_with_nothing_settled_is_a_violation() -> None:
    """Spec C6: the counter is incremented even when the settle did not happen."""
    b = History()
    _stale(b)
    b.store(NAMES[REQUEUE_STALE], identity=REAPER, status="queued", claimed_by="")
    b.dispatch(FAIL, process=REAPER)
    b.account("dead_lettered", "provider_failed", process=REAPER)
    _tick_done(b, dead_lettered=1)
    assert "no statement of the tick left the row FAILED" in judge(ACCOUNT, b).explanation


def test_a_row_counted_skipped_whose_statement_matched_is_a_violation() -> None:
    b = History()
    _stale(b)
    b.store(NAMES[REQUEUE_STALE], identity=REAPER, status="queued", claimed_by="")
    b.account("skipped", process=REAPER)
    _tick_done(b, skipped=1)
    assert judge(ACCOUNT, b).valid is Validity.INVALID


def test_printed_counts_that_differ_from_the_accounts_are_a_violation() -> None:
    b = History()
    _stale(b)
    b.store(NAMES[DEAD_LETTER_STALE], identity=REAPER, matched=False)
    b.account("skipped", "not_retryable", process=REAPER)
    done = _tick_done(b, requeued=1)
    verdict = judge(ACCOUNT, b)
    assert verdict.witness == (done,) and "requeued 1 (accounts: 0)" in verdict.explanation


# -- enqueue and cancel ---------------------------------------------------------------------------

CLIENT = "client:h1:9"


def _enqueue(b: History, *, inserted: bool = True, dispatched: bool = True) -> None:
    b.segment("enqueue", process=CLIENT)
    if inserted:
        b.store(NAMES[ENQUEUE_RUN], identity=CLIENT, status="queued")
    else:
        b.store_fail(NAMES[ENQUEUE_RUN], identity=CLIENT)
        return
    b.dispatch(OK if dispatched else FAIL, process=CLIENT)


def test_an_enqueue_that_stored_and_dispatched_may_return_its_uuid() -> None:
    b = History()
    _enqueue(b)
    b.add(SEGMENT, OK, process=CLIENT, outcome="r1")
    verdict = judge(RESULT, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_an_enqueue_whose_dispatch_threw_must_not_return_its_uuid() -> None:
    b = History()
    _enqueue(b, dispatched=False)
    b.add(SEGMENT, OK, process=CLIENT, outcome="r1")
    assert judge(RESULT, b).valid is Validity.INVALID


def test_an_enqueue_failure_needs_a_lost_insert_or_a_thrown_dispatch() -> None:
    good, lost, bad = History(), History(), History()
    _enqueue(good, dispatched=False)
    _enqueue(lost, inserted=False)
    _enqueue(bad)
    for b in (good, lost, bad):
        b.add(SEGMENT, FAIL, process=CLIENT, error="RunEnqueueFailedException")
    assert judge(RESULT, good).valid is Validity.VALID
    assert judge(RESULT, lost).valid is Validity.VALID
    assert judge(RESULT, bad).valid is Validity.INVALID


def test_cancel_says_true_exactly_when_its_cancel_took_effect() -> None:
    for matched, said, valid in ((True, True, True), (False, False, True), (False, True, False), (True, False, False)):
        b = History()
        b.enqueue()
        b.segment("cancel", process="user")
        b.store(NAMES[CANCEL], identity="user", process="user", matched=matched, status="cancelled")
        b.add(SEGMENT, OK, process="user", outcome=said)
        assert (judge(RESULT, b).valid is Validity.VALID) is valid, (matched, said)
