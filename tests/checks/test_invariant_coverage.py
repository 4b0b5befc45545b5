"""Coverage ("sometimes") properties: one history where each holds and one where it does not."""

from __future__ import annotations

from invariant_histories import FAIL, INFO, OTHER, WORKER, History, reached

from checks import COVERAGE, Coverage, Kind, coverage
from model.statements import DEAD_LETTER_STALE, NAMES, REQUEUE, REQUEUE_STALE

NON_IDEM = "non_idempotent_write"
IDEM = "idempotent_write"


def _reap(b: History, transition: str = NAMES[REQUEUE_STALE], **changes: object) -> int:
    return b.store(transition, identity="reaper", status="queued", claimed_by="", lease_expires=0, **changes)


def test_catalogue_lists_the_thirteen_coverage_properties() -> None:
    assert [c.name for c in COVERAGE] == [
        "lease_expired_mid_write",
        "reaper_requeued",
        "reaper_dead_lettered",
        "fenced_run_dead_lettered",
        "audit_failed_after_write_landed",
        "idempotent_write_repeated",
        "duplicate_wakeup_delivered",
        "cancel_observed",
        "approval_resumed",
        "lease_lost",
        "requeued_in_process",
        "crash_after_landing",
        "run_completed",
    ]
    assert all(c.kind is Kind.SOMETIMES and c.meaning for c in COVERAGE)


def test_a_raising_coverage_predicate_counts_as_not_reached() -> None:
    def broken(_: object) -> bool:
        raise RuntimeError("bug")

    result = coverage([], (Coverage("broken", "never", broken), *COVERAGE[:1]))
    assert result == {"broken": False, "lease_expired_mid_write": False}


def test_lease_expired_mid_write_holds_when_the_reaper_acts_during_a_write() -> None:
    b = History()
    b.start()
    b.stamp(IDEM)
    b.tool("c1", IDEM)
    _reap(b)
    b.tool_done()
    assert reached("lease_expired_mid_write", b)


def test_lease_expired_mid_write_fails_when_the_write_completed_first() -> None:
    b = History()
    b.start()
    b.stamp(IDEM)
    b.tool("c1", IDEM)
    b.tool_done()
    _reap(b)
    assert not reached("lease_expired_mid_write", b)


def test_reaper_requeued_holds_on_a_matched_t13() -> None:
    b = History()
    b.start()
    _reap(b)
    assert reached("reaper_requeued", b)


def test_reaper_requeued_fails_on_an_unmatched_t13() -> None:
    b = History()
    b.start()
    b.store(NAMES[REQUEUE_STALE], identity="reaper", matched=False)
    assert not reached("reaper_requeued", b)


def test_reaper_dead_lettered_holds_on_a_matched_t14() -> None:
    b = History()
    b.start()
    _reap(b, NAMES[DEAD_LETTER_STALE], termination_reason="not_retryable")
    assert reached("reaper_dead_lettered", b)


def test_reaper_dead_lettered_fails_without_a_t14() -> None:
    b = History()
    b.start()
    _reap(b)
    assert not reached("reaper_dead_lettered", b)


def test_fenced_run_dead_lettered_holds_on_a_t14_over_a_non_idempotent_fence() -> None:
    b = History()
    b.start()
    b.stamp(NON_IDEM)
    _reap(b, NAMES[DEAD_LETTER_STALE], termination_reason="not_retryable")
    assert reached("fenced_run_dead_lettered", b)


def test_fenced_run_dead_lettered_holds_on_a_not_retryable_settle_over_the_fence() -> None:
    b = History()
    b.start()
    b.stamp(NON_IDEM)
    b.settle("failed", termination_reason="not_retryable", site="recovery.dead_letter")
    assert reached("fenced_run_dead_lettered", b)


def test_fenced_run_dead_lettered_fails_without_a_standing_fence() -> None:
    b = History()
    b.start()
    _reap(b, NAMES[DEAD_LETTER_STALE], termination_reason="not_retryable")
    assert not reached("fenced_run_dead_lettered", b)


def test_audit_failed_after_write_landed_holds_for_a_landed_execution() -> None:
    b = History()
    b.landing("c1", NON_IDEM, execution=4)
    b.event(FAIL, call="c1", execution=4, true_effect=NON_IDEM)
    assert reached("audit_failed_after_write_landed", b)


def test_audit_failed_after_write_landed_fails_for_an_execution_that_never_landed() -> None:
    b = History()
    b.landing("c1", NON_IDEM, execution=4)
    b.event(FAIL, call="c2", execution=5, true_effect=NON_IDEM)
    assert not reached("audit_failed_after_write_landed", b)


def test_idempotent_write_repeated_holds_for_two_landings_of_one_call() -> None:
    b = History()
    b.landing("c1", IDEM, execution=1)
    b.landing("c1", IDEM, execution=2)
    assert reached("idempotent_write_repeated", b)


def test_idempotent_write_repeated_fails_for_non_idempotent_repeats() -> None:
    b = History()
    b.landing("c1", IDEM, execution=1)
    b.landing("c2", NON_IDEM, execution=2)
    b.landing("c2", NON_IDEM, execution=3)
    assert not reached("idempotent_write_repeated", b)


def test_duplicate_wakeup_delivered_holds_for_a_duplicate() -> None:
    b = History()
    b.deliver(duplicate=False)
    b.deliver(duplicate=True)
    assert reached("duplicate_wakeup_delivered", b)


def test_duplicate_wakeup_delivered_fails_for_first_deliveries() -> None:
    b = History()
    b.deliver(duplicate=False)
    assert not reached("duplicate_wakeup_delivered", b)


def test_cancel_observed_holds_when_a_segment_returns_cancelled() -> None:
    b = History()
    b.segment("run_queued")
    b.segment_done(outcome="cancelled")
    assert reached("cancel_observed", b)


def test_cancel_observed_fails_when_segments_complete() -> None:
    b = History()
    b.segment("run_queued")
    b.segment_done(outcome="completed")
    assert not reached("cancel_observed", b)


def test_approval_resumed_holds_when_an_approve_segment_ends_ok() -> None:
    b = History()
    b.segment("approve", process="approver")
    b.segment("run_queued", process=WORKER)
    b.segment_done(FAIL, process=WORKER)
    b.segment_done(outcome="completed", process="approver")
    assert reached("approval_resumed", b)


def test_approval_resumed_fails_when_the_approve_segment_fails() -> None:
    b = History()
    b.segment("approve", process="approver")
    b.segment("run_queued", process=WORKER)
    b.segment_done(outcome="completed", process=WORKER)
    b.segment_done(FAIL, process="approver")
    assert not reached("approval_resumed", b)


def test_lease_lost_holds_when_a_segment_returns_lease_lost() -> None:
    b = History()
    b.segment("run_queued")
    b.segment_done(outcome="lease_lost")
    assert reached("lease_lost", b)


def test_lease_lost_fails_when_the_segment_crashed() -> None:
    b = History()
    b.segment("run_queued")
    b.segment_done(INFO)
    assert not reached("lease_lost", b)


def test_requeued_in_process_holds_on_a_matched_t11() -> None:
    b = History()
    b.enqueue()
    b.claim()
    b.store(NAMES[REQUEUE], status="queued", claimed_by="", requeue_count=1)
    assert reached("requeued_in_process", b)


def test_requeued_in_process_fails_on_a_reaper_requeue() -> None:
    b = History()
    b.enqueue()
    b.claim()
    _reap(b, requeue_count=1)
    assert not reached("requeued_in_process", b)


def test_crash_after_landing_holds_when_the_process_dies_between_landing_and_completion() -> None:
    b = History()
    b.start()
    b.tool("c1", NON_IDEM)
    b.landing("c1", NON_IDEM)
    b.crash(WORKER)
    b.tool_done(INFO)
    assert reached("crash_after_landing", b)


def test_crash_after_landing_holds_when_the_crashed_info_is_recorded_before_the_crash() -> None:
    b = History()
    b.start()
    b.tool("c1", NON_IDEM)
    b.landing("c1", NON_IDEM)
    b.tool_done(INFO)
    b.segment_done(INFO)
    b.crash(WORKER)
    assert reached("crash_after_landing", b)


def test_crash_after_landing_fails_when_the_call_completed_before_the_crash() -> None:
    b = History()
    b.start()
    b.tool("c1", NON_IDEM)
    b.landing("c1", NON_IDEM)
    b.tool_done()
    b.crash(WORKER)
    assert not reached("crash_after_landing", b)


def test_crash_after_landing_fails_when_another_process_crashes() -> None:
    b = History()
    b.start()
    b.tool("c1", NON_IDEM)
    b.landing("c1", NON_IDEM)
    b.crash(OTHER)
    assert not reached("crash_after_landing", b)


def test_run_completed_holds_on_a_completed_row() -> None:
    b = History()
    b.start()
    b.settle("completed")
    assert reached("run_completed", b)


def test_run_completed_fails_when_runs_only_fail() -> None:
    b = History()
    b.start()
    b.settle("failed")
    b.final(status="completed")
    assert not reached("run_completed", b)
