"""In-process recovery of a failed queued segment: retry or dead-letter (spec 5.2, ADR-104/112).

Peer: AgentRuntimeTest "Recovery" bullets, plus spec 5.2's re-read, dispatch-failure and
Sync-transport statements.
"""

from __future__ import annotations

import pytest

from model.failures import (
    DispatchError,
    ProviderConfigurationError,
    ProviderConnectionError,
    StoreError,
)
from model.requests import CallProvider, Dispatch, EmitStep, FindRun, Note
from model.transitions import FinishRun, Requeue
from model.vocab import Outcome, RunStatus, TerminationReason


def _provider_fails(kit, error):
    kit.d.fail(kit.req(CallProvider), error)


def test_a_queued_run_failing_retryably_is_requeued_and_re_dispatched_with_backoff(kit):
    """Peer: AgentRuntimeTest::aQueuedRunFailingRetryablyIsRequeuedAndReDispatchedWithBackoff —
    connection error ⇒ REQUEUED via the owner's T11, no settle, wake-up delayed 30 000 ms."""
    kit.enqueue()
    _provider_fails(kit, ProviderConnectionError())

    assert kit.run_queued() is Outcome.REQUEUED

    assert [t.me for t in kit.updates(Requeue)] == [kit.worker]
    assert kit.updates(FinishRun) == []
    assert kit.d.dispatched[-1].delay_ms == 30_000
    row = kit.row()
    assert (row.status, row.requeue_count, row.claimed_by, row.lease_expires) == (RunStatus.QUEUED, 1, "", 0)
    assert row.queued_request is not None


def test_a_queued_run_failing_non_retryably_is_dead_lettered_as_not_retryable(kit):
    """Peer: AgentRuntimeTest::aQueuedRunFailingNonRetryablyIsDeadLetteredAsNotRetryable."""
    kit.enqueue()
    _provider_fails(kit, ProviderConfigurationError())

    assert kit.run_queued() is Outcome.FAILED

    row = kit.row()
    assert (row.status, row.termination_reason) == (RunStatus.FAILED, TerminationReason.NOT_RETRYABLE)
    assert row.error_class == "ProviderConfigurationException"
    assert kit.updates(Requeue) == []


def test_a_queued_run_out_of_retry_budget_is_dead_lettered_as_retries_exhausted(kit):
    """Peer: AgentRuntimeTest::aQueuedRunOutOfRetryBudgetIsDeadLetteredAsRetriesExhausted."""
    kit.enqueue()
    kit.place(requeue_count=3)
    _provider_fails(kit, ProviderConnectionError())

    assert kit.run_queued() is Outcome.FAILED

    row = kit.row()
    assert (row.termination_reason, row.requeue_count) == (TerminationReason.RETRIES_EXHAUSTED, 3)
    assert kit.updates(Requeue) == []


def test_a_queued_run_losing_ownership_during_requeue_is_not_settled(kit):
    """Peer: AgentRuntimeTest::aQueuedRunLosingOwnershipDuringRequeueIsNotSettled — T11 refused
    (another worker holds the row) ⇒ LEASE_LOST, no settle, no dispatch."""
    kit.enqueue()
    _provider_fails(kit, ProviderConnectionError())
    kit.d.before(kit.update(Requeue), lambda _r: kit.place(claimed_by=kit.worker_b))

    assert kit.run_queued() is Outcome.LEASE_LOST

    assert kit.updates(FinishRun) == []
    assert len(kit.d.dispatched) == 1
    assert (kit.row().status, kit.row().claimed_by) == (RunStatus.RUNNING, kit.worker_b)


def test_a_retryable_failure_mid_non_idempotent_write_is_dead_lettered_not_requeued(kit):
    """Peer: AgentRuntimeTest::aRetryableFailureMidNonIdempotentWriteIsDeadLetteredNotRequeued.
    The fence stands while a retryable throwable escapes: here the live observer throws a
    connection error on the write's tool step, before the boundary clears the fence."""
    kit.enqueue(kit.turn("mcp_write"))
    kit.d.fail(kit.req(EmitStep, kind="tool"), ProviderConnectionError())

    assert kit.run_queued(observer=True) is Outcome.FAILED

    row = kit.row()
    assert (row.termination_reason, row.requeue_count) == (TerminationReason.NOT_RETRYABLE, 0)
    assert row.pending_effect == "non_idempotent_write"
    assert kit.updates(Requeue) == []


@pytest.mark.parametrize(("count", "delay_ms"), [(0, 30_000), (1, 60_000), (2, 120_000)])
def test_the_requeue_backoff_doubles_with_the_count_read_before_the_requeue(kit, count, delay_ms):
    """Spec 1.3 / 5.2 step 5: delay = min(30 000·2^c, 600 000) with c read before T11 increments it."""
    kit.enqueue()
    kit.place(requeue_count=count)
    _provider_fails(kit, ProviderConnectionError())

    assert kit.run_queued() is Outcome.REQUEUED
    assert (kit.d.dispatched[-1].delay_ms, kit.row().requeue_count) == (delay_ms, count + 1)


def test_an_unreadable_row_at_recovery_counts_as_an_exhausted_budget(kit):
    """Spec 5.2 step 3: the re-read fails ⇒ count -1 ⇒ dead-lettered retries_exhausted."""
    kit.enqueue()
    _provider_fails(kit, ProviderConnectionError())
    kit.d.fail(kit.req(FindRun, site="recovery.reread"), StoreError())

    assert kit.run_queued() is Outcome.FAILED
    assert kit.row().termination_reason is TerminationReason.RETRIES_EXHAUSTED


def test_a_failed_requeue_dispatch_reports_failed_but_leaves_the_row_queued_without_a_wake_up(kit):
    """Spec 5.2 step 5: the owner-guarded dead-letter after a failed dispatch matches nothing (the
    row is already QUEUED and unclaimed) — outcome FAILED, row QUEUED, no message."""
    kit.enqueue()
    _provider_fails(kit, ProviderConnectionError())
    kit.d.fail(kit.req(Dispatch, site="recovery.dispatch"), DispatchError())

    assert kit.run_queued() is Outcome.FAILED

    (dead_letter,) = kit.updates(FinishRun)
    assert dead_letter.owned_by == kit.worker
    assert dead_letter.reason is TerminationReason.RETRIES_EXHAUSTED
    assert (kit.row().status, kit.row().requeue_count) == (RunStatus.QUEUED, 1)
    assert len(kit.d.dispatched) == 1


def test_the_dead_letter_after_a_failed_dispatch_records_the_original_error_class(kit):
    """Spec 5.2 step 5 (QueuedRunFailureRecovery's outer catch): the dead-letter that follows a failed
    dispatch settles with the error the segment failed with, not the bus's. A worker identity of ''
    lets the owner guard match the requeued row (the requeue writes claimed_by ''), so the class is
    visible on the row as well as on the statement."""
    kit.enqueue()
    _provider_fails(kit, ProviderConnectionError())
    kit.d.fail(kit.req(Dispatch, site="recovery.dispatch"), DispatchError())

    assert kit.run_queued(identity="") is Outcome.FAILED

    (dead_letter,) = kit.updates(FinishRun)
    assert dead_letter.error_class == "ProviderConnectionException"
    row = kit.row()
    assert (row.status, row.termination_reason) == (RunStatus.FAILED, TerminationReason.RETRIES_EXHAUSTED)
    assert row.error_class == "ProviderConnectionException"


def test_on_the_sync_transport_the_next_attempt_runs_inline_and_the_outer_call_still_says_requeued(kit):
    """Spec 5.2 (ADR-104): the dispatch runs the next attempt nested inside recover; the delay is
    ignored; the outer segment still returns REQUEUED."""
    kit.enqueue()
    _provider_fails(kit, ProviderConnectionError())
    inner = []
    kit.d.before(
        kit.req(Dispatch, site="recovery.dispatch"), lambda _r: inner.append(kit.run_queued(identity=kit.worker_b))
    )

    assert kit.run_queued() is Outcome.REQUEUED

    assert inner == [Outcome.COMPLETED]
    assert (kit.row().status, kit.row().requeue_count) == (RunStatus.COMPLETED, 1)


def test_recovery_states_what_it_read_and_decided(kit):
    """Spec 5.2 step 2: the decision is made on the re-read row (fence, count, payload)."""
    kit.enqueue()
    _provider_fails(kit, ProviderConnectionError())

    kit.run_queued()

    (note,) = [n for n in kit.d.of(Note) if dict(n.detail).get("decider") == "recovery"]
    assert dict(note.detail) == {
        "decider": "recovery",
        "pending_effect": "",
        "requeue_count": 0,
        "has_request": True,
        "decision": "retry",
    }
