"""The write path end to end: model call, suspension, approval, fenced write, audit (spec 3.2-3.6, 6).

Peer: WritePathAcceptanceTest. A builtin writer suspends for approval before it runs, so
it executes on the resume segment.
"""

from __future__ import annotations

from model.failures import StoreError
from model.transitions import ClaimForResume, MarkPendingEffect
from model.vocab import Outcome, RunStatus, StepKind, TerminationReason


def test_an_approved_write_runs_from_the_model_call_to_the_changed_record(kit):
    """Peer: WritePathAcceptanceTest::anApprovedWriteRunsFromTheModelCallToTheChangedRecord."""
    assert kit.interactive(kit.turn("create_page_draft")) is Outcome.AWAITING_APPROVAL
    assert kit.d.landings == []

    assert kit.approve() is Outcome.COMPLETED

    assert [landing.tool for landing in kit.d.landings] == ["create_page_draft"]
    approval = next(e for e in kit.events() if e.step.kind is StepKind.APPROVAL)
    (tool,) = kit.tool_events()
    assert approval.sequence < tool.sequence
    assert tool.step.execution == kit.d.landings[0].execution


def test_the_write_is_fenced_on_the_resume_that_executes_it(kit):
    """Peer: WritePathAcceptanceTest::theWriteIsFencedOnTheResumeThatExecutesIt — fence writes
    [idempotent_write, ''], both under the single resume claim."""
    kit.interactive(kit.turn("update_page_metadata"))
    assert kit.updates(MarkPendingEffect) == []

    kit.approve()

    fence = kit.updates(MarkPendingEffect)
    assert [t.effect for t in fence] == ["idempotent_write", ""]
    assert {t.me for t in fence} == {kit.resume_id}
    assert [c.identity for c in kit.updates(ClaimForResume)] == [kit.resume_id]


def test_a_denied_write_changes_nothing(kit):
    """Peer: WritePathAcceptanceTest::aDeniedWriteChangesNothing — COMPLETED, nothing written, the
    tool event is an error step, and the denied call is never fenced."""
    kit.interactive(kit.turn("create_page_draft"))

    assert kit.approve(approved=False) is Outcome.COMPLETED

    assert kit.d.landings == []
    assert [(e.step.tool, e.step.is_error) for e in kit.tool_events()] == [("create_page_draft", True)]
    assert [t.effect for t in kit.updates(MarkPendingEffect)] == [""]  # its boundary clear only
    assert kit.row().status is RunStatus.COMPLETED


def test_an_approval_that_cannot_be_audited_does_not_write(kit):
    """Peer: WritePathAcceptanceTest::anApprovalThatCannotBeAuditedDoesNotWrite — back to waiting,
    nothing written; a later approval that is recorded writes exactly once."""
    kit.interactive(kit.turn("create_page_draft"))
    kit.d.fail(kit.event(StepKind.APPROVAL), StoreError())

    assert kit.approve() is Outcome.AWAITING_APPROVAL
    assert kit.d.landings == []

    assert kit.approve() is Outcome.COMPLETED
    assert len(kit.d.landings) == 1


def test_a_write_whose_step_audit_fails_fails_the_run(kit):
    """Peer: WritePathAcceptanceTest::aWriteWhoseStepAuditFailsFailsTheRun — FAILED with
    AuditPersistenceFailed, but the record was changed (no rollback)."""
    kit.interactive(kit.turn("create_page_draft"))
    kit.d.fail(kit.event(StepKind.TOOL), StoreError())

    assert kit.approve() is Outcome.FAILED

    row = kit.row()
    assert (row.status, row.error_class) == (RunStatus.FAILED, "AuditPersistenceFailedException")
    assert row.termination_reason is TerminationReason.PROVIDER_FAILED
    assert len(kit.d.landings) == 1
