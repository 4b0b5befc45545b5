"""Audit of tool steps: fail-closed for writes, fail-soft for everything else (spec 3.3 step 5, 3.6, ADR-111).

Peer: AgentRuntimeTest "Audit" bullets, plus spec 3.6 'recordStep returns false'.
"""

from __future__ import annotations

from model.failures import StoreError
from model.transitions import MarkPendingEffect, Requeue
from model.vocab import Outcome, RunStatus, StepKind, TerminationReason


def test_a_writing_tool_whose_audit_cannot_be_persisted_fails_the_run_and_is_not_retried(kit):
    """Peer: AgentRuntimeTest::aWritingToolWhoseAuditCannotBePersistedFailsTheRunAndIsNotRetried —
    queued: AuditPersistenceFailed classifies unknown ⇒ dead-lettered not_retryable, no requeue."""
    kit.enqueue(kit.turn("mcp_write"))
    kit.d.fail(kit.event(StepKind.TOOL), StoreError())

    assert kit.run_queued() is Outcome.FAILED

    row = kit.row()
    assert row.status is RunStatus.FAILED
    assert row.error_class == "AuditPersistenceFailedException"
    assert row.termination_reason is TerminationReason.NOT_RETRYABLE
    assert row.requeue_count == 0
    assert kit.updates(Requeue) == []
    assert len(kit.d.dispatched) == 1  # only the enqueue's wake-up


def test_a_read_only_tool_whose_audit_cannot_be_persisted_leaves_the_run_unaffected(kit):
    """Peer: AgentRuntimeTest::aReadOnlyToolWhoseAuditCannotBePersistedLeavesTheRunUnaffected."""
    kit.enqueue(kit.turn("search"))
    kit.d.fail(kit.event(StepKind.TOOL), StoreError())

    assert kit.run_queued() is Outcome.COMPLETED
    assert kit.row().termination_reason is TerminationReason.COMPLETED


def test_an_interactive_write_whose_audit_fails_is_settled_failed_provider_failed(kit):
    """Spec 3.6: interactive/resume segments settleFailed (provider_failed, error_class =
    AuditPersistenceFailedException); the write itself is not rolled back."""
    kit.d.fail(kit.event(StepKind.TOOL), StoreError())

    assert kit.interactive(kit.turn("mcp_write")) is Outcome.FAILED

    row = kit.row()
    assert (row.status, row.termination_reason) == (RunStatus.FAILED, TerminationReason.PROVIDER_FAILED)
    assert row.error_class == "AuditPersistenceFailedException"
    assert len(kit.d.landings) == 1


def test_the_fence_is_cleared_before_the_failed_write_audit_is_noticed(kit):
    """Spec 3.6: 'fence already cleared in step 4, then AuditPersistenceFailedException' — the
    clear precedes the insert, so the failed run carries no fence."""
    kit.enqueue(kit.turn("mcp_write"))
    kit.d.fail(kit.event(StepKind.TOOL), StoreError())

    kit.run_queued()

    assert [t.effect for t in kit.updates(MarkPendingEffect)] == ["non_idempotent_write", ""]
    assert kit.row().pending_effect == ""


def test_a_failed_audit_of_a_non_tool_step_is_ignored_and_leaves_no_gap(kit):
    """Spec 3.6 + 1.2: a request step's failed insert is fail-soft and does not advance the
    sequence, so the stream stays gap-free."""
    kit.enqueue(kit.turn("search"))
    kit.d.fail(kit.event(StepKind.REQUEST), StoreError())

    assert kit.run_queued() is Outcome.COMPLETED

    assert kit.kinds() == ["dropped", "llm", "tool", "request", "llm"]
    assert kit.seqs() == [0, 1, 2, 3, 4]


def test_a_refused_unknown_tool_whose_audit_fails_fails_the_run(kit):
    """Spec 3.6: an unknown name resolves non_idempotent_write, so its (error) tool step is
    audited fail-closed although nothing executed."""
    kit.enqueue(kit.turn("no_such_tool"))
    kit.d.fail(kit.event(StepKind.TOOL), StoreError())

    assert kit.run_queued() is Outcome.FAILED

    assert kit.d.landings == []
    assert kit.row().error_class == "AuditPersistenceFailedException"


def test_a_denied_write_whose_audit_fails_fails_the_resume(kit):
    """Spec 3.6: 'including a denied or refused write call that never executed' — the denied
    write's error step is a write step; its failed audit settles the resume FAILED."""
    kit.interactive(kit.turn("create_page_draft"))
    kit.d.fail(kit.event(StepKind.TOOL), StoreError())

    assert kit.approve(approved=False) is Outcome.FAILED

    assert kit.d.landings == []
    row = kit.row()
    assert (row.status, row.error_class) == (RunStatus.FAILED, "AuditPersistenceFailedException")
