"""The executor's hooks: the step boundary `onRecord` (spec 3.3) and the pre-tool hook (3.4).

The boundary order is the heart of ADR-103/104/111: observer, cancellation probe,
renew-or-clear, record, fail-closed audit for writes. KB-5 swaps record and renewal.
Everything here yields requests; nothing reads a clock except through ReadClock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from model.constants import LEASE_S
from model.failures import (
    AuditPersistenceFailed,
    RunCancellationRequested,
    RunLeaseLost,
    StoreError,
    WriteWithoutDurableExecution,
)
from model.policy import Policy
from model.records import EventRow, Step
from model.requests import READ_CLOCK, EmitStep, FindRun, InsertEvent, Update, UpdateResult
from model.segment import Context, Gen, Handle
from model.tools import effect_for
from model.transitions import ExtendLease, MarkPendingEffect, RenewLease
from model.vocab import RunStatus, StepKind, ToolEffect

_TOOL_STEP, _READ_ONLY, _CANCELLED = StepKind.TOOL, ToolEffect.READ_ONLY, RunStatus.CANCELLED
"""Enum members read at every step boundary, as module constants (a member lookup on an enum
class goes through ``EnumType.__getattr__``'s slow path)."""


@dataclass(slots=True)
class Segment:
    """One executing segment: context, handle (None = unpersisted) and lease owner (None = unleased).

    ``policy`` (the context's) and ``uuid`` (the handle's, '' when unpersisted) are fixed at
    construction: a segment's context and handle never change, and both are read at every step.
    """

    ctx: Context
    handle: Handle | None
    lease_owner: str | None
    queued: bool
    policy: Policy = field(init=False, repr=False, compare=False)
    uuid: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.policy = self.ctx.policy
        self.uuid = self.handle.uuid if self.handle is not None else ""

    def step_effect(self, step: Step) -> ToolEffect:
        """`stepEffect`: non-tool steps are read_only; tool steps resolve by name."""
        if step.kind is not _TOOL_STEP:
            return _READ_ONLY
        return effect_for(self.ctx.registry, step.tool, self.ctx.policy)

    @property
    def settle_owner(self) -> str | None:
        """The owner guard of this segment's settles; KB-7 drops it on the worker path."""
        if self.queued and self.ctx.policy.kb7_worker_settles_unguarded:
            return None
        return self.lease_owner


def lease_confirmed(result: UpdateResult, policy: Policy) -> bool:
    """Statements T4/T5 succeed: MySQL reports *changed* rows; the fix falls back to a COUNT (KB-6)."""
    if policy.kb6_renew_trusts_changed_rows:
        return result.changed
    return result.matched


def record_step(seg: Segment, step: Step, effect: ToolEffect, site: str = "executor.record") -> Gen[bool]:
    """`recordStep` (T6): never throws; returns whether it persisted. Advances the handle on success."""
    handle = seg.handle
    if handle is None:
        return False
    now = yield READ_CLOCK
    try:
        yield InsertEvent(handle.uuid, EventRow(0, handle.sequence, step, now), effect.value, site)
    except StoreError:
        return False
    handle.sequence += 1
    return True


def _persist_fail_closed(seg: Segment, step: Step, effect: ToolEffect) -> Gen[None]:
    stored = yield from record_step(seg, step, effect)
    if not stored and effect.is_write and seg.policy.fail_closed_write_audit:
        raise AuditPersistenceFailed(f"audit of {step.tool} not stored")


def _renew_or_clear(seg: Segment, effect: ToolEffect) -> Gen[None]:
    owner = seg.lease_owner
    if owner is None:
        return
    now = yield READ_CLOCK
    transition = (
        MarkPendingEffect(owner, "", now) if effect.is_write and seg.policy.write_fence else RenewLease(owner, now)
    )
    try:
        result = yield Update(seg.uuid, transition, "executor.boundary")
    except StoreError:
        raise RunLeaseLost("renewal failed") from None
    if not lease_confirmed(result, seg.policy):
        raise RunLeaseLost("lease lost at the step boundary")


def on_record(seg: Segment, step: Step) -> Gen[None]:
    """The boundary hook, in the spec's exact order (3.3); KB-5 persists before renewing."""
    if seg.ctx.observer:
        yield EmitStep(seg.uuid, step.round_no, step.kind.value)
    if seg.handle is None:
        return
    effect = seg.step_effect(step)
    try:
        row = yield FindRun(seg.uuid, "executor.cancellation_probe")
    except StoreError:
        row = None
    if row is not None and row.status is _CANCELLED:
        yield from _persist_fail_closed(seg, step, effect)
        raise RunCancellationRequested("cancelled")
    if seg.policy.kb5_persist_before_renewal:
        yield from _persist_fail_closed(seg, step, effect)
        yield from _renew_or_clear(seg, effect)
        return
    yield from _renew_or_clear(seg, effect)
    yield from _persist_fail_closed(seg, step, effect)


def on_before_tool(seg: Segment, name: str) -> Gen[ToolEffect]:
    """The pre-tool hook (3.4): stamp the write fence, or refuse a write that cannot be fenced.

    Returns the resolved effect. Before ADR-112 there is no hook; under KB-10 it is only
    installed on segments that hold a lease, so unleased writes run unfenced.
    """
    effect = effect_for(seg.ctx.registry, name, seg.policy)
    if not effect.is_write or not seg.policy.write_fence:
        return effect
    if seg.policy.kb10_unleased_segments and seg.lease_owner is None:
        return effect
    if seg.handle is None or seg.lease_owner is None:
        raise WriteWithoutDurableExecution(f"write {name} on an unleased or unpersisted segment")
    now = yield READ_CLOCK
    lease_s = tool_deadline_s(seg, name)
    try:
        result = yield Update(
            seg.uuid, MarkPendingEffect(seg.lease_owner, effect.value, now, lease_s), "executor.fence"
        )
    except StoreError:
        raise RunLeaseLost("fence stamp failed") from None
    if not lease_confirmed(result, seg.policy):
        raise RunLeaseLost("fence stamp refused")
    return effect


def tool_deadline_s(seg: Segment, tool: str) -> int:
    if not seg.policy.operation_deadline:
        return LEASE_S
    spec = seg.ctx.registry.get(tool)
    return max(LEASE_S, spec.deadline_s if spec is not None else 0)


def extend_for_operation(seg: Segment, lease_s: int) -> Gen[None]:
    """Proposal ``operation_deadline``: extend the lease to cover the next call's deadline."""
    if not seg.policy.operation_deadline or seg.lease_owner is None or seg.handle is None:
        return
    now = yield READ_CLOCK
    try:
        result = yield Update(seg.uuid, ExtendLease(seg.lease_owner, now, lease_s), "executor.deadline")
    except StoreError:
        raise RunLeaseLost("deadline extension failed") from None
    if not result.matched:
        raise RunLeaseLost("deadline extension refused")
