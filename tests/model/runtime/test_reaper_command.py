"""The reaper `nrllm:agent:reap` (spec 5.1, T12-T14, C1, C6, C7, C10, C11, ADR-104/112/141).

Peer: ReapStaleAgentRunsCommandTest. Rows in a given fence/budget/payload state are
placed directly, as the peer's in-memory repository double does; abandoned segments are
produced by pausing a real one.
"""

from __future__ import annotations

import pytest

from model.failures import DispatchError, StoreError
from model.requests import CallProvider, Dispatch, MaxSequence, SelectStale
from model.transitions import DeadLetterStale, FinishRun, RenewLease, RequeueStale
from model.vocab import Outcome, RunStatus, TerminationReason


def _stale(kit, uuid="r1", *, count=0, fence="", payload=True, lease=500):
    """A RUNNING row whose worker's lease (``lease``) lies before the clock (1000)."""
    kit.enqueue(uuid=uuid)
    kit.d.dispatched.clear()
    fields = {"queued_request": None} if not payload else {}
    kit.place(
        uuid,
        status=RunStatus.RUNNING,
        claimed_by=kit.worker,
        lease_expires=lease,
        requeue_count=count,
        pending_effect=fence,
        **fields,
    )


def _counts(report):
    return (report.exit_code, report.requeued, report.dead_lettered, report.skipped)


def test_reclaims_a_stale_run_under_budget_and_dispatches_a_wake_up(kit):
    """Peer: ReapStaleAgentRunsCommandTest::reclaimsAStaleRunUnderBudgetAndDispatchesAWakeUp — one
    requeueStale, one undelayed message, '1 requeued'."""
    _stale(kit)

    assert _counts(kit.reap()) == (0, 1, 0, 0)

    assert len(kit.updates(RequeueStale)) == 1
    assert [(m.uuid, m.delay_ms) for m in kit.d.dispatched] == [(kit.uuid, 0)]
    row = kit.row()
    assert (row.status, row.requeue_count, row.claimed_by, row.lease_expires) == (RunStatus.QUEUED, 1, "", 0)
    assert row.queued_request is not None


def test_dead_letters_a_stale_run_whose_budget_is_spent(kit):
    """Peer: ReapStaleAgentRunsCommandTest::deadLettersAStaleRunWhoseBudgetIsSpent."""
    _stale(kit, count=3)

    assert _counts(kit.reap()) == (0, 0, 1, 0)

    assert kit.row().termination_reason is TerminationReason.RETRIES_EXHAUSTED
    assert kit.updates(RequeueStale) == [] and kit.d.dispatched == []


def test_dead_letters_a_run_reaped_mid_non_idempotent_write_even_under_budget(kit):
    """Peer: ReapStaleAgentRunsCommandTest::deadLettersARunReapedMidNonIdempotentWriteEvenUnderBudget —
    T14 not_retryable; the fence is left as it was."""
    _stale(kit, fence="non_idempotent_write")

    assert _counts(kit.reap()) == (0, 0, 1, 0)

    row = kit.row()
    assert (row.status, row.termination_reason) == (RunStatus.FAILED, TerminationReason.NOT_RETRYABLE)
    assert row.pending_effect == "non_idempotent_write"
    assert kit.d.dispatched == []


def test_reclaims_a_run_reaped_mid_idempotent_write(kit):
    """Peer: ReapStaleAgentRunsCommandTest::reclaimsARunReapedMidIdempotentWrite — and the requeue
    clears the fence (ADR-122)."""
    _stale(kit, fence="idempotent_write")

    assert _counts(kit.reap()) == (0, 1, 0, 0)

    assert len(kit.d.dispatched) == 1
    assert kit.row().pending_effect == ""


def test_dead_letters_an_abandoned_segment_that_stored_no_request_to_re_execute(kit):
    """Peer: ReapStaleAgentRunsCommandTest::deadLettersAnAbandonedSegmentThatStoredNoRequestToReExecute —
    an interactive segment abandoned mid provider call is dead-lettered not_retryable (ADR-141)."""
    kit.pause(kit.interactive_gen(), kit.req(CallProvider))  # the process dies in the call
    kit.expire()

    assert _counts(kit.reap()) == (0, 0, 1, 0)

    assert kit.row().termination_reason is TerminationReason.NOT_RETRYABLE
    assert kit.d.dispatched == []


def test_dead_letters_an_abandoned_segment_reaped_mid_write_without_consulting_its_budget(kit):
    """Peer: ReapStaleAgentRunsCommandTest::deadLettersAnAbandonedSegmentReapedMidWriteWithoutConsultingItsBudget —
    fence rule first: not_retryable although the budget is spent too."""
    _stale(kit, fence="non_idempotent_write", payload=False, count=3)

    kit.reap()

    assert kit.row().termination_reason is TerminationReason.NOT_RETRYABLE


def test_skips_a_run_renewed_between_select_and_update(kit):
    """Peer: ReapStaleAgentRunsCommandTest::skipsARunRenewedBetweenSelectAndUpdate — the staleness
    re-check in SQL lets the live worker win: no dispatch, '1 skipped'."""
    _stale(kit)
    kit.d.before(kit.update(RequeueStale), lambda _r: kit.d.db.update(kit.uuid, RenewLease(kit.worker, kit.d.now)))

    assert _counts(kit.reap()) == (0, 0, 0, 1)

    assert kit.d.dispatched == []
    assert (kit.row().status, kit.row().claimed_by) == (RunStatus.RUNNING, kit.worker)


def test_a_dead_letter_refused_by_the_staleness_recheck_is_skipped(kit):
    """Spec 5.1 3a: 'Write refused by the re-check ⇒ counted skipped'."""
    _stale(kit, fence="non_idempotent_write")
    kit.d.before(kit.update(DeadLetterStale), lambda _r: kit.d.db.update(kit.uuid, RenewLease(kit.worker, kit.d.now)))

    assert _counts(kit.reap()) == (0, 0, 0, 1)
    assert kit.row().status is RunStatus.RUNNING


def test_fails_a_reclaimed_run_whose_wake_up_cannot_be_dispatched_to_avoid_an_orphan(kit):
    """Peer: ReapStaleAgentRunsCommandTest::failsAReclaimedRunWhoseWakeUpCannotBeDispatchedToAvoidAnOrphan —
    unguarded settleFailed (provider_failed); '0 requeued, 1 dead-lettered'."""
    _stale(kit)
    kit.d.fail(kit.req(Dispatch), DispatchError())

    assert _counts(kit.reap()) == (0, 0, 1, 0)

    row = kit.row()
    assert (row.status, row.termination_reason) == (RunStatus.FAILED, TerminationReason.PROVIDER_FAILED)
    assert [t.owned_by for t in kit.updates(FinishRun)] == [None]


def test_an_unreadable_position_after_a_failed_dispatch_leaves_the_row_queued_but_counts_it(kit):
    """Spec 5.1 3e + C6: the MAX read fails ⇒ no settle, row QUEUED without wake-up, still counted
    dead-lettered."""
    _stale(kit)
    kit.d.fail(kit.req(Dispatch), DispatchError())
    kit.d.fail(kit.req(MaxSequence, site="reaper.dispatch_failed"), StoreError())

    assert _counts(kit.reap()) == (0, 0, 1, 0)

    assert kit.row().status is RunStatus.QUEUED
    assert kit.updates(FinishRun) == []


@pytest.mark.parametrize("limit", [0, -1, "0", "0.5", "abc", "inf", "1_000", ""])
def test_rejects_a_non_positive_limit(kit, limit):
    """Peer: ReapStaleAgentRunsCommandTest::rejectsANonPositiveLimit (with C7's non-numeric values) ⇒ INVALID."""
    _stale(kit)

    assert kit.reap(limit).exit_code == 2
    assert kit.updates(RequeueStale) == []


def test_fails_when_no_message_bus_is_available(kit):
    """Peer: ReapStaleAgentRunsCommandTest::failsWhenNoMessageBusIsAvailable ⇒ FAILURE, nothing read."""
    _stale(kit)

    assert kit.reap(has_bus=False).exit_code == 1
    assert kit.d.of(SelectStale) == []


def test_a_fractional_limit_is_truncated_and_the_oldest_leases_go_first(kit):
    """Spec C7 + T12: '--limit 2.7' runs as 2; rows are taken oldest lease first."""
    for uuid, lease in (("a", 700), ("b", 300), ("c", 500)):
        _stale(kit, uuid, lease=lease)

    assert kit.reap("2.7").requeued == 2

    assert [u.uuid for u in kit.d.dispatched] == ["b", "c"]
    assert kit.row("a").status is RunStatus.RUNNING


def test_only_leased_running_rows_are_ever_selected(kit):
    """Spec T12 / 7.2: QUEUED rows, fresh leases and unleased (lease 0) RUNNING rows are not stale."""
    kit.enqueue(uuid="queued")
    _stale(kit, "fresh", lease=5_000)
    _stale(kit, "unleased", lease=0)

    assert _counts(kit.reap()) == (0, 0, 0, 0)


def test_a_dead_letter_is_timestamped_by_the_write_not_by_the_selects_now(kit):
    """Spec C10: finished_at/tstamp come from the reaper's clock at the write."""
    _stale(kit, count=3)
    kit.d.before(kit.req(SelectStale), lambda _r: setattr(kit.d, "now", 1_060))

    kit.reap()

    assert kit.row().finished_at == 1_060


def test_a_failing_select_makes_the_tick_do_nothing(kit):
    """Spec C11 / T12: the persister returns [] on a SELECT error; the reaper exits SUCCESS idle."""
    _stale(kit)
    kit.d.fail(kit.req(SelectStale), StoreError())

    assert _counts(kit.reap()) == (0, 0, 0, 0)
    assert kit.row().status is RunStatus.RUNNING


def test_a_stale_resume_of_an_enqueued_run_is_requeued_and_re_runs_from_round_one(kit):
    """Spec C1: an enqueued run that suspended keeps queued_request; its abandoned resume segment is
    requeued (not dead-lettered); runQueued re-runs round 1, asks for approval again, and the old
    suspended_state stayed on the row through the requeue."""
    kit.enqueue(kit.turn("create_page_draft"))
    assert kit.run_queued() is Outcome.AWAITING_APPROVAL
    kit.pause(kit.approve_gen(), kit.req(CallProvider))  # the resume segment dies mid call
    kit.expire()

    assert _counts(kit.reap()) == (0, 1, 0, 0)
    assert kit.row().suspended_state is not None

    assert kit.run_queued(identity=kit.worker_b) is Outcome.AWAITING_APPROVAL
    assert [r.round_no for r in kit.d.of(CallProvider)][-1] == 1
