"""`QueuedRunFailureRecovery::recover` (spec 5.2): retry or dead-letter a failed queued segment.

Never throws; every branch settles or refuses. Note the faithful quirk of step 5: after
the owner requeue the row is QUEUED and unclaimed, so the owner-guarded dead-letter that
follows a failed dispatch matches nothing, and the row is left QUEUED with no wake-up
while the outcome still says FAILED. That dead-letter records the class of the error the
segment failed with, as every other branch does; the bus's error only decides the branch.
"""

from __future__ import annotations

from model.constants import MAX_REQUEUES, requeue_backoff_ms
from model.failures import DispatchError, StoreError, classify
from model.hooks import Segment
from model.requests import READ_CLOCK, Dispatch, FindRun, Note, Update
from model.segment import Gen
from model.settle import settle_dead_lettered
from model.tools import may_retry_after_fence
from model.transitions import Requeue
from model.vocab import Outcome, TerminationReason


def _dead_letter(seg: Segment, reason: TerminationReason, error_class: str) -> Gen[Outcome]:
    settled = yield from settle_dead_lettered(
        seg.policy, seg.uuid, reason, error_class, owned_by=seg.settle_owner, site="recovery.dead_letter"
    )
    return Outcome.FAILED if settled else Outcome.LEASE_LOST


def recover(seg: Segment, error: BaseException) -> Gen[Outcome]:
    policy = seg.policy
    error_class = getattr(error, "error_class", type(error).__name__)
    failure_class = classify(error, fallback_chain_is_unknown=policy.kb13_fallback_chain_unknown)
    if not failure_class.is_retryable:
        return (yield from _dead_letter(seg, TerminationReason.NOT_RETRYABLE, error_class))
    try:
        row = yield FindRun(seg.uuid, "recovery.reread")
    except StoreError:
        row = None
    if row is not None:
        fenced = policy.fence_blocks_retry and not policy.idempotency_keys
        refuse = fenced and not may_retry_after_fence(row.pending_effect)
        yield Note(
            seg.uuid,
            "decide",
            (
                ("decider", "recovery"),
                ("pending_effect", row.pending_effect),
                ("requeue_count", row.requeue_count),
                ("has_request", row.queued_request is not None),
                ("decision", "dead_letter" if refuse else "retry"),
            ),
        )
        if refuse:
            return (yield from _dead_letter(seg, TerminationReason.NOT_RETRYABLE, error_class))
    count = row.requeue_count if row is not None else -1
    if count < 0 or count >= MAX_REQUEUES:
        return (yield from _dead_letter(seg, TerminationReason.RETRIES_EXHAUSTED, error_class))
    owner = seg.lease_owner or ""
    now = yield READ_CLOCK
    try:
        result = yield Update(
            seg.uuid, Requeue(owner, now, clear_fence=not policy.kb9_fence_survives_requeue), "recovery.requeue"
        )
    except StoreError:
        return Outcome.LEASE_LOST
    if not result.matched:
        return Outcome.LEASE_LOST
    try:
        yield Dispatch(seg.uuid, requeue_backoff_ms(count), "recovery.dispatch")
    except DispatchError:
        # The outer catch dead-letters with the error the segment failed with ($e), not the bus's.
        yield from _dead_letter(seg, TerminationReason.RETRIES_EXHAUSTED, error_class)
        return Outcome.FAILED
    return Outcome.REQUEUED
