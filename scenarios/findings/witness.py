"""Recognisers: does a violation's witness show the mechanism of a registered finding or non-guarantee?

Each recogniser is a pure function of one judged history (through the shared invariant
index) and the verdict of the violated invariant. It reads the records the verdict names
as its witness and checks the interleaving the finding's Markdown describes, so that a
violation is "explained" by a finding only when it happened the way the finding says,
not merely because the same invariant failed under the same fault families.

Knows only the history (:mod:`model.history`) and the invariant index; never the world.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from model import history as H
from model.history import Op, OpType
from model.invariants import Index, Verdict
from model.invariants.index import NON_IDEMPOTENT_WRITE, REQUEUES, row_of

Recogniser = Callable[[Index, Verdict], bool]


def _witness(ix: Index, verdict: Verdict) -> list[Op]:
    return [ix.history[i] for i in verdict.witness if 0 <= i < len(ix.history)]


def _rows_of_run(ix: Index, run: str) -> list[Op]:
    return [op for op in ix.rows if op.run == run]


def _first_row_after(rows: Iterable[Op], index: int, identity: str) -> Op | None:
    for op in rows:
        if op.index > index and op.get("identity") == identity:
            return op
    return None


# ---- findings --------------------------------------------------------------------------------


def completed_write_rerun(ix: Index, verdict: Verdict) -> bool:
    """F-01: the first landing's segment cleared its fence (the write completed), and only then
    was the run requeued (T11 by recovery or T13 by the reaper) and run again from round 1."""
    landings = [op for op in _witness(ix, verdict) if op.op == H.LANDING]
    if len(landings) != 2:
        return False
    first, second = landings
    rows = _rows_of_run(ix, first.run)
    clear = _first_row_after(rows, first.index, str(first.get("identity")))
    if clear is None or ix.number(clear) != "T5" or row_of(clear).get("pending_effect") != "":
        return False
    return any(clear.index < op.index < second.index and ix.number(op) in REQUEUES for op in rows)


def unaudited_landed_write(ix: Index, verdict: Verdict) -> bool:
    """F-02: the landed execution never even reached its audit insert: its segment stopped
    between the landing and the tool step's record (lease lost at the boundary, or it died)."""
    landings = [op for op in _witness(ix, verdict) if op.op == H.LANDING]
    if len(landings) != 1:
        return False
    landing = landings[0]
    key = (landing.run, landing.get("execution"))
    return not any((op.run, op.get("execution")) == key for op in ix.all(H.EVENT) if op.get("kind") == "tool")


def cancel_probe_zombie_event(ix: Index, verdict: Verdict) -> bool:
    """F-03: one of the colliding events was stored after a cancel by a segment that no longer
    held the row when the cancel landed (a reaped zombie), at its cancellation-probe boundary."""
    events = [op for op in _witness(ix, verdict) if op.op == H.EVENT]
    if len(events) != 2:
        return False
    rows = _rows_of_run(ix, events[0].run)
    for event in events:
        before = [op for op in rows if op.index < event.index]
        cancels = [i for i, op in enumerate(before) if ix.number(op) == "T8"]
        if not cancels or cancels[-1] == 0:
            continue
        holder = row_of(before[cancels[-1] - 1]).get("claimed_by")
        if holder != event.get("identity"):
            return True
    return False


def cancel_after_fence_stamp(ix: Index, verdict: Verdict) -> bool:
    """F-04: the write ran on a row a cancel (T8) took between its fence stamp and the call."""
    witness = _witness(ix, verdict)
    stores = [op for op in witness if op.op == H.STORE]
    invokes = [op for op in witness if op.op == H.TOOL]
    if len(stores) != 1 or len(invokes) != 1 or ix.number(stores[0]) != "T8":
        return False
    invoke, cancel = invokes[0], stores[0]
    before = [op for op in _rows_of_run(ix, cancel.run) if op.index < cancel.index]
    if not before:
        return False
    stamp = before[-1]
    return (
        ix.number(stamp) == "T5"
        and stamp.get("identity") == invoke.get("identity")
        and row_of(stamp).get("pending_effect") == invoke.get("true_effect")
    )


def recovery_dispatch_orphan(ix: Index, verdict: Verdict) -> bool:
    """F-05: the run's last row change is recovery's owner requeue (T11), whose wake-up dispatch
    then failed; the owner-guarded dead-letter that follows matches nothing on a QUEUED row."""
    finals = [op for op in _witness(ix, verdict) if op.op == H.FINAL]
    if len(finals) != 1 or row_of(finals[0]).get("status") != "queued":
        return False
    rows = _rows_of_run(ix, finals[0].run)
    if not rows or ix.number(rows[-1]) != "T11" or rows[-1].get("site") != "recovery.requeue":
        return False
    last = rows[-1].index
    return any(
        op.run == finals[0].run and op.index > last and op.get("site") == "recovery.dispatch"
        for op in ix.of_type(H.DISPATCH, OpType.FAIL)
    ) or _failed_dispatch_after(ix, finals[0].run, last)


def _failed_dispatch_after(ix: Index, run: str, index: int) -> bool:
    """A recovery dispatch of ``run`` after ``index`` that completed with a failure."""
    for invoke in ix.of_type(H.DISPATCH, OpType.INVOKE):
        if invoke.run != run or invoke.index <= index or invoke.get("site") != "recovery.dispatch":
            continue
        completion = ix.completions.get(invoke.index)
        if completion is not None and completion.type is OpType.FAIL:
            return True
    return False


def zombie_fence_after_select(ix: Index, verdict: Verdict) -> bool:
    """F-06: the reaper requeued on a snapshot with no non-idempotent fence, but the segment it
    reaped (a zombie whose clock runs late) stamped that fence after the SELECT and ran the write."""
    landings = [op for op in _witness(ix, verdict) if op.op == H.LANDING]
    if len(landings) != 2:
        return False
    run = landings[0].run
    stamps = [
        op
        for op in _rows_of_run(ix, run)
        if ix.number(op) == "T5" and row_of(op).get("pending_effect") == NON_IDEMPOTENT_WRITE
    ]
    selects = [op for op in ix.of_type(H.READ, OpType.OK) if op.get("what") == "SelectStale"]
    for decide in ix.of_type(H.DECIDE, OpType.OK):
        if decide.run != run or decide.get("decider") != "reaper" or decide.get("decision") != "requeue":
            continue
        select = max((s for s in selects if s.process == decide.process and s.index < decide.index), default=None)
        if select is None:
            continue
        if any(select.index < s.index < decide.index + 3 and _is_landing_stamp(s, landings) for s in stamps):
            return True
    return False


def _is_landing_stamp(stamp: Op, landings: Iterable[Op]) -> bool:
    return any(stamp.get("identity") == landing.get("identity") for landing in landings)


# ---- recorded non-guarantees -----------------------------------------------------------------


def shared_identity(ix: Index, verdict: Verdict) -> bool:
    """Two live processes shared an identity (the ``identity`` fault), and the witness involves it."""
    stolen = {
        op.get("identity")
        for op in ix.of_type(H.FAULT, OpType.INFO)
        if op.get("family") == "identity" and op.get("identity")
    }
    if not stolen:
        return False
    for op in _witness(ix, verdict):
        if op.get("identity") in stolen:
            return True
        row = op.value.get("row")
        if isinstance(row, Mapping) and row.get("claimed_by") in stolen:
            return True
    return False


def queued_orphan(ix: Index, verdict: Verdict) -> bool:
    """The run ended QUEUED: a row the reaper never selects (only purge removes it)."""
    finals = [op for op in _witness(ix, verdict) if op.op == H.FINAL]
    return len(finals) == 1 and row_of(finals[0]).get("status") == "queued"


def landing_identity(op: Op) -> Any:
    return op.get("identity")


__all__ = [
    "Recogniser",
    "cancel_after_fence_stamp",
    "cancel_probe_zombie_event",
    "completed_write_rerun",
    "queued_orphan",
    "recovery_dispatch_orphan",
    "shared_identity",
    "unaudited_landed_write",
    "zombie_fence_after_select",
]
