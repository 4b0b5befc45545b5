"""The persister's contract as the runtime sees it: never throws, reports refusals (spec 1.2, T6-T10).

Peer: AgentRunPersisterTest (unit). The persister has no entry point of its own in the
model; each test reaches it through the boundary hook, the resume coordinator, the
ladder or cancel, and pins what the caller observes.
"""

from __future__ import annotations

import pytest

from model.failures import ProviderAuthenticationError, RunAlreadyResuming, StoreError
from model.records import Turn, TurnOutcome
from model.requests import CallProvider, InsertEvent, InsertRun, Update
from model.transitions import ClaimForResume, FinishRun, Suspend
from model.vocab import Outcome, RunStatus, StepKind, TerminationReason


def test_record_step_appends_sequential_events_and_advances_the_handle(kit):
    """Peer: AgentRunPersisterTest::recordStepAppendsSequentialEventsAndAdvancesTheHandle."""
    kit.interactive(kit.turn("search"))

    assert kit.seqs() == [0, 1, 2, 3, 4, 5]
    assert kit.kinds() == ["dropped", "request", "llm", "tool", "request", "llm"]


def test_record_step_swallows_a_repository_error_and_does_not_advance_the_handle(kit):
    """Peer: AgentRunPersisterTest::recordStepSwallowsARepositoryErrorAndDoesNotAdvanceTheHandle —
    the first insert fails, nothing throws, and the next event still takes sequence 0."""
    kit.d.fail(kit.event(StepKind.DROPPED), StoreError())

    assert kit.interactive() is Outcome.COMPLETED

    assert kit.events()[0].step.kind is StepKind.REQUEST
    assert kit.seqs() == [0, 1]


def test_record_approval_reports_whether_the_decision_was_stored(kit):
    """Peer: AgentRunPersisterTest::recordApprovalReportsWhetherTheDecisionWasStored — the approval
    event is stored at MAX+1 with the decision, and the handle moves on past it."""
    kit.interactive(kit.turn("create_page_draft"))
    top = max(kit.seqs())

    assert kit.approve() is Outcome.COMPLETED

    approval = next(e for e in kit.events() if e.step.kind is StepKind.APPROVAL)
    assert (approval.sequence, approval.step.decision) == (top + 1, "approve")
    assert kit.tool_events()[0].sequence == top + 2


def test_record_approval_returns_false_on_a_store_error_without_throwing_or_advancing(kit):
    """Peer: AgentRunPersisterTest::recordApprovalReturnsFalseOnAStoreErrorWithoutThrowingOrAdvancing —
    a read-only turn continues; its tool event takes the position the approval would have had."""
    kit.interactive(kit.turn("confirm"))
    top = max(kit.seqs())
    kit.d.fail(kit.event(StepKind.APPROVAL), StoreError())

    assert kit.approve() is Outcome.COMPLETED

    assert StepKind.APPROVAL.value not in kit.kinds()
    assert kit.tool_events()[0].sequence == top + 1


def test_settle_completed_stores_the_loops_termination_reason(kit):
    """Peer: AgentRunPersisterTest::settleCompletedStoresTheLoopsTerminationReason — a capped loop
    settles COMPLETED with reason max_iterations and its totals."""
    kit.interactive(kit.turn("search"), max_iterations=1)

    row = kit.row()
    assert (row.status, row.termination_reason) == (RunStatus.COMPLETED, TerminationReason.MAX_ITERATIONS)
    assert (row.iterations, row.total_tokens) == (1, 20)


def test_settle_failed_records_a_provider_failure(kit):
    """Peer: AgentRunPersisterTest::settleFailedRecordsAProviderFailureAndAGuardrailStopRecordsAPolicyReason
    (first half) — FAILED, provider_failed, the failure's class, zero totals."""
    kit.d.fail(kit.req(CallProvider), ProviderAuthenticationError(401), skip=1)

    assert kit.interactive(kit.turn("search")) is Outcome.FAILED

    row = kit.row()
    assert (row.status, row.termination_reason) == (RunStatus.FAILED, TerminationReason.PROVIDER_FAILED)
    assert row.error_class == "ProviderAuthenticationException"
    assert (row.iterations, row.total_tokens) == (0, 0)


def test_a_guardrail_stop_records_a_policy_reason(kit):
    """Peer: AgentRunPersisterTest::settleFailedRecordsAProviderFailureAndAGuardrailStopRecordsAPolicyReason
    (second half) — settlePolicyStopped: FAILED with policy_denied."""
    assert kit.interactive(Turn(outcome=TurnOutcome.GUARDRAIL_DENIED)) is Outcome.GUARDRAIL_BLOCKED

    row = kit.row()
    assert (row.status, row.termination_reason) == (RunStatus.FAILED, TerminationReason.POLICY_DENIED)


def test_settle_cancelled_is_its_own_state_not_a_failure(kit):
    """Peer: AgentRunPersisterTest::settleCancelledIsItsOwnStateNotAFailure. Per C8 the only writer
    of CANCELLED is cancel: status cancelled, reason cancelled, no error class, totals kept."""
    kit.enqueue()
    kit.place(iterations=2, total_tokens=30)

    assert kit.cancel() is True

    row = kit.row()
    assert (row.status, row.termination_reason, row.error_class) == (
        RunStatus.CANCELLED,
        TerminationReason.CANCELLED,
        "",
    )
    assert (row.iterations, row.total_tokens) == (2, 30)


def test_a_refused_transition_is_reported_but_never_throws(kit):
    """Peer: AgentRunPersisterTest::aRefusedTransitionIsReportedButNeverThrows — a cancel lands just
    before the completed settle; the refused finish throws nothing and writes nothing."""
    kit.d.before(kit.update(FinishRun), lambda _r: kit.cancel())

    assert kit.interactive() is Outcome.LEASE_LOST

    row = kit.row()
    assert (row.status, row.termination_reason) == (RunStatus.CANCELLED, TerminationReason.CANCELLED)


def test_suspend_reports_failure_so_the_caller_can_fail_closed(kit):
    """Peer: AgentRunPersisterTest::suspendReportsFailureSoTheCallerCanFailClosed — a store error in
    T9 ⇒ SUSPEND_FAILED and the guarded fallback settle fails the run."""
    kit.d.fail(kit.update(Suspend), StoreError())

    assert kit.interactive(kit.turn("create_page_draft")) is Outcome.SUSPEND_FAILED

    row = kit.row()
    assert (row.status, row.suspended_state) == (RunStatus.FAILED, None)


def test_claim_resume_returns_false_when_the_repository_throws(kit):
    """Peer: AgentRunPersisterTest::claimResumeReturnsFalseWhenTheRepositoryThrows — the coordinator
    turns the false claim into RunAlreadyResuming; the run stays waiting and nothing executes."""
    kit.interactive(kit.turn("create_page_draft"))
    kit.d.fail(kit.update(ClaimForResume), StoreError())
    events_before = kit.seqs()

    with pytest.raises(RunAlreadyResuming):
        kit.approve()

    assert kit.row().status is RunStatus.WAITING_FOR_APPROVAL
    assert kit.seqs() == events_before
    assert kit.d.landings == []


def test_begin_returns_null_when_the_repository_throws(kit):
    """Peer: AgentRunPersisterTest::beginReturnsNullWhenTheRepositoryThrows — the run executes
    unpersisted: no row, no event, no guarded write, empty run uuid."""
    kit.d.fail(kit.req(InsertRun), StoreError())

    assert kit.interactive(kit.turn("search")) is Outcome.COMPLETED

    assert kit.d.db.find(kit.uuid) is None
    assert kit.d.of(InsertEvent) == [] and kit.d.of(Update) == []
    assert {r.uuid for r in kit.d.of(CallProvider)} == {""}


def test_cancel_refuses_an_unknown_run(kit):
    """Peer: AgentRunPersisterTest::cancelRefusesAnUnknownRun."""
    assert kit.cancel("nope") is False
    assert kit.d.of(Update) == []


def test_settle_swallows_a_repository_error(kit):
    """Peer: AgentRunPersisterTest::settleSwallowsARepositoryError — nothing throws; the ladder
    reports the unconfirmed guarded settle as LEASE_LOST and the row stays RUNNING."""
    kit.d.fail(kit.update(FinishRun), StoreError())

    assert kit.interactive() is Outcome.LEASE_LOST
    assert kit.row().status is RunStatus.RUNNING
