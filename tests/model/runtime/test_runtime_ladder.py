"""The executor's outcome ladder and its settles (spec 3.5, C2, C5, ADR-092/101).

Peer: AgentRuntimeTest "Ladder/settle" bullets. Guardrail, budget and context-window
middleware are outside the run's lifecycle; only the outcome they produce for the run is
modelled (a scripted Turn outcome), as the spec's 3.2 describes it.
"""

from __future__ import annotations

import pytest

from model.failures import GenericRuntimeError, ObserverError, StoreError
from model.records import Turn, TurnOutcome
from model.requests import CallProvider, EmitStep, FindRun, InsertEvent, InsertRun, InvokeTool, Update
from model.transitions import FinishRun, Requeue, Suspend
from model.vocab import Outcome, RunStatus, StepKind, TerminationReason


def test_a_completed_run_settles_completed_and_carries_the_loop_result(kit):
    """Peer: AgentRuntimeTest::aCompletedRunSettlesCompletedAndCarriesTheLoopResult — owner-guarded
    settleCompleted with the loop's reason and totals; payload, claim and lease cleared."""
    kit.enqueue(kit.turn("search"))
    kit.d.now = 1_234

    assert kit.run_queued() is Outcome.COMPLETED

    (settle,) = kit.updates(FinishRun)
    assert settle.owned_by == kit.worker
    row = kit.row()
    assert (row.status, row.termination_reason, row.iterations, row.total_tokens) == (
        RunStatus.COMPLETED,
        TerminationReason.COMPLETED,
        2,
        20,
    )
    assert (row.queued_request, row.claimed_by, row.lease_expires, row.finished_at) == (None, "", 0, 1_234)


def test_a_suspended_run_is_persisted_and_returned_as_awaiting_approval(kit):
    """Peer: AgentRuntimeTest::aSuspendedRunIsPersistedAndReturnedAsAwaitingApproval — T9 stores
    the pending turn and clears claim/lease; no settle follows (no finally-settle)."""
    assert kit.interactive(kit.turn("search", "create_page_draft")) is Outcome.AWAITING_APPROVAL

    row = kit.row()
    assert (row.status, row.claimed_by, row.lease_expires) == (RunStatus.WAITING_FOR_APPROVAL, "", 0)
    assert row.suspended_state is not None
    assert [c.name for c in row.suspended_state.pending] == ["search", "create_page_draft"]
    assert kit.updates(FinishRun) == []
    assert kit.d.of(InvokeTool) == []  # nothing of the gated turn executes, not even the read


def test_a_failed_suspension_fails_closed_as_suspend_failed(kit):
    """Peer: AgentRuntimeTest::aFailedSuspensionFailsClosedAsSuspendFailed — queued run, T9 store
    error ⇒ owner-guarded settleFailed ⇒ SUSPEND_FAILED, row FAILED (no promise of a resume)."""
    kit.enqueue(kit.turn("create_page_draft"))
    kit.d.fail(kit.update(Suspend), StoreError())

    assert kit.run_queued() is Outcome.SUSPEND_FAILED

    assert [t.owned_by for t in kit.updates(FinishRun)] == [kit.worker]
    assert kit.row().status is RunStatus.FAILED
    assert kit.updates(Requeue) == []


def test_a_suspension_arriving_after_a_cancel_is_discarded_and_fails_closed(kit):
    """Peer: AgentRuntimeTest::aSuspensionArrivingAfterACancelIsDiscardedAndFailsClosed — the
    cancel wins the row; T9 is refused; the refused fallback settle still yields SUSPEND_FAILED (C5)."""
    kit.d.before(kit.update(Suspend), lambda _r: kit.cancel())

    assert kit.interactive(kit.turn("create_page_draft")) is Outcome.SUSPEND_FAILED

    assert kit.row().status is RunStatus.CANCELLED
    assert kit.row().suspended_state is None


def test_an_unpersisted_run_that_suspends_fails_closed(kit):
    """Peer: AgentRuntimeTest::anUnpersistedRunThatSuspendsFailsClosed — no handle: no T9 and no
    settle is attempted (C5)."""
    kit.d.fail(kit.req(InsertRun), StoreError())

    assert kit.interactive(kit.turn("create_page_draft")) is Outcome.SUSPEND_FAILED
    assert kit.d.of(Update) == []


def test_a_budget_exhausted_loop_result_settles_completed_and_carries_the_reason(kit):
    """Peer: AgentRuntimeTest::aBudgetExhaustedLoopResultSettlesCompletedAndCarriesTheReason."""
    assert kit.interactive(kit.turn("search"), Turn(outcome=TurnOutcome.BUDGET_EXHAUSTED)) is Outcome.COMPLETED

    row = kit.row()
    assert (row.status, row.termination_reason) == (RunStatus.COMPLETED, TerminationReason.BUDGET_EXHAUSTED)


def test_a_guardrail_denial_settles_policy_stopped(kit):
    """Peer: AgentRuntimeTest::aGuardrailDenialSettlesPolicyStopped — owner-guarded, queued runs
    included (guardrails never reach recovery)."""
    kit.enqueue(Turn(outcome=TurnOutcome.GUARDRAIL_DENIED))

    assert kit.run_queued() is Outcome.GUARDRAIL_BLOCKED

    (settle,) = kit.updates(FinishRun)
    assert (settle.reason, settle.owned_by) == (TerminationReason.POLICY_DENIED, kit.worker)
    assert kit.row().status is RunStatus.FAILED
    assert kit.updates(Requeue) == []


def test_a_guardrail_approval_requirement_is_distinct_from_a_denial(kit):
    """Peer: AgentRuntimeTest::aGuardrailApprovalRequirementIsDistinctFromADenial."""
    assert kit.interactive(Turn(outcome=TurnOutcome.GUARDRAIL_APPROVAL)) is Outcome.GUARDRAIL_APPROVAL_REQUIRED
    assert kit.row().termination_reason is TerminationReason.APPROVAL_DENIED


def test_a_refused_policy_stop_is_lease_lost(kit):
    """Spec 3.5: settlePolicyStopped refused ⇒ LEASE_LOST."""
    kit.d.before(kit.update(FinishRun), lambda _r: kit.cancel())

    assert kit.interactive(Turn(outcome=TurnOutcome.GUARDRAIL_DENIED)) is Outcome.LEASE_LOST
    assert kit.row().status is RunStatus.CANCELLED


def test_an_unexpected_throwable_settles_failed_and_is_returned_not_rethrown(kit):
    """Peer: AgentRuntimeTest::anUnexpectedThrowableSettlesFailedAndIsReturnedNotRethrown."""
    kit.d.fail(kit.req(CallProvider), GenericRuntimeError("boom"))

    assert kit.interactive() is Outcome.FAILED

    row = kit.row()
    assert (row.status, row.termination_reason, row.error_class) == (
        RunStatus.FAILED,
        TerminationReason.PROVIDER_FAILED,
        "RuntimeException",
    )


def test_steps_reach_the_observer_before_persistence_and_the_result(kit):
    """Peer: AgentRuntimeTest::stepsReachTheObserverBeforePersistenceAndTheResult — each step is
    emitted before its cancellation probe and its insert; all before the settle."""
    kit.interactive(kit.turn("search"), observer=True)

    emits = kit.index(kit.req(EmitStep))
    probes = kit.index(kit.req(FindRun, site="executor.cancellation_probe"))
    inserts = kit.index(kit.req(InsertEvent))
    (settle,) = kit.index(kit.update(FinishRun))
    assert len(emits) == len(probes) == len(inserts) == 6
    assert all(e < p < i for e, p, i in zip(emits, probes, inserts, strict=True))
    assert emits[-1] < settle


def test_an_observer_throw_mid_run_settles_the_run_failed(kit):
    """Peer: AgentRuntimeTest::anObserverThrowMidRunSettlesTheRunFailed — the throw reaches the
    generic arm; the step it was shown is not persisted."""
    kit.d.fail(kit.req(EmitStep, kind="llm"), ObserverError("observer broke"))

    assert kit.interactive(kit.turn("search"), observer=True) is Outcome.FAILED

    assert kit.row().error_class == "ObserverException"
    assert kit.kinds() == ["dropped", "request"]


def test_an_unpersisted_run_still_executes_with_an_empty_run_uuid(kit):
    """Peer: AgentRuntimeTest::anUnpersistedRunStillExecutesWithAnEmptyRunUuid."""
    kit.d.fail(kit.req(InsertRun), StoreError())

    assert kit.interactive(kit.turn("search")) is Outcome.COMPLETED

    assert [r.uuid for r in kit.d.of(CallProvider)] == ["", ""]
    assert [r.uuid for r in kit.d.of(InvokeTool)] == [""]


@pytest.mark.parametrize(("cap", "rounds"), [(50, 20), (3, 3), (None, 5)])
def test_an_explicit_iteration_cap_is_clamped_to_the_ceiling_but_null_passes_through(kit, cap, rounds):
    """Peer: AgentRuntimeTest::anExplicitIterationCapIsClampedToTheCeilingButNullPassesThrough — a
    cap above 20 runs 20 rounds, null falls to the loop default of 5; then one synthesis call."""
    turns = [kit.turn("search", round_no=i) for i in range(1, 31)]

    assert kit.interactive(*turns, max_iterations=cap) is Outcome.COMPLETED

    provider = kit.d.of(CallProvider)
    assert [r.synthesis for r in provider] == [False] * rounds + [True]
    assert kit.row().iterations == rounds
    assert kit.row().termination_reason is TerminationReason.MAX_ITERATIONS


def test_a_budget_denial_without_tools_settles_an_interactive_run_failed(kit):
    """Spec C2: in the no-tools branch a budget denial propagates to the ladder: interactive ⇒
    FAILED provider_failed."""
    outcome = kit.interactive(Turn(outcome=TurnOutcome.BUDGET_EXHAUSTED), offered=())

    assert outcome is Outcome.FAILED
    row = kit.row()
    assert (row.termination_reason, row.error_class) == (TerminationReason.PROVIDER_FAILED, "BudgetExceededException")


def test_a_budget_denial_without_tools_dead_letters_a_queued_run(kit):
    """Spec C2: queued runs go to recovery, classify UNKNOWN, and are dead-lettered not_retryable."""
    kit.enqueue(Turn(outcome=TurnOutcome.BUDGET_EXHAUSTED), offered=())

    assert kit.run_queued() is Outcome.FAILED
    assert kit.row().termination_reason is TerminationReason.NOT_RETRYABLE


def test_a_context_overflow_settles_completed_as_context_truncated(kit):
    """Spec 3.2: ContextTruncated returns normally with reason context_truncated ⇒ COMPLETED."""
    assert kit.interactive(Turn(outcome=TurnOutcome.CONTEXT_TRUNCATED)) is Outcome.COMPLETED
    assert kit.row().termination_reason is TerminationReason.CONTEXT_TRUNCATED


def test_a_context_overflow_without_tools_is_caught_too(kit):
    """Spec C2: in the no-tools branch ContextTruncated is the one denial still caught."""
    assert kit.interactive(Turn(outcome=TurnOutcome.CONTEXT_TRUNCATED), offered=()) is Outcome.COMPLETED
    assert kit.row().termination_reason is TerminationReason.CONTEXT_TRUNCATED
    assert StepKind.LLM.value not in kit.kinds()


def test_a_suspension_has_no_owner_guard_and_can_take_a_row_another_worker_reclaimed(kit):
    """Spec C12: A passed its last renewal and is about to suspend; the reaper requeues, B claims
    and is mid-call; A's T9 (status=running only) still matches and B loses its lease."""
    kit.enqueue(kit.turn("create_page_draft"))
    a = kit.pause(kit.queued_gen(), kit.update(Suspend))
    kit.expire()
    kit.reap()
    b = kit.pause(kit.queued_gen(identity=kit.worker_b), kit.req(CallProvider))

    assert a.finish() is Outcome.AWAITING_APPROVAL
    assert (kit.row().status, kit.row().claimed_by) == (RunStatus.WAITING_FOR_APPROVAL, "")
    assert b.finish() is Outcome.LEASE_LOST
