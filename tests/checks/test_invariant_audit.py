"""Audit-trail invariants: every_write_accounted, no_success_over_unrecorded_write,
read_only_audit_fail_soft, unique_event_sequence."""

from __future__ import annotations

from invariant_histories import FAIL, OK, OTHER, WORKER, History, judge

from checks import Validity
from model.statements import DEAD_LETTER_STALE, NAMES, REQUEUE

AUDIT = "AuditPersistenceFailedException"
NON_IDEM = "non_idempotent_write"
IDEM = "idempotent_write"


def _landed_unaudited(b: History, effect: str = NON_IDEM) -> dict[str, int]:
    """start, stamp, invoke, landing, completion; the audit insert fails."""
    return {
        "start": b.start(),
        "stamp": b.stamp(effect),
        "invoke": b.tool("c1", effect),
        "landing": b.landing("c1", effect, execution=7),
        "done": b.tool_done(execution=7),
        "event": b.event(FAIL, call="c1", execution=7, true_effect=effect),
    }


# -- every_write_accounted ---------------------------------------------------------------


def test_audited_write_is_accounted() -> None:
    b = History()
    b.start()
    b.write("c1", NON_IDEM, execution=3)
    b.settle("completed")
    b.final()
    assert judge("every_write_accounted", b).valid is Validity.VALID


def test_landing_without_event_under_a_completed_final_row_is_unaccounted() -> None:
    b = History()
    w = _landed_unaudited(b)
    b.settle("completed")
    final = b.final()
    verdict = judge("every_write_accounted", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (w["landing"], final)


def test_landing_is_accounted_by_a_final_audit_failure() -> None:
    b = History()
    _landed_unaudited(b)
    b.settle("failed", error_class=AUDIT, termination_reason="provider_failed")
    b.final()
    assert judge("every_write_accounted", b).valid is Validity.VALID


def test_landing_is_accounted_by_a_fenced_not_retryable_dead_letter() -> None:
    b = History()
    b.start()
    b.stamp(NON_IDEM)
    b.tool("c1", NON_IDEM)
    b.landing("c1", NON_IDEM, execution=7)
    b.store(
        NAMES[DEAD_LETTER_STALE],
        identity="reaper",
        site="reaper.dead_letter",
        status="failed",
        termination_reason="not_retryable",
        claimed_by="",
        lease_expires=0,
    )
    b.final()
    assert judge("every_write_accounted", b).valid is Validity.VALID


def test_not_retryable_without_a_standing_fence_does_not_account_for_a_landing() -> None:
    b = History()
    w = _landed_unaudited(b)
    b.stamp("")
    b.settle("failed", termination_reason="not_retryable")
    final = b.final()
    verdict = judge("every_write_accounted", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (w["landing"], final)


def test_event_of_another_run_does_not_account_for_a_landing() -> None:
    b = History()
    b.start()
    landing = b.landing("c1", NON_IDEM, execution=7)
    b.event(call="c1", execution=7, true_effect=NON_IDEM, run="r2")
    b.settle("completed")
    final = b.final()
    assert judge("every_write_accounted", b).witness == (landing, final)


def test_unaccounted_landing_without_a_final_row_is_unknown() -> None:
    b = History()
    w = _landed_unaudited(b)
    verdict = judge("every_write_accounted", b)
    assert verdict.valid is Validity.UNKNOWN
    assert verdict.witness == (w["landing"],)


# -- no_success_over_unrecorded_write ----------------------------------------------------


def test_completed_settle_after_a_failed_write_audit_is_a_violation() -> None:
    b = History()
    w = _landed_unaudited(b, IDEM)
    settle = b.settle("completed")
    verdict = judge("no_success_over_unrecorded_write", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (w["event"], settle)


def test_failed_settle_after_a_failed_write_audit_is_fine() -> None:
    b = History()
    _landed_unaudited(b)
    b.settle("failed", error_class=AUDIT)
    assert judge("no_success_over_unrecorded_write", b).valid is Validity.VALID


def test_failed_audit_of_an_execution_that_never_landed_does_not_taint_the_run() -> None:
    b = History()
    b.start()
    b.event(FAIL, call="c1", execution=9, true_effect=NON_IDEM)
    b.settle("completed")
    assert judge("no_success_over_unrecorded_write", b).valid is Validity.VALID


def test_completion_before_the_failed_audit_is_not_judged() -> None:
    b = History()
    b.start()
    b.landing("c1", NON_IDEM, execution=7)
    b.settle("completed")
    b.event(FAIL, call="c1", execution=7, true_effect=NON_IDEM)
    assert judge("no_success_over_unrecorded_write", b).valid is Validity.VALID


# -- read_only_audit_fail_soft (judged on the segment's next statement) -----------------


def _queued(b: History) -> None:
    b.enqueue()
    b.segment("run_queued")
    b.claim()


def test_a_read_only_steps_failed_audit_followed_by_a_failing_settle_is_a_violation() -> None:
    """The throwing recordStep: the store error escapes, recovery dead-letters the run."""
    b = History()
    _queued(b)
    event = b.event(FAIL, call="c1", execution=2, true_effect="read_only")
    settle = b.settle("failed", termination_reason="not_retryable", error_class="DBALException")
    verdict = judge("read_only_audit_fail_soft", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (event, settle)


def test_a_non_tool_steps_failed_audit_followed_by_a_requeue_is_a_violation() -> None:
    b = History()
    _queued(b)
    event = b.event(FAIL, kind="llm", true_effect="")
    requeue = b.store(NAMES[REQUEUE], status="queued", claimed_by="", requeue_count=1)
    assert judge("read_only_audit_fail_soft", b).witness == (event, requeue)


def test_the_error_class_is_not_what_is_judged() -> None:
    """Any error class: what matters is that nothing but the failed audit came between."""
    b = History()
    _queued(b)
    b.event(FAIL, kind="request", true_effect="")
    b.settle("failed", error_class="SomethingElse")
    assert judge("read_only_audit_fail_soft", b).valid is Validity.INVALID


def test_a_run_that_carries_on_after_the_failed_audit_is_valid() -> None:
    b = History()
    _queued(b)
    b.event(FAIL, kind="request", true_effect="")
    b.provider()
    b.settle("failed", error_class="ProviderException")
    verdict = judge("read_only_audit_fail_soft", b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("1 failed")


def test_a_completed_settle_after_the_failed_audit_is_valid() -> None:
    b = History()
    _queued(b)
    b.event(FAIL, kind="llm", true_effect="")
    b.settle("completed")
    assert judge("read_only_audit_fail_soft", b).valid is Validity.VALID


def test_audit_failure_of_a_write_or_an_unknown_name_may_fail_the_run() -> None:
    b = History()
    _queued(b)
    b.event(FAIL, call="c1", true_effect=NON_IDEM)
    b.settle("failed", error_class=AUDIT)
    b.event(FAIL, call="c2", true_effect="unknown")
    b.settle("failed", error_class=AUDIT)
    verdict = judge("read_only_audit_fail_soft", b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("0 failed")


def test_a_round_the_workload_scripts_to_stop_is_not_judged() -> None:
    """A guardrail or budget stop after the request step is the script's outcome, not the audit's."""
    b = History()
    b.add("plan", OK, process="world", kind="queued", stops=[1])
    _queued(b)
    b.event(FAIL, kind="request", true_effect="")
    b.settle("failed", termination_reason="policy_denied")
    assert judge("read_only_audit_fail_soft", b).valid is Validity.VALID


def test_a_failed_approval_event_is_not_judged() -> None:
    """ADR-132: an approval of a write turn that cannot be recorded changes the run's course."""
    b = History()
    _queued(b)
    b.event(FAIL, kind="approval", true_effect="")
    b.settle("failed")
    assert judge("read_only_audit_fail_soft", b).valid is Validity.VALID


# -- unique_event_sequence ---------------------------------------------------------------


def test_two_stored_events_of_one_run_with_one_sequence_are_a_violation() -> None:
    b = History()
    b.start()
    b.event(seq=0)
    first = b.event(seq=1, identity=WORKER)
    second = b.event(seq=1, identity=OTHER)
    verdict = judge("unique_event_sequence", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (first, second)


def test_distinct_sequences_and_other_runs_are_unique() -> None:
    b = History()
    b.event(seq=0)
    b.event(seq=1)
    b.event(seq=1, run="r2")
    assert judge("unique_event_sequence", b).valid is Validity.VALID


def test_a_failed_event_insert_does_not_occupy_its_sequence() -> None:
    b = History()
    b.event(FAIL, seq=4)
    b.event(seq=4)
    assert judge("unique_event_sequence", b).valid is Validity.VALID
