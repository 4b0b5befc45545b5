"""Recognisers of clock skew: a lagging clock that stamps or dead-letters a live lease, and a reaper
whose clock runs ahead."""

from __future__ import annotations

from checks import Index, Verdict
from checks import history as H
from checks.history import Op, OpType
from checks.index import NON_IDEMPOTENT_WRITE, row_of
from checks.own import number
from model.constants import LEASE_S
from model.statements import DEAD_LETTER_STALE, MARK_PENDING_EFFECT
from register.recognisers.common import (
    lagging,
    own_expired_stamp,
    rows_of_run,
    tick_snapshot,
    witness_of,
)


def lagging_clock_stamp(ix: Index, verdict: Verdict) -> bool:
    """F-09: the write ran under its own segment's fence stamp (T5), which set ``lease_expires =
    now + 900`` from a clock lagging true time (by more than the lease, less the moments between the
    stamp and the call): the lease was already past in true time when the write started, although a
    true clock reading taken when the stamp was issued would have covered the call. The lag alone
    expired it: had the statement committed when issued, the call would still have come after the
    lease (a lag shorter than that, which only a stall of the stamp carried past the lease, is
    F-11's route). Status, claim and fence are the segment's own; only the lease is wrong. The lag
    is ground truth: a ``clock_skew`` fault set a negative offset on the stamping process (the
    runtime reads the clock just before the statement, so the offset in force may be the one before
    a fault fired at that boundary)."""
    found = own_expired_stamp(ix, verdict)
    if found is None:
        return False
    issued, stamp, invoke = found
    lease = ix.time_of(float(row_of(stamp).get("lease_expires") or 0))
    lag = issued.time_s + LEASE_S - lease
    unstalled_call_s = invoke.time_s - (stamp.time_s - issued.time_s)
    return (
        lag > 1
        and lagging(ix, stamp.process, issued.index)
        and int(issued.time_s) + LEASE_S >= invoke.time_s
        and lease < unstalled_call_s
    )


def lagging_clock_dead_letter(ix: Index, verdict: Verdict) -> bool:
    """F-16: the reaper selected a run whose lease looked stale, read its non-idempotent fence in the
    snapshot (T12) and dead-lettered it ``not_retryable`` (T14); between the snapshot and the dead-letter's
    commit, the live segment holding the run cleared the fence (its boundary T5 after the write returned).
    The clear and every renewal after it move the lease, which would make T14's staleness re-check
    refuse, but the segment's clock lagged (a ``clock_skew`` fault with a negative offset), so the row T14
    found still had a lease in the past in true time: the re-check passed and the run was dead-lettered
    for a fence that no longer stood. The window between snapshot and dead-letter is a statement's
    latency (T14 issued before the clear) or, on the Sync transport, the nested attempts the invocation
    ran for earlier rows."""
    ops = witness_of(ix, verdict)
    if len(ops) != 2 or ops[1].op != H.STORE or ix.number(ops[1]) != DEAD_LETTER_STALE:
        return False
    prior, dead_letter = ops
    if row_of(dead_letter).get("termination_reason") != "not_retryable":
        return False
    row = row_of(prior)
    if row.get("pending_effect") != "" or prior.process == dead_letter.process:
        return False
    select = tick_snapshot(ix, dead_letter)
    if select is None:
        return False
    listed = dict(zip(select.get("result") or (), select.get("fences") or (), strict=False))
    if listed.get(dead_letter.run) != NON_IDEMPOTENT_WRITE:
        return False
    snapshot = [
        op
        for op in ix.of_type(H.DECIDE, OpType.OK)
        if op.process == dead_letter.process
        and op.run == dead_letter.run
        and select.index < op.index < dead_letter.index
    ]
    if not snapshot or snapshot[-1].get("pending_effect") != NON_IDEMPOTENT_WRITE:
        return False
    clears = [
        op
        for op in rows_of_run(ix, dead_letter.run)
        if select.index < op.index <= prior.index
        and ix.number(op) == MARK_PENDING_EFFECT
        and op.process == prior.process
        and row_of(op).get("pending_effect") == ""
    ]
    if not clears:
        return False
    lease = row.get("lease_expires")
    past = isinstance(lease, (int, float)) and lease > 0 and ix.time_of(lease) < prior.time_s
    return past and lagging(ix, prior.process, prior.index)


def _offsets_in_force(ix: Index, process: str, index: int) -> list[float]:
    """The clock offsets ``clock_skew`` faults gave ``process`` before record ``index``, oldest first;
    none once the quiet phase healed every clock after the last of them."""
    quiet = [op.index for op in ix.of_type(H.PHASE, OpType.INFO) if op.get("phase") == "quiet" and op.index < index]
    offsets = [
        (op.index, float(op.get("offset_s") or 0.0))
        for op in ix.of_type(H.FAULT, OpType.INFO)
        if op.index < index and op.get("family") == "clock_skew" and op.get("target") == process
    ]
    if not offsets or (quiet and offsets[-1][0] < quiet[-1]):
        return []
    return [offset for _, offset in offsets]


def _offset_in_force(ix: Index, process: str, index: int) -> float:
    """The largest clock offset in force for ``process`` just before ``index``: the last one, or the one
    before it (the runtime may have read its clock just before a fault fired at the same request)."""
    return max(_offsets_in_force(ix, process, index)[-2:], default=0.0)


def _offset_at(ix: Index, process: str, index: int) -> float:
    """The clock offset in force for ``process`` at record ``index``: the last one, 0 when none is."""
    return next(reversed(_offsets_in_force(ix, process, index)), 0.0)


def _tick_of(ix: Index, settle: Op) -> Op | None:
    """The reaper invocation (segment ``reap``) the statement belongs to: the process's last before it."""
    ticks = [
        op
        for op in ix.of_type(H.SEGMENT, OpType.INVOKE)
        if op.process == settle.process and op.get("entry") == "reap" and op.index < settle.index
    ]
    return ticks[-1] if ticks else None


def reaper_clock_ahead(ix: Index, verdict: Verdict) -> bool:
    """F-14: the reaper's dead-letter (T14) settled a row whose lease was still ahead of true time,
    because the reaper's clock ran ahead (a ``clock_skew`` fault gave its process a positive offset)
    by more than the lease had left: by the reaper's clock the lease had expired, by the true clock it
    had not. Not a lagging owner clock (that lease is past in true time and is allowed).

    The staleness ``now`` is read once, when the reaper invocation begins (spec 5.1; the dead-letter's
    own later reading only stamps ``finished_at``), so the offset that counts is the one in force at the
    start of the invocation the statement belongs to, not at the statement: on the Sync transport an
    invocation runs nested attempts that take minutes, during which later clock faults strike the same
    process. A history without a recorded invocation falls back to the offset in force just before the
    statement."""
    ops = witness_of(ix, verdict)
    if verdict.name != "settles_by_owner" or len(ops) != 2:
        return False
    prior, settle = ops
    if settle.op != H.STORE or number(settle) != DEAD_LETTER_STALE or settle.get("actor") != "reaper":
        return False
    clock_lease = row_of(prior).get("lease_expires")
    if not isinstance(clock_lease, (int, float)):
        return False
    lease = ix.time_of(clock_lease)  # on the records' time axis
    if lease < settle.time_s:
        return False
    tick = _tick_of(ix, settle)
    if tick is None:
        offset = _offset_in_force(ix, settle.process, settle.index)
        return offset > 0 and lease < settle.time_s + offset
    offset = _offset_at(ix, settle.process, tick.index)
    return offset > 0 and lease < tick.time_s + offset


__all__ = ["lagging_clock_dead_letter", "lagging_clock_stamp", "reaper_clock_ahead"]
