"""Cancellation: T8 and its cooperative observation at step boundaries (spec 3.3 step 3, 3.6, C8, ADR-103).

Peer: AgentRuntimeTest "Cancellation" bullets and CancelAgentRunCommandTest. The CLI
command only parses the uuid and calls cancel(); its tests are restated on the runtime's
cancel entry point (argument parsing itself is outside the run's lifecycle).
"""

from __future__ import annotations

import pytest

from model.failures import StoreError
from model.requests import CallProvider, FindRun, InvokeTool, Update
from model.transitions import Cancel, ClaimForResume, FinishRun, MarkPendingEffect, RenewLease
from model.vocab import Outcome, RunStatus, StepKind, TerminationReason


def test_a_cancelled_run_stops_cooperatively_at_the_next_step_boundary(kit):
    """Peer: AgentRuntimeTest::aCancelledRunStopsCooperativelyAtTheNextStepBoundary — the cancel lands
    during the provider call; the llm boundary persists its step (no renewal) and stops: no tool,
    no further provider call, no settle."""
    kit.enqueue(kit.turn("search"))
    kit.d.before(kit.req(CallProvider), lambda _r: kit.cancel())

    assert kit.run_queued() is Outcome.CANCELLED

    assert kit.kinds() == ["dropped", "request", "llm"]
    assert len(kit.updates(RenewLease)) == 2  # dropped and request only
    assert len(kit.d.of(CallProvider)) == 1
    assert kit.d.of(InvokeTool) == []
    assert kit.updates(FinishRun) == []
    assert kit.row().status is RunStatus.CANCELLED


def test_a_running_run_is_not_disturbed_by_the_cancellation_probe(kit):
    """Peer: AgentRuntimeTest::aRunningRunIsNotDisturbedByTheCancellationProbe — one probe read per
    step, no write of its own, and the run completes."""
    kit.enqueue(kit.turn("search"))

    assert kit.run_queued() is Outcome.COMPLETED

    assert len(kit.index(kit.req(FindRun, site="executor.cancellation_probe"))) == len(kit.events()) == 6


def test_cancel_delegates_to_the_guarded_transition(kit):
    """Peer: AgentRuntimeTest::cancelDelegatesToTheGuardedTransition — T8 with no owner guard moves a
    running row held by someone else; a finished run is refused."""
    kit.enqueue()
    kit.place(status=RunStatus.RUNNING, claimed_by=kit.worker_b, lease_expires=5_000)

    assert kit.cancel() is True
    assert kit.cancel() is False

    assert len(kit.updates(Cancel)) == 2
    row = kit.row()
    assert (row.status, row.claimed_by, row.lease_expires, row.queued_request) == (RunStatus.CANCELLED, "", 0, None)


def test_cancels_a_run_through_the_runtime_and_reports_success(kit):
    """Peer: CancelAgentRunCommandTest::cancelsARunThroughTheRuntimeAndReportsSuccess."""
    kit.interactive(kit.turn("create_page_draft"))  # waiting for approval

    assert kit.cancel() is True
    assert kit.row().termination_reason is TerminationReason.CANCELLED


@pytest.mark.parametrize("state", ["unknown", "finished"])
def test_reports_failure_for_an_unknown_or_already_finished_run(kit, state):
    """Peer: CancelAgentRunCommandTest::reportsFailureForAnUnknownOrAlreadyFinishedRun."""
    if state == "finished":
        kit.interactive()
    before = kit.d.db.find(kit.uuid)

    assert kit.cancel() is False
    assert kit.d.db.find(kit.uuid) == before


def test_rejects_a_missing_uuid_without_touching_the_runtime(kit):
    """Peer: CancelAgentRunCommandTest::rejectsAMissingUuidWithoutTouchingTheRuntime. Runtime-level
    equivalent (argument parsing is the CLI's): an empty uuid is refused and nothing is written."""
    kit.interactive(kit.turn("create_page_draft"))
    before = kit.row()

    assert kit.cancel("") is False

    assert kit.updates(Cancel) == []
    assert kit.row() == before


def test_a_cancel_after_the_probe_but_before_the_renewal_is_lease_lost(kit):
    """Spec 3.6: 'If the cancel lands after the probe read but before the renewal, renewal fails ⇒
    LEASE_LOST instead of CANCELLED'; the step is not persisted."""
    kit.enqueue()
    kit.d.before(kit.update(RenewLease), lambda _r: kit.cancel(), skip=2)  # the llm step's renewal

    assert kit.run_queued() is Outcome.LEASE_LOST

    assert kit.kinds() == ["dropped", "request"]
    assert kit.row().status is RunStatus.CANCELLED


def test_a_cancel_before_a_write_stamp_is_lease_lost_before_the_side_effect(kit):
    """Spec 3.6: 'A cancel before a write's stamp makes the stamp fail ⇒ LEASE_LOST before the side effect'."""
    kit.enqueue(kit.turn("mcp_write"))
    kit.d.before(kit.update(MarkPendingEffect), lambda _r: kit.cancel())

    assert kit.run_queued() is Outcome.LEASE_LOST

    assert kit.d.landings == []
    assert kit.row().status is RunStatus.CANCELLED


def test_a_probe_read_failure_never_fabricates_a_cancel(kit):
    """Spec 3.3 step 3 / ADR-103: a failed probe read counts as not cancelled."""
    kit.enqueue()
    kit.d.fail(kit.req(FindRun, site="executor.cancellation_probe"), StoreError(), times=10)

    assert kit.run_queued() is Outcome.COMPLETED
    assert kit.row().status is RunStatus.COMPLETED


def test_a_cancelled_queued_run_cannot_be_claimed(kit):
    """Spec T8 (ADR-102 cancel-while-queued): the payload is gone and runQueued finds nothing to claim."""
    kit.enqueue()
    kit.cancel()

    assert kit.run_queued() is None
    assert kit.row().queued_request is None
    assert kit.d.of(CallProvider) == []


def test_a_cancelled_waiting_run_cannot_be_approved(kit):
    """Spec T8/T10: cancel works on a waiting row; the approval then finds no waiting row to claim."""
    kit.interactive(kit.turn("create_page_draft"))
    digest = kit.digest()
    kit.cancel()

    assert kit.approve(digest=digest) is None
    assert kit.updates(ClaimForResume) == []
    assert kit.d.landings == []


def test_an_unreadable_run_cannot_be_cancelled(kit):
    """Spec C8: cancel reads the row first; a failed read means no cancel and nothing written."""
    kit.enqueue()
    kit.d.fail(kit.req(FindRun, site="cancel.read"), StoreError())

    assert kit.cancel() is False
    assert kit.row().status is RunStatus.QUEUED
    assert [u for u in kit.d.of(Update) if isinstance(u.transition, Cancel)] == []


def test_a_cancel_seen_at_a_write_boundary_whose_audit_fails_is_lease_lost_and_keeps_the_fence(kit):
    """Spec 3.3 step 3 + 3.5: the cancelled boundary persists the write step fail-closed; the
    failed audit throws before the cancellation, the guarded settleFailed is refused (row
    cancelled) ⇒ LEASE_LOST; no renewal ran, so the fence is never cleared (T8 keeps it)."""
    kit.d.before(kit.req(InvokeTool), lambda _r: kit.cancel())
    kit.d.fail(kit.event(StepKind.TOOL), StoreError())

    assert kit.interactive(kit.turn("mcp_write")) is Outcome.LEASE_LOST

    row = kit.row()
    assert (row.status, row.pending_effect) == (RunStatus.CANCELLED, "non_idempotent_write")
    assert len(kit.d.landings) == 1
