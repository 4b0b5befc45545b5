"""`AgentRunExecutor::execute`: one segment from its first step to its outcome (spec 3.5).

The outcome ladder in its catch order. A crash of the process is not an exception the
runtime sees: the driver simply stops the generator (GeneratorExit is never caught here).
"""

from __future__ import annotations

from model.failures import (
    GuardrailApprovalRequired,
    GuardrailViolation,
    RunCancellationRequested,
    RunLeaseLost,
    RuntimeThrowable,
    StoreError,
)
from model.hooks import Segment
from model.loop import resume, start
from model.records import RunRequest, SuspendedState
from model.recovery import recover
from model.requests import READ_CLOCK, Update
from model.segment import Gen, LoopResult, ResumeSeed, ToolApprovalRequired, ToolInputRequired, Trace
from model.settle import settle, settle_failed
from model.transitions import Suspend
from model.vocab import Outcome, RunStatus, TerminationReason


def execute(seg: Segment, request: RunRequest | None, seed: ResumeSeed | None = None) -> Gen[Outcome]:
    """Run a segment: a fresh start from ``request`` or a resume from ``seed``."""
    trace = Trace()
    try:
        if seed is not None:
            result = yield from resume(seg, trace, seed)
        else:
            assert request is not None, "a fresh segment needs its request"
            result = yield from start(seg, trace, request)
    except RunCancellationRequested:
        return Outcome.CANCELLED
    except ToolApprovalRequired as suspension:
        return (yield from _suspend(seg, suspension.state, for_input=False))
    except ToolInputRequired as suspension:
        return (yield from _suspend(seg, suspension.state, for_input=True))
    except GuardrailViolation:
        return (yield from _policy_stop(seg, TerminationReason.POLICY_DENIED, Outcome.GUARDRAIL_BLOCKED))
    except GuardrailApprovalRequired:
        return (yield from _policy_stop(seg, TerminationReason.APPROVAL_DENIED, Outcome.GUARDRAIL_APPROVAL_REQUIRED))
    except RunLeaseLost:
        return Outcome.LEASE_LOST
    except RuntimeThrowable as error:
        return (yield from _fail(seg, error))
    return (yield from _complete(seg, trace, result))


def _complete(seg: Segment, trace: Trace, result: LoopResult) -> Gen[Outcome]:
    if seg.handle is None:
        return Outcome.COMPLETED
    settled = yield from settle(
        seg.policy,
        seg.uuid,
        RunStatus.COMPLETED,
        result.reason,
        owned_by=seg.settle_owner,
        site="executor.settle_completed",
        iterations=trace.rounds,
        total_tokens=trace.tokens,
    )
    return Outcome.COMPLETED if settled else Outcome.LEASE_LOST


def _suspend(seg: Segment, state: SuspendedState, *, for_input: bool) -> Gen[Outcome]:
    """Statement T9; a refused or failed suspension fails closed (SUSPEND_FAILED, spec C5)."""
    if seg.handle is None:
        return Outcome.SUSPEND_FAILED
    now = yield READ_CLOCK
    transition = Suspend(state, for_input, now, status_guard=not seg.policy.kb3_suspend_unguarded)
    try:
        result = yield Update(seg.uuid, transition, "executor.suspend")
        suspended = bool(result.matched)
    except StoreError:
        suspended = False
    if suspended:
        return Outcome.AWAITING_INPUT if for_input else Outcome.AWAITING_APPROVAL
    yield from settle_failed(
        seg.policy, seg.uuid, "SuspendFailedException", owned_by=seg.settle_owner, site="executor.suspend_failed"
    )
    return Outcome.SUSPEND_FAILED


def _policy_stop(seg: Segment, reason: TerminationReason, outcome: Outcome) -> Gen[Outcome]:
    if seg.handle is None:
        return outcome
    settled = yield from settle(
        seg.policy, seg.uuid, RunStatus.FAILED, reason, owned_by=seg.settle_owner, site="executor.policy_stop"
    )
    return outcome if settled else Outcome.LEASE_LOST


def _fail(seg: Segment, error: RuntimeThrowable) -> Gen[Outcome]:
    if seg.handle is None:
        return Outcome.FAILED
    if seg.queued:
        return (yield from recover(seg, error))
    settled = yield from settle_failed(
        seg.policy, seg.uuid, error.error_class, owned_by=seg.settle_owner, site="executor.settle_failed"
    )
    return Outcome.FAILED if settled else Outcome.LEASE_LOST
