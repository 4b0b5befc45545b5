"""`ResumeCoordinator::approve` / `submitInput` (spec 1.2, 3.1, T9/T10, ADR-101/132/141).

A resume claims the waiting row (T10 is the mutex), re-resolves the event position
after the claim, records the decision, and executes the pending turn on a segment of
its own. Pre-execution failures after the claim settle FAILED *without* an owner guard.
Returns None when it refuses before claiming; raises RunAlreadyResuming when it loses
the claim.
"""

from __future__ import annotations

from model.executor import execute
from model.failures import RunAlreadyResuming, StoreError
from model.hooks import Segment, record_step
from model.records import Step, SuspendedState
from model.requests import READ_CLOCK, CountEvents, FindRun, MaxSequence, Update
from model.segment import Context, Gen, Handle, ResumeSeed
from model.settle import settle_failed
from model.tools import turn_declares_write
from model.transitions import ClaimForResume, Suspend
from model.vocab import Outcome, RunStatus, StepKind, ToolEffect


def _position(ctx: Context, uuid: str, site: str) -> Gen[int | None]:
    """MAX+1, or under KB-2 COUNT(events) with 0 on a read error."""
    if ctx.policy.kb2_resume_position_by_count:
        try:
            return int((yield CountEvents(uuid)))
        except StoreError:
            return 0
    try:
        return int((yield MaxSequence(uuid, site))) + 1
    except StoreError:
        return None


def _release(ctx: Context, uuid: str, state: SuspendedState, for_input: bool) -> Gen[Outcome]:
    """Hand a refused decision back: T9 to waiting again; a failed release settles FAILED (unguarded)."""
    now = yield READ_CLOCK
    transition = Suspend(state, for_input, now, status_guard=not ctx.policy.kb3_suspend_unguarded)
    try:
        result = yield Update(uuid, transition, "resume.release")
        released = bool(result.matched)
    except StoreError:
        released = False
    if released:
        return Outcome.AWAITING_INPUT if for_input else Outcome.AWAITING_APPROVAL
    yield from settle_failed(ctx.policy, uuid, "ReleaseFailedException", owned_by=None, site="resume.release_failed")
    return Outcome.FAILED


def _claim(ctx: Context, uuid: str, for_input: bool) -> Gen[tuple[Handle, SuspendedState] | Outcome | None]:
    """Read, probe, claim, re-resolve. None = refused before claiming; Outcome = settled after it."""
    waiting = RunStatus.WAITING_FOR_INPUT if for_input else RunStatus.WAITING_FOR_APPROVAL
    try:
        row = yield FindRun(uuid, "resume.read")
    except StoreError:
        return None
    if row is None or row.status is not waiting:
        return None
    if row.suspended_state is None or not row.suspended_state.decodable:
        return None
    probe = yield from _position(ctx, uuid, "resume.probe")
    if probe is None:
        return None
    now = yield READ_CLOCK
    leased = not ctx.policy.kb10_unleased_segments
    try:
        claim = yield Update(uuid, ClaimForResume(ctx.identity, for_input, now, leased), "resume.claim")
    except StoreError:
        raise RunAlreadyResuming("claim failed") from None
    if not claim.matched:
        raise RunAlreadyResuming("another resume won the claim")
    if ctx.policy.kb2_resume_position_by_count:
        position: int | None = probe
        fresh = row
    else:
        try:
            fresh = yield FindRun(uuid, "resume.position")
        except StoreError:
            fresh = None
        position = (yield from _position(ctx, uuid, "resume.position")) if fresh is not None else None
    if position is None:
        yield from settle_failed(ctx.policy, uuid, "RunPositionException", owned_by=None, site="resume.position_failed")
        return Outcome.FAILED
    state = fresh.suspended_state if fresh is not None else None
    if state is None or not state.decodable:
        yield from settle_failed(
            ctx.policy, uuid, "SuspendedStateException", owned_by=None, site="resume.state_unreadable"
        )
        return Outcome.FAILED
    return Handle(uuid, position), state


def approve(ctx: Context, uuid: str, *, approved: bool, digest: str | None) -> Gen[Outcome | None]:
    """`approve(uuid, decision, turnDigest)`."""
    claimed = yield from _claim(ctx, uuid, for_input=False)
    if claimed is None or isinstance(claimed, Outcome):
        return claimed
    handle, state = claimed
    owner = None if ctx.policy.kb10_unleased_segments else ctx.identity
    seg = Segment(ctx, handle, owner, queued=False)
    policy = ctx.policy
    if not policy.kb12_approval_not_audited and (digest is None or digest != state.turn_digest):
        return (yield from _release(ctx, uuid, state, for_input=False))
    decision = Step(StepKind.APPROVAL, state.round_no, decision="approve" if approved else "deny")
    stored = yield from record_step(seg, decision, ToolEffect.READ_ONLY, site="resume.record_approval")
    gated = approved and turn_declares_write(ctx.registry, state.pending)
    if not stored and gated and not policy.kb12_approval_not_audited:
        return (yield from _release(ctx, uuid, state, for_input=False))
    return (yield from execute(seg, None, ResumeSeed(state, approved)))


def submit_input(ctx: Context, uuid: str, *, input_valid: bool) -> Gen[Outcome | None]:
    """`submitInput(uuid, input)`: invalid input is rejected before the claim is consumed."""
    if not input_valid:
        return None
    claimed = yield from _claim(ctx, uuid, for_input=True)
    if claimed is None or isinstance(claimed, Outcome):
        return claimed
    handle, state = claimed
    owner = None if ctx.policy.kb10_unleased_segments else ctx.identity
    seg = Segment(ctx, handle, owner, queued=False)
    yield from record_step(seg, Step(StepKind.INPUT, state.round_no), ToolEffect.READ_ONLY, site="resume.record_input")
    return (yield from execute(seg, None, ResumeSeed(state, True, for_input=True, input_valid=True)))
