"""Entry points of the runtime: enqueue, run-queued, interactive run, cancel (spec 3.1, T2/T3/T8).

Each is a generator over requests, driven by whoever simulates the process calling it.
Approve and submit-input live in :mod:`model.resume`, the reaper in :mod:`model.reaper`.
"""

from __future__ import annotations

from model.constants import LEASE_S
from model.executor import execute
from model.failures import DispatchError, RunEnqueueFailed, StoreError
from model.hooks import Segment
from model.records import RunRequest
from model.requests import READ_CLOCK, Dispatch, FindRun, InsertRun, MaxSequence, Update
from model.segment import Context, Gen, Handle
from model.settle import settle_failed
from model.transitions import Cancel, ClaimQueued, enqueue_run, start_run
from model.vocab import Outcome, RunStatus


def enqueue(ctx: Context, uuid: str, request: RunRequest, *, has_bus: bool = True) -> Gen[str]:
    """`QueuedRunCoordinator::enqueue`: fail-closed insert, then the wake-up.

    Raises RunEnqueueFailed without a bus, for an unencodable payload, when the insert
    fails, and after settling the row FAILED (unguarded) when the dispatch throws.
    """
    if not has_bus or not request.decodable:
        raise RunEnqueueFailed("cannot enqueue")
    now = yield READ_CLOCK
    try:
        yield InsertRun(enqueue_run(0, uuid, request, now), "enqueue.insert")
    except StoreError:
        raise RunEnqueueFailed("enqueue insert failed") from None
    try:
        yield Dispatch(uuid, 0, "enqueue.dispatch")
    except DispatchError as failure:
        yield from settle_failed(ctx.policy, uuid, failure.error_class, owned_by=None, site="enqueue.dispatch_failed")
        raise RunEnqueueFailed("wake-up dispatch failed") from None
    return uuid


def run_queued(ctx: Context, uuid: str) -> Gen[Outcome | None]:
    """`QueuedRunCoordinator::runQueued`: None when there is nothing to claim (a non-event)."""
    try:
        row = yield FindRun(uuid, "run_queued.precheck")
    except StoreError:
        return None
    if row is None or row.status is not RunStatus.QUEUED or row.queued_request is None:
        return None
    now = yield READ_CLOCK
    try:
        claim = yield Update(uuid, ClaimQueued(ctx.identity, now), "run_queued.claim")
    except StoreError:
        return None
    if not claim.matched:
        return None
    try:
        fresh = yield FindRun(uuid, "run_queued.position")
        top = yield MaxSequence(uuid, "run_queued.position")
    except StoreError:
        fresh = None
    if fresh is None:
        yield from settle_failed(
            ctx.policy, uuid, "RunPositionException", owned_by=None, site="run_queued.position_failed"
        )
        return Outcome.FAILED
    request = row.queued_request
    if not request.decodable or not request.configuration_exists:
        yield from settle_failed(
            ctx.policy, uuid, "RunRehydrationException", owned_by=None, site="run_queued.rehydration_failed"
        )
        return Outcome.FAILED
    seg = Segment(ctx, Handle(uuid, int(top) + 1), ctx.identity, queued=True)
    return (yield from execute(seg, request))


def run_interactive(ctx: Context, uuid: str, request: RunRequest) -> Gen[Outcome]:
    """`AgentRuntime::run`: begin with the segment's own lease (ADR-141), then execute.

    A failed begin leaves the run unpersisted and unleased; it still executes. Under
    KB-10 begin passes no identity (''/0), so the segment is unleased.
    """
    unleased = ctx.policy.kb10_unleased_segments
    now = yield READ_CLOCK
    identity = "" if unleased else ctx.identity
    lease = 0 if unleased else now + LEASE_S
    try:
        yield InsertRun(start_run(0, uuid, identity, lease, now), "run.begin")
        handle: Handle | None = Handle(uuid, 0)
    except StoreError:
        handle = None
    owner = identity if handle is not None and identity else None
    seg = Segment(ctx, handle, owner, queued=False)
    return (yield from execute(seg, request))


def cancel(ctx: Context, uuid: str) -> Gen[bool]:
    """`AgentRuntime::cancel` → T8. An unreadable row cannot be cancelled (spec C8)."""
    try:
        row = yield FindRun(uuid, "cancel.read")
    except StoreError:
        return False
    if row is None:
        return False
    now = yield READ_CLOCK
    try:
        result = yield Update(uuid, Cancel(now), "cancel")
    except StoreError:
        return False
    return bool(result.matched)
