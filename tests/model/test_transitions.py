"""The guarded updates T1-T15 of spec section 2 (model/transitions.py), one behaviour per test.

For each transition: the SET it performs, the WHERE that refuses it (``apply`` returns None), and
what it deliberately does NOT check; then the historic-defect variants (KB-1, KB-3, KB-9, KB-10).
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.constants import LEASE_S
from model.records import EventRow, RunRequest, RunRow, Step, SuspendedState, ToolCall
from model.transitions import (
    TRANSITIONS,
    Cancel,
    ClaimForResume,
    ClaimQueued,
    DeadLetterStale,
    ExtendLease,
    FinishRun,
    MarkPendingEffect,
    RenewLease,
    Requeue,
    RequeueStale,
    Suspend,
    Transition,
    enqueue_run,
    find_stale_running,
    is_stale,
    max_event_sequence,
    start_run,
)
from model.vocab import NON_TERMINAL, RunStatus, StepKind, TerminationReason, ToolEffect

UID = 7
UUID = "run-7"
NOW = 10_000
ME = "worker:host-a:101"
OTHER = "worker:host-b:202"
RESUMER = "resume:host-c:303"
REQUEST = RunRequest(script=(), offered=("create_page_draft",))
STATE = SuspendedState(
    request=REQUEST, round_no=2, pending=(ToolCall("call-1", "create_page_draft"),), turn_digest="digest-2"
)
NON_IDEMPOTENT = ToolEffect.NON_IDEMPOTENT_WRITE.value
IDEMPOTENT = ToolEffect.IDEMPOTENT_WRITE.value
TERMINAL = (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED)
NOT_RUNNING = tuple(s for s in RunStatus if s is not RunStatus.RUNNING)
NOT_QUEUED = tuple(s for s in RunStatus if s is not RunStatus.QUEUED)


def a_row(**changes: object) -> RunRow:
    """A queued row as enqueue_run stores it, with ``changes`` applied."""
    return dataclasses.replace(enqueue_run(UID, UUID, REQUEST, now=100), **changes)  # type: ignore[arg-type]


def running(owner: str = ME, lease: int = NOW + 300, **changes: object) -> RunRow:
    """A running row of a claimed queued run, with some history: a requeue, totals, a start time."""
    base = a_row(
        status=RunStatus.RUNNING,
        claimed_by=owner,
        lease_expires=lease,
        started_at=200,
        requeue_count=1,
        iterations=2,
        total_tokens=50,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def stale(**changes: object) -> RunRow:
    """A running row whose lease expired just before NOW."""
    return dataclasses.replace(running(lease=NOW - 1), **changes)  # type: ignore[arg-type]


def applied(transition: Transition, row: RunRow) -> RunRow:
    result = transition.apply(row)
    assert result is not None, f"{transition.name} refused {row}"
    return result


def finish(owned_by: str | None = None, status: RunStatus = RunStatus.COMPLETED, **kw: object) -> FinishRun:
    args: dict[str, object] = {
        "status": status,
        "reason": TerminationReason.COMPLETED if status is RunStatus.COMPLETED else TerminationReason.PROVIDER_FAILED,
        "error_class": "" if status is RunStatus.COMPLETED else "ProviderConnectionException",
        "iterations": 4,
        "total_tokens": 900,
        "owned_by": owned_by,
        "now": NOW,
    }
    args.update(kw)
    return FinishRun(**args)  # type: ignore[arg-type]


def suspend(for_input: bool = False, **kw: object) -> Suspend:
    return Suspend(state=STATE, for_input=for_input, now=NOW, **kw)  # type: ignore[arg-type]


def dead_letter(now: int = NOW, write_now: int = NOW + 2) -> DeadLetterStale:
    return DeadLetterStale(reason=TerminationReason.RETRIES_EXHAUSTED, now=now, write_now=write_now)


# ---- T1 startRun, T2 enqueueRun (INSERTs) ------------------------------------------------------


def test_t1_start_run_inserts_a_running_row_under_the_given_identity_and_lease() -> None:
    row = start_run(UID, UUID, "interactive:host:1", NOW + LEASE_S, now=NOW)
    assert (row.status, row.claimed_by, row.lease_expires, row.started_at) == (
        RunStatus.RUNNING,
        "interactive:host:1",
        NOW + LEASE_S,
        NOW,
    )


def test_t1_start_run_without_an_identity_is_unleased() -> None:
    row = start_run(UID, UUID, "", 0, now=NOW)
    assert (row.claimed_by, row.lease_expires) == ("", 0)


def test_t1_start_run_starts_with_zero_totals_no_reason_no_fence_and_no_payloads() -> None:
    row = start_run(UID, UUID, ME, NOW + LEASE_S, now=NOW)
    assert (row.iterations, row.total_tokens, row.termination_reason, row.pending_effect) == (
        0,
        0,
        TerminationReason.NONE,
        "",
    )
    assert (row.queued_request, row.suspended_state, row.requeue_count) == (None, None, 0)


def test_t2_enqueue_run_inserts_a_queued_row_carrying_its_request() -> None:
    row = enqueue_run(UID, UUID, REQUEST, now=NOW)
    assert (row.status, row.queued_request) == (RunStatus.QUEUED, REQUEST)


def test_t2_enqueue_run_leaves_claim_lease_fence_count_and_start_at_their_defaults() -> None:
    row = enqueue_run(UID, UUID, REQUEST, now=NOW)
    assert (row.claimed_by, row.lease_expires, row.pending_effect, row.requeue_count, row.started_at) == (
        "",
        0,
        "",
        0,
        0,
    )


# ---- T3 claimQueued ----------------------------------------------------------------------------


def test_t3_claim_queued_sets_running_owner_lease_and_started_at() -> None:
    row = applied(ClaimQueued(worker=ME, now=NOW), a_row())
    assert (row.status, row.claimed_by, row.lease_expires, row.started_at, row.tstamp) == (
        RunStatus.RUNNING,
        ME,
        NOW + LEASE_S,
        NOW,
        NOW,
    )


def test_t3_claim_queued_overwrites_started_at_of_an_earlier_attempt() -> None:
    row = applied(ClaimQueued(worker=ME, now=NOW), a_row(started_at=200, requeue_count=1))
    assert row.started_at == NOW


@pytest.mark.parametrize("status", NOT_QUEUED)
def test_t3_claim_queued_refuses_every_status_but_queued(status: RunStatus) -> None:
    assert ClaimQueued(worker=ME, now=NOW).apply(a_row(status=status)) is None


def test_t3_claim_queued_does_not_check_for_a_stored_request() -> None:
    row = applied(ClaimQueued(worker=ME, now=NOW), a_row(queued_request=None))
    assert row.status is RunStatus.RUNNING


def test_t3_claim_queued_keeps_the_request_and_the_requeue_count() -> None:
    row = applied(ClaimQueued(worker=ME, now=NOW), a_row(requeue_count=2))
    assert (row.queued_request, row.requeue_count) == (REQUEST, 2)


# ---- T4 renewLease -----------------------------------------------------------------------------


def test_t4_renew_lease_moves_the_lease_to_now_plus_lease_s() -> None:
    row = applied(RenewLease(me=ME, now=NOW), running())
    assert (row.lease_expires, row.tstamp) == (NOW + LEASE_S, NOW)


def test_t4_renew_lease_refuses_a_row_claimed_by_someone_else() -> None:
    assert RenewLease(me=ME, now=NOW).apply(running(owner=OTHER)) is None


@pytest.mark.parametrize("status", NOT_RUNNING)
def test_t4_renew_lease_refuses_a_row_that_is_not_running(status: RunStatus) -> None:
    assert RenewLease(me=ME, now=NOW).apply(running(status=status)) is None


def test_t4_renew_lease_has_no_lease_expiry_predicate_so_an_expired_lease_is_renewed() -> None:
    row = applied(RenewLease(me=ME, now=NOW), running(lease=NOW - 5_000))
    assert row.lease_expires == NOW + LEASE_S


def test_t4_renew_lease_changes_only_the_lease_and_tstamp() -> None:
    before = running(pending_effect=IDEMPOTENT)
    after = applied(RenewLease(me=ME, now=NOW), before)
    assert dataclasses.replace(after, lease_expires=before.lease_expires, tstamp=before.tstamp) == before


# ---- T5 markPendingEffect ----------------------------------------------------------------------


def test_t5_mark_pending_effect_stamps_the_fence_and_renews_the_lease() -> None:
    row = applied(MarkPendingEffect(me=ME, effect=NON_IDEMPOTENT, now=NOW), running())
    assert (row.pending_effect, row.lease_expires, row.tstamp) == (NON_IDEMPOTENT, NOW + LEASE_S, NOW)


def test_t5_mark_pending_effect_with_an_empty_effect_clears_the_fence() -> None:
    row = applied(MarkPendingEffect(me=ME, effect="", now=NOW), running(pending_effect=NON_IDEMPOTENT))
    assert (row.pending_effect, row.lease_expires) == ("", NOW + LEASE_S)


def test_t5_mark_pending_effect_refuses_a_row_claimed_by_someone_else() -> None:
    assert MarkPendingEffect(me=ME, effect=NON_IDEMPOTENT, now=NOW).apply(running(owner=OTHER)) is None


@pytest.mark.parametrize("status", NOT_RUNNING)
def test_t5_mark_pending_effect_refuses_a_row_that_is_not_running(status: RunStatus) -> None:
    assert MarkPendingEffect(me=ME, effect=NON_IDEMPOTENT, now=NOW).apply(running(status=status)) is None


def test_t5_mark_pending_effect_has_no_lease_expiry_predicate() -> None:
    row = applied(MarkPendingEffect(me=ME, effect=IDEMPOTENT, now=NOW), running(lease=NOW - 5_000))
    assert row.pending_effect == IDEMPOTENT


def test_t5_mark_pending_effect_can_extend_the_lease_to_a_declared_deadline() -> None:
    row = applied(MarkPendingEffect(me=ME, effect=IDEMPOTENT, now=NOW, lease_s=3_600), running())
    assert row.lease_expires == NOW + 3_600


def test_p1_extend_lease_runs_the_lease_to_the_deadline_but_never_below_lease_s() -> None:
    longer = applied(ExtendLease(me=ME, now=NOW, lease_s=3_600), running())
    shorter = applied(ExtendLease(me=ME, now=NOW, lease_s=60), running())
    assert (longer.lease_expires, shorter.lease_expires) == (NOW + 3_600, NOW + LEASE_S)


def test_p1_extend_lease_is_owner_guarded_like_t4() -> None:
    assert ExtendLease(me=ME, now=NOW, lease_s=3_600).apply(running(owner=OTHER)) is None


# ---- T7 finishRun ------------------------------------------------------------------------------


def test_t7_finish_run_writes_status_reason_error_class_and_totals() -> None:
    row = applied(finish(owned_by=ME, status=RunStatus.FAILED), running())
    assert (row.status, row.termination_reason, row.error_class, row.iterations, row.total_tokens) == (
        RunStatus.FAILED,
        TerminationReason.PROVIDER_FAILED,
        "ProviderConnectionException",
        4,
        900,
    )


def test_t7_finish_run_clears_payloads_claim_and_lease_and_stamps_finished_at() -> None:
    row = applied(finish(owned_by=ME), running(suspended_state=STATE))
    assert (row.queued_request, row.suspended_state, row.claimed_by, row.lease_expires) == (None, None, "", 0)
    assert (row.finished_at, row.tstamp) == (NOW, NOW)


def test_t7_finish_run_does_not_touch_pending_effect_or_requeue_count() -> None:
    row = applied(finish(owned_by=ME), running(pending_effect=NON_IDEMPOTENT, requeue_count=2))
    assert (row.pending_effect, row.requeue_count) == (NON_IDEMPOTENT, 2)


@pytest.mark.parametrize("status", NON_TERMINAL)
def test_t7_finish_run_settles_every_non_terminal_status(status: RunStatus) -> None:
    assert applied(finish(), running(status=status)).status is RunStatus.COMPLETED


@pytest.mark.parametrize("status", TERMINAL)
def test_t7_finish_run_refuses_a_terminal_row(status: RunStatus) -> None:
    assert finish().apply(running(status=status, claimed_by="")) is None


def test_t7_owner_guard_refuses_a_settle_of_a_row_claimed_by_someone_else() -> None:
    assert finish(owned_by=ME).apply(running(owner=OTHER)) is None


def test_t7_without_owned_by_there_is_no_owner_guard() -> None:
    assert applied(finish(owned_by=None), running(owner=OTHER)).status is RunStatus.COMPLETED


def test_t7_an_empty_owned_by_is_a_guard_that_matches_only_an_unclaimed_row() -> None:
    assert finish(owned_by="").apply(running(owner=OTHER)) is None
    assert applied(finish(owned_by=""), a_row()).status is RunStatus.COMPLETED


def test_kb1_finish_run_without_the_terminal_guard_overwrites_a_terminal_row() -> None:
    completed = applied(finish(owned_by=ME), running())
    late = applied(finish(owned_by=None, status=RunStatus.FAILED, total_tokens=0, terminal_guard=False), completed)
    assert (late.status, late.total_tokens, late.error_class) == (
        RunStatus.FAILED,
        0,
        "ProviderConnectionException",
    )


# ---- T8 cancel ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", NON_TERMINAL)
def test_t8_cancel_moves_every_non_terminal_status_to_cancelled(status: RunStatus) -> None:
    row = applied(Cancel(now=NOW), running(status=status))
    assert (row.status, row.termination_reason) == (RunStatus.CANCELLED, TerminationReason.CANCELLED)


@pytest.mark.parametrize("status", TERMINAL)
def test_t8_cancel_refuses_a_terminal_row(status: RunStatus) -> None:
    assert Cancel(now=NOW).apply(running(status=status)) is None


def test_t8_cancel_has_no_owner_guard() -> None:
    assert applied(Cancel(now=NOW), running(owner=OTHER)).status is RunStatus.CANCELLED


def test_t8_cancel_keeps_the_totals_it_read_and_clears_the_error_class() -> None:
    row = applied(Cancel(now=NOW), running(iterations=3, total_tokens=70, error_class="X"))
    assert (row.iterations, row.total_tokens, row.error_class) == (3, 70, "")


def test_t8_cancel_clears_payloads_claim_and_lease() -> None:
    row = applied(Cancel(now=NOW), running(suspended_state=STATE))
    assert (row.queued_request, row.suspended_state, row.claimed_by, row.lease_expires) == (None, None, "", 0)


# ---- T9 suspendRun / suspendRunForInput --------------------------------------------------------


def test_t9_suspend_moves_a_running_row_to_waiting_for_approval_with_its_state() -> None:
    row = applied(suspend(), running())
    assert (row.status, row.suspended_state) == (RunStatus.WAITING_FOR_APPROVAL, STATE)


def test_t9_suspend_for_input_moves_a_running_row_to_waiting_for_input() -> None:
    assert applied(suspend(for_input=True), running()).status is RunStatus.WAITING_FOR_INPUT


def test_t9_suspend_clears_the_claim_and_the_lease() -> None:
    row = applied(suspend(), running())
    assert (row.claimed_by, row.lease_expires) == ("", 0)


@pytest.mark.parametrize("status", NOT_RUNNING)
def test_t9_suspend_refuses_a_row_that_is_not_running(status: RunStatus) -> None:
    assert suspend().apply(running(status=status)) is None


def test_t9_suspend_has_no_owner_guard_so_it_suspends_a_row_reclaimed_by_another_segment() -> None:
    assert applied(suspend(), running(owner=OTHER)).status is RunStatus.WAITING_FOR_APPROVAL


def test_t9_suspend_keeps_the_stored_request_and_the_fence() -> None:
    row = applied(suspend(), running(pending_effect=IDEMPOTENT))
    assert (row.queued_request, row.pending_effect) == (REQUEST, IDEMPOTENT)


def test_kb3_suspend_without_the_status_guard_resurrects_a_cancelled_row() -> None:
    cancelled = applied(Cancel(now=NOW), running())
    assert applied(suspend(status_guard=False), cancelled).status is RunStatus.WAITING_FOR_APPROVAL


# ---- T10 claimForResume / claimForResumeFromInput ----------------------------------------------


def test_t10_claim_for_resume_runs_a_waiting_row_under_the_resume_identity_with_a_lease() -> None:
    waiting = applied(suspend(), running())
    row = applied(ClaimForResume(identity=RESUMER, for_input=False, now=NOW), waiting)
    assert (row.status, row.claimed_by, row.lease_expires) == (RunStatus.RUNNING, RESUMER, NOW + LEASE_S)


def test_t10_claim_for_resume_from_input_claims_a_row_waiting_for_input() -> None:
    waiting = applied(suspend(for_input=True), running())
    assert applied(ClaimForResume(identity=RESUMER, for_input=True, now=NOW), waiting).claimed_by == RESUMER


@pytest.mark.parametrize(("waiting_for_input", "claim_for_input"), [(True, False), (False, True)])
def test_t10_refuses_a_row_waiting_for_the_other_kind_of_decision(
    waiting_for_input: bool, claim_for_input: bool
) -> None:
    waiting = applied(suspend(for_input=waiting_for_input), running())
    assert ClaimForResume(identity=RESUMER, for_input=claim_for_input, now=NOW).apply(waiting) is None


@pytest.mark.parametrize("status", [s for s in RunStatus if not s.is_awaiting])
@pytest.mark.parametrize("for_input", [False, True])
def test_t10_refuses_a_row_that_is_not_waiting(status: RunStatus, for_input: bool) -> None:
    assert ClaimForResume(identity=RESUMER, for_input=for_input, now=NOW).apply(running(status=status)) is None


def test_t10_claim_for_resume_leaves_started_at() -> None:
    waiting = applied(suspend(), running(started_at=200))
    assert applied(ClaimForResume(identity=RESUMER, for_input=False, now=NOW), waiting).started_at == 200


def test_t10_claim_for_resume_keeps_the_suspended_state_and_the_stored_request() -> None:
    waiting = applied(suspend(), running())
    row = applied(ClaimForResume(identity=RESUMER, for_input=False, now=NOW), waiting)
    assert (row.suspended_state, row.queued_request) == (STATE, REQUEST)


def test_kb10_an_unleased_claim_for_resume_writes_an_empty_owner_and_no_lease() -> None:
    waiting = applied(suspend(), running())
    row = applied(ClaimForResume(identity=RESUMER, for_input=False, now=NOW, leased=False), waiting)
    assert (row.status, row.claimed_by, row.lease_expires) == (RunStatus.RUNNING, "", 0)


# ---- T11 requeue -------------------------------------------------------------------------------


def test_t11_requeue_returns_the_row_to_queued_and_counts_one_requeue() -> None:
    row = applied(Requeue(me=ME, now=NOW), running(requeue_count=1))
    assert (row.status, row.requeue_count, row.tstamp) == (RunStatus.QUEUED, 2, NOW)


def test_t11_requeue_clears_the_claim_the_lease_and_the_fence() -> None:
    row = applied(Requeue(me=ME, now=NOW), running(pending_effect=NON_IDEMPOTENT))
    assert (row.claimed_by, row.lease_expires, row.pending_effect) == ("", 0, "")


def test_t11_requeue_keeps_the_stored_request() -> None:
    assert applied(Requeue(me=ME, now=NOW), running()).queued_request == REQUEST


def test_t11_requeue_does_not_clear_the_suspended_state() -> None:
    assert applied(Requeue(me=ME, now=NOW), running(suspended_state=STATE)).suspended_state == STATE


def test_t11_requeue_refuses_a_row_claimed_by_someone_else() -> None:
    assert Requeue(me=ME, now=NOW).apply(running(owner=OTHER)) is None


@pytest.mark.parametrize("status", NOT_RUNNING)
def test_t11_requeue_refuses_a_row_that_is_not_running(status: RunStatus) -> None:
    assert Requeue(me=ME, now=NOW).apply(running(status=status)) is None


def test_kb9_requeue_without_clearing_the_fence_keeps_it() -> None:
    row = applied(Requeue(me=ME, now=NOW, clear_fence=False), running(pending_effect=NON_IDEMPOTENT))
    assert (row.status, row.pending_effect) == (RunStatus.QUEUED, NON_IDEMPOTENT)


# ---- T12 findStaleRunning ----------------------------------------------------------------------


def test_t12_find_stale_running_returns_running_rows_whose_lease_has_expired() -> None:
    expired, fresh = stale(uid=1), running(uid=2)
    assert find_stale_running([expired, fresh], now=NOW, limit=50) == [expired]


def test_t12_find_stale_running_orders_by_lease_then_uid() -> None:
    rows = [stale(uid=1, lease_expires=300), stale(uid=3, lease_expires=100), stale(uid=2, lease_expires=100)]
    assert [r.uid for r in find_stale_running(rows, now=NOW, limit=50)] == [2, 3, 1]


def test_t12_find_stale_running_returns_at_most_limit_rows_oldest_first() -> None:
    rows = [stale(uid=uid, lease_expires=1_000 - uid) for uid in range(1, 6)]
    assert [r.uid for r in find_stale_running(rows, now=NOW, limit=2)] == [5, 4]


def test_t12_an_unleased_running_row_is_not_stale() -> None:
    assert find_stale_running([running(lease=0)], now=NOW, limit=50) == []


def test_t12_a_lease_expiring_exactly_now_is_not_stale() -> None:
    assert not is_stale(running(lease=NOW), NOW)
    assert is_stale(running(lease=NOW - 1), NOW)


@pytest.mark.parametrize("status", NOT_RUNNING)
def test_t12_a_row_that_is_not_running_is_not_stale_whatever_its_lease(status: RunStatus) -> None:
    assert find_stale_running([stale(status=status)], now=NOW, limit=50) == []


# ---- T13 requeueStale --------------------------------------------------------------------------


def test_t13_requeue_stale_requeues_an_expired_row_like_t11() -> None:
    row = applied(RequeueStale(now=NOW), stale(requeue_count=1, pending_effect=IDEMPOTENT))
    assert (row.status, row.requeue_count, row.claimed_by, row.lease_expires, row.pending_effect) == (
        RunStatus.QUEUED,
        2,
        "",
        0,
        "",
    )
    assert (row.queued_request, row.tstamp) == (REQUEST, NOW)


def test_t13_requeue_stale_has_no_owner_predicate() -> None:
    assert applied(RequeueStale(now=NOW), stale(claimed_by="anybody")).status is RunStatus.QUEUED


def test_t13_requeue_stale_has_no_pending_effect_predicate_so_it_requeues_a_non_idempotent_fence() -> None:
    row = applied(RequeueStale(now=NOW), stale(pending_effect=NON_IDEMPOTENT))
    assert (row.status, row.pending_effect) == (RunStatus.QUEUED, "")


@pytest.mark.parametrize("lease", [0, NOW, NOW + 1], ids=["unleased", "expires-now", "fresh"])
def test_t13_requeue_stale_refuses_a_row_whose_lease_is_not_expired(lease: int) -> None:
    assert RequeueStale(now=NOW).apply(running(lease=lease)) is None


@pytest.mark.parametrize("status", NOT_RUNNING)
def test_t13_requeue_stale_refuses_a_row_that_is_not_running(status: RunStatus) -> None:
    assert RequeueStale(now=NOW).apply(stale(status=status)) is None


def test_kb9_requeue_stale_without_clearing_the_fence_keeps_it() -> None:
    row = applied(RequeueStale(now=NOW, clear_fence=False), stale(pending_effect=IDEMPOTENT))
    assert (row.status, row.pending_effect) == (RunStatus.QUEUED, IDEMPOTENT)


# ---- T14 deadLetterStale -----------------------------------------------------------------------


def test_t14_dead_letter_stale_fails_an_expired_row_with_the_given_reason() -> None:
    row = applied(dead_letter(), stale(error_class="X"))
    assert (row.status, row.termination_reason, row.error_class) == (
        RunStatus.FAILED,
        TerminationReason.RETRIES_EXHAUSTED,
        "",
    )


def test_t14_dead_letter_stale_clears_payloads_claim_and_lease() -> None:
    row = applied(dead_letter(), stale(suspended_state=STATE))
    assert (row.queued_request, row.suspended_state, row.claimed_by, row.lease_expires) == (None, None, "", 0)


def test_t14_dead_letter_stale_leaves_the_totals_and_the_fence() -> None:
    row = applied(dead_letter(), stale(iterations=3, total_tokens=70, pending_effect=NON_IDEMPOTENT))
    assert (row.iterations, row.total_tokens, row.pending_effect) == (3, 70, NON_IDEMPOTENT)


def test_t14_dead_letter_stale_stamps_finished_at_from_the_write_clock_not_the_captured_now() -> None:
    row = applied(dead_letter(now=NOW, write_now=NOW + 7), stale())
    assert (row.finished_at, row.tstamp) == (NOW + 7, NOW + 7)


def test_t14_dead_letter_stale_has_no_owner_or_pending_effect_predicate() -> None:
    row = applied(dead_letter(), stale(claimed_by="anybody", pending_effect=IDEMPOTENT))
    assert row.status is RunStatus.FAILED


@pytest.mark.parametrize("lease", [0, NOW, NOW + 1], ids=["unleased", "expires-now", "fresh"])
def test_t14_dead_letter_stale_refuses_a_row_whose_lease_is_not_expired(lease: int) -> None:
    assert dead_letter().apply(running(lease=lease)) is None


@pytest.mark.parametrize("status", NOT_RUNNING)
def test_t14_dead_letter_stale_refuses_a_row_that_is_not_running(status: RunStatus) -> None:
    assert dead_letter().apply(stale(status=status)) is None


# ---- T15 maxEventSequence ----------------------------------------------------------------------


def _event(sequence: int) -> EventRow:
    return EventRow(run_uid=UID, sequence=sequence, step=Step(kind=StepKind.REQUEST, round_no=1))


def test_t15_max_event_sequence_is_minus_one_for_a_run_without_events() -> None:
    assert max_event_sequence([]) == -1


def test_t15_max_event_sequence_is_the_largest_sequence_not_the_event_count() -> None:
    assert max_event_sequence([_event(0), _event(5), _event(1), _event(5)]) == 5


# ---- properties over every guarded update ------------------------------------------------------

_TRANSITION_STRATEGIES: dict[type[Transition], st.SearchStrategy[Transition]] = {
    ClaimQueued: st.builds(ClaimQueued, worker=st.just(ME), now=st.just(NOW)),
    RenewLease: st.builds(RenewLease, me=st.sampled_from([ME, ""]), now=st.just(NOW)),
    MarkPendingEffect: st.builds(
        MarkPendingEffect, me=st.sampled_from([ME, ""]), effect=st.sampled_from(["", IDEMPOTENT]), now=st.just(NOW)
    ),
    ExtendLease: st.builds(ExtendLease, me=st.sampled_from([ME, ""]), now=st.just(NOW), lease_s=st.just(3_600)),
    FinishRun: st.builds(finish, owned_by=st.sampled_from([None, ME, ""])),
    Cancel: st.builds(Cancel, now=st.just(NOW)),
    Suspend: st.builds(suspend, for_input=st.booleans()),
    ClaimForResume: st.builds(ClaimForResume, identity=st.just(RESUMER), for_input=st.booleans(), now=st.just(NOW)),
    Requeue: st.builds(Requeue, me=st.sampled_from([ME, ""]), now=st.just(NOW)),
    RequeueStale: st.builds(RequeueStale, now=st.just(NOW)),
    DeadLetterStale: st.builds(dead_letter),
}

rows = st.builds(
    running,
    owner=st.sampled_from([ME, OTHER, ""]),
    lease=st.sampled_from([0, NOW - 1, NOW, NOW + 1]),
    status=st.sampled_from(list(RunStatus)),
    pending_effect=st.sampled_from(["", IDEMPOTENT, NON_IDEMPOTENT]),
)


def test_every_guarded_update_has_a_strategy_in_this_suite() -> None:
    assert set(_TRANSITION_STRATEGIES) == set(TRANSITIONS)


@given(row=rows, transition=st.one_of(*_TRANSITION_STRATEGIES.values()))
def test_no_guarded_update_with_its_guards_in_place_changes_a_terminal_row(row: RunRow, transition: Transition) -> None:
    if row.status.is_terminal:
        assert transition.apply(row) is None
    else:
        assert transition.apply(dataclasses.replace(row, status=RunStatus.COMPLETED)) is None


@given(row=rows, transition=st.one_of(*_TRANSITION_STRATEGIES.values()))
def test_a_guarded_update_never_changes_the_rows_identity(row: RunRow, transition: Transition) -> None:
    after = transition.apply(row)
    if after is not None:
        assert (after.uid, after.uuid, after.crdate) == (row.uid, row.uuid, row.crdate)
