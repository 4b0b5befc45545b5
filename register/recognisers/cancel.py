"""Recognisers of cancellation routes: the cancel probe's zombie event, a cancel landing after the
fence stamp, a cancel that keeps the fence, and the probe failing closed."""

from __future__ import annotations

from checks import Index, Verdict
from checks import history as H
from checks.history import OpType
from checks.index import row_of
from model.statements import CANCEL, MARK_PENDING_EFFECT
from register.recognisers.common import (
    rows_of_run,
    witness_of,
)


def cancel_probe_zombie_event(ix: Index, verdict: Verdict) -> bool:
    """F-03: one of the colliding events was stored after a cancel by a segment that no longer
    held the row when the cancel landed (a reaped zombie), at its cancellation-probe boundary."""
    events = [op for op in witness_of(ix, verdict) if op.op == H.EVENT]
    if len(events) != 2:
        return False
    rows = rows_of_run(ix, events[0].run)
    for event in events:
        before = [op for op in rows if op.index < event.index]
        cancels = [i for i, op in enumerate(before) if ix.number(op) == CANCEL]
        if not cancels or cancels[-1] == 0:
            continue
        holder = row_of(before[cancels[-1] - 1]).get("claimed_by")
        if holder != event.get("identity"):
            return True
    return False


def cancel_after_fence_stamp(ix: Index, verdict: Verdict) -> bool:
    """F-04: the write ran on a row a cancel (T8) took between its fence stamp and the call."""
    witness = witness_of(ix, verdict)
    stores = [op for op in witness if op.op == H.STORE]
    invokes = [op for op in witness if op.op == H.TOOL]
    if len(stores) != 1 or len(invokes) != 1 or ix.number(stores[0]) != CANCEL:
        return False
    invoke, cancel = invokes[0], stores[0]
    before = [op for op in rows_of_run(ix, cancel.run) if op.index < cancel.index]
    if not before:
        return False
    stamp = before[-1]
    return (
        ix.number(stamp) == MARK_PENDING_EFFECT
        and stamp.get("identity") == invoke.get("identity")
        and row_of(stamp).get("pending_effect") == invoke.get("true_effect")
    )


def cancel_keeps_fence(ix: Index, verdict: Verdict) -> bool:
    """Spec 3.3 step 3 and T8: a cancel keeps the row's fence, and a segment that finds its run
    cancelled persists the step without renewing or clearing; the row ends CANCELLED, fenced."""
    ops = witness_of(ix, verdict)
    return (
        len(ops) == 4
        and row_of(ops[3]).get("status") == "cancelled"
        and ix.number(ops[3]) == CANCEL
        and ops[3].index > ops[0].index
    )


def cancel_probe_fail_closed(ix: Index, verdict: Verdict) -> bool:
    """The boundary read the run cancelled and persisted its step with the write-fail-closed rule: the step
    is a tool step whose true effect is a write (or a name no loaded code has, resolved strictest), its
    insert failed, so AuditPersistenceFailedException was thrown instead of the cancellation; the caller
    was told LEASE_LOST or FAILED (spec 3.3 steps 3 and 5, 3.6). Not a read-only step (fail-soft, so it
    must end CANCELLED), not an insert that succeeded."""
    ops = witness_of(ix, verdict)
    if verdict.name != "cancel_observed_at_boundary" or len(ops) != 3:
        return False
    probe, insert, done = ops
    if probe.op != H.READ or insert.op != H.EVENT or insert.type is not OpType.INVOKE or done.op != H.SEGMENT:
        return False
    if insert.get("kind") != "tool" or insert.get("true_effect") not in _WRITE_OR_UNKNOWN:
        return False
    failed = any(
        op.index > insert.index and op.process == insert.process and op.get("seq") == insert.get("seq")
        for op in ix.of_type(H.EVENT, OpType.FAIL)
    )
    return failed and done.get("outcome") in ("lease_lost", "failed")


_WRITE_OR_UNKNOWN = frozenset({"idempotent_write", "non_idempotent_write", "unknown"})


__all__ = ["cancel_after_fence_stamp", "cancel_keeps_fence", "cancel_probe_fail_closed", "cancel_probe_zombie_event"]
