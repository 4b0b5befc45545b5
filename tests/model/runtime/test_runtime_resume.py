"""approve / submitInput: the resume claim, the decision's audit and the release (spec 3.1, T9/T10, C3, ADR-101/132).

Peer: AgentRuntimeTest "Resume claim/audit" bullets.
"""

from __future__ import annotations

import dataclasses

import pytest

from model.failures import RunAlreadyResuming, StoreError
from model.records import Registry
from model.requests import InvokeTool, MaxSequence
from model.resume import submit_input
from model.transitions import ClaimForResume, FinishRun, MarkPendingEffect, Suspend
from model.vocab import Outcome, RunStatus, StepKind, TerminationReason


def _waiting_on(kit, *names):
    assert kit.interactive(kit.turn(*names)) in (Outcome.AWAITING_APPROVAL, Outcome.AWAITING_INPUT)


def _make_state_unreadable(kit):
    state = kit.row().suspended_state
    kit.place(suspended_state=dataclasses.replace(state, decodable=False))


def test_approve_throws_when_the_claim_is_lost_to_a_concurrent_approval(kit):
    """Peer: AgentRuntimeTest::approveThrowsWhenTheClaimIsLostToAConcurrentApproval — the winner
    executes the turn once; the loser never reaches the resume."""
    _waiting_on(kit, "create_page_draft")
    digest = kit.digest()
    winner = []
    kit.d.before(
        kit.update(ClaimForResume, identity=kit.resume_id),
        lambda _r: winner.append(kit.approve(identity=kit.resume_b, digest=digest)),
    )

    with pytest.raises(RunAlreadyResuming):
        kit.approve(digest=digest)

    assert winner == [Outcome.COMPLETED]
    assert len(kit.d.landings) == 1
    assert kit.kinds().count(StepKind.APPROVAL.value) == 1


def test_approve_refuses_before_claiming_when_the_event_position_is_unavailable(kit):
    """Peer: AgentRuntimeTest::approveRefusesBeforeClaimingWhenTheEventPositionIsUnavailable."""
    _waiting_on(kit, "create_page_draft")
    kit.d.fail(kit.req(MaxSequence, site="resume.probe"), StoreError())

    assert kit.approve() is None

    assert kit.updates(ClaimForResume) == []
    assert kit.row().status is RunStatus.WAITING_FOR_APPROVAL


def test_approve_refuses_a_corrupt_suspended_state_without_claiming_or_settling_the_run(kit):
    """Peer: AgentRuntimeTest::approveRefusesACorruptSuspendedStateWithoutClaimingOrSettlingTheRun."""
    _waiting_on(kit, "create_page_draft")
    digest = kit.digest()
    _make_state_unreadable(kit)
    updates_before = len(kit.updates())

    assert kit.approve(digest=digest) is None

    assert len(kit.updates()) == updates_before
    assert kit.row().status is RunStatus.WAITING_FOR_APPROVAL


def test_approve_settles_the_claimed_run_when_the_state_turns_unreadable_after_the_claim(kit):
    """Peer: AgentRuntimeTest::approveSettlesTheClaimedRunWhenTheStateTurnsUnreadableAfterTheClaim —
    an unguarded settleFailed after the claim; nothing executes."""
    _waiting_on(kit, "create_page_draft")
    kit.d.before(kit.update(ClaimForResume), lambda _r: _make_state_unreadable(kit))

    assert kit.approve() is Outcome.FAILED

    assert [t.owned_by for t in kit.updates(FinishRun)] == [None]
    assert kit.row().status is RunStatus.FAILED
    assert kit.d.landings == []


def test_approve_settles_failed_unguarded_when_the_position_is_unreadable_after_the_claim(kit):
    """Spec 3.1: a position failure after the claim is an unguarded settleFailed."""
    _waiting_on(kit, "create_page_draft")
    kit.d.fail(kit.req(MaxSequence, site="resume.position"), StoreError())

    assert kit.approve() is Outcome.FAILED
    assert [t.owned_by for t in kit.updates(FinishRun)] == [None]


def test_approving_a_write_turn_whose_decision_cannot_be_recorded_executes_nothing(kit):
    """Peer: AgentRuntimeTest::approvingAWriteTurnWhoseDecisionCannotBeRecordedExecutesNothing —
    released back to waiting (T9), not settled (ADR-132)."""
    _waiting_on(kit, "create_page_draft")
    kit.d.fail(kit.event(StepKind.APPROVAL), StoreError())

    assert kit.approve() is Outcome.AWAITING_APPROVAL

    assert kit.d.landings == []
    assert kit.updates(FinishRun) == []
    row = kit.row()
    assert (row.status, row.claimed_by, row.lease_expires) == (RunStatus.WAITING_FOR_APPROVAL, "", 0)


def test_approving_a_read_only_turn_continues_even_when_the_decision_cannot_be_recorded(kit):
    """Peer: AgentRuntimeTest::approvingAReadOnlyTurnContinuesEvenWhenTheDecisionCannotBeRecorded."""
    _waiting_on(kit, "confirm")
    kit.d.fail(kit.event(StepKind.APPROVAL), StoreError())

    assert kit.approve() is Outcome.COMPLETED
    assert [landing.tool for landing in kit.d.landings] == ["confirm"]


def test_denying_a_write_turn_whose_decision_cannot_be_recorded_still_resumes(kit):
    """Peer: AgentRuntimeTest::denyingAWriteTurnWhoseDecisionCannotBeRecordedStillResumes."""
    _waiting_on(kit, "create_page_draft")
    kit.d.fail(kit.event(StepKind.APPROVAL), StoreError())

    assert kit.approve(approved=False) is Outcome.COMPLETED

    assert kit.d.landings == []
    assert [e.step.is_error for e in kit.tool_events()] == [True]


@pytest.mark.parametrize("digest", [None, "r1/r9/stale"], ids=["without_digest", "stale_digest"])
def test_approve_without_a_matching_turn_digest_is_refused_and_the_run_is_released(kit, digest):
    """Peer: AgentRuntimeTest::approveWithoutATurnDigestIsRefusedAndTheRunIsReleased and
    ::approveWithAStaleTurnDigestIsRefusedAndTheRunIsReleased — claim, then T9 back to waiting."""
    _waiting_on(kit, "create_page_draft")
    state = kit.row().suspended_state

    assert kit.approve(digest=digest) is Outcome.AWAITING_APPROVAL

    assert len(kit.updates(ClaimForResume)) == 1
    assert kit.row().status is RunStatus.WAITING_FOR_APPROVAL
    assert kit.row().suspended_state == state
    assert StepKind.APPROVAL.value not in kit.kinds()
    assert kit.d.landings == []


def test_a_failed_release_settles_the_run_failed_unguarded(kit):
    """Spec T9 / 3.1: a release the store refuses falls back to an unguarded settleFailed."""
    _waiting_on(kit, "create_page_draft")
    kit.d.fail(kit.update(Suspend), StoreError())

    assert kit.approve(digest=None) is Outcome.FAILED

    assert [t.owned_by for t in kit.updates(FinishRun)] == [None]
    assert kit.row().status is RunStatus.FAILED


def test_the_resume_claim_takes_a_lease_under_the_resume_identity(kit):
    """Spec T10 (ADR-141): RUNNING under resume:…, lease now+900, started_at untouched."""
    _waiting_on(kit, "create_page_draft")
    started = kit.row().started_at
    kit.d.now = 7_000
    seen = []
    kit.d.before(kit.req(InvokeTool), lambda _r: seen.append(kit.row()))

    kit.approve()

    assert (seen[0].claimed_by, seen[0].lease_expires, seen[0].started_at) == (kit.resume_id, 7_900, started)


def test_a_resumed_run_may_suspend_again(kit):
    """Peer: AgentRuntimeTest::aResumedRunMaySuspendAgain."""
    kit.interactive(kit.turn("create_page_draft"), kit.turn("update_page_metadata", round_no=2))

    assert kit.approve() is Outcome.AWAITING_APPROVAL
    assert [c.name for c in kit.row().suspended_state.pending] == ["update_page_metadata"]

    assert kit.approve() is Outcome.COMPLETED
    assert [landing.tool for landing in kit.d.landings] == ["create_page_draft", "update_page_metadata"]


def test_a_second_concurrent_submit_input_loses_the_claim(kit):
    """Peer: AgentRuntimeTest::aSecondConcurrentSubmitInputLosesTheClaim."""
    _waiting_on(kit, "ask_user")
    winner = []
    kit.d.before(
        kit.update(ClaimForResume, identity=kit.resume_id),
        lambda _r: winner.append(kit.submit_input(identity=kit.resume_b)),
    )

    with pytest.raises(RunAlreadyResuming):
        kit.submit_input()

    assert winner == [Outcome.COMPLETED]
    assert kit.kinds().count(StepKind.INPUT.value) == 1


def test_submit_input_rejects_invalid_input_without_consuming_the_claim(kit):
    """Peer: AgentRuntimeTest::submitInputRejectsInvalidInputWithoutConsumingTheClaim."""
    _waiting_on(kit, "ask_user")

    assert kit.submit_input(valid=False) is None
    assert kit.updates(ClaimForResume) == []
    assert kit.row().status is RunStatus.WAITING_FOR_INPUT

    assert kit.submit_input() is Outcome.COMPLETED


def test_a_failed_input_suspension_fails_closed_as_suspend_failed(kit):
    """Peer: AgentRuntimeTest::aFailedInputSuspensionFailsClosedAsSuspendFailed — the resumed segment
    asks for input again and T9 fails ⇒ resume-guarded settleFailed ⇒ SUSPEND_FAILED."""
    kit.interactive(kit.turn("ask_user"), kit.turn("ask_user", round_no=2))
    kit.d.fail(kit.update(Suspend), StoreError())

    assert kit.submit_input() is Outcome.SUSPEND_FAILED

    assert [t.owned_by for t in kit.updates(FinishRun)] == [kit.resume_id]
    row = kit.row()
    assert (row.status, row.termination_reason) == (RunStatus.FAILED, TerminationReason.PROVIDER_FAILED)


def test_on_the_input_path_a_call_now_needing_approval_is_refused_without_the_pre_tool_hook(kit):
    """Spec C3: after a deploy the pending remote write's server requires approval; the input
    resume records it as an error step, never stamps its fence and never runs it."""
    _waiting_on(kit, "ask_user", "mcp_write")
    gated = Registry(
        tuple(
            dataclasses.replace(t, server_requires_approval=True) if t.name == "mcp_write" else t
            for t in kit.registry.tools
        )
    )

    outcome = kit.d.run(submit_input(kit.ctx(kit.resume_id, registry=gated), kit.uuid, input_valid=True))

    assert outcome is Outcome.COMPLETED
    assert [e.step.tool for e in kit.tool_events() if e.step.is_error] == ["mcp_write"]
    assert [t.effect for t in kit.updates(MarkPendingEffect)] == [""]  # the write step's clear only
    assert [landing.tool for landing in kit.d.landings] == ["ask_user"]
