"""Recognisers of clock skew: a lagging clock that stamps or dead-letters a live lease, and a reaper
whose clock runs ahead."""

from __future__ import annotations

from checks import Index, Verdict
from checks import history as H
from checks.history import Op, OpType
from checks.index import NON_IDEMPOTENT_WRITE, row_of
from checks.own import number
from model.constants import LEASE_S, MAX_REQUEUES
from model.statements import DEAD_LETTER_STALE, MARK_PENDING_EFFECT, REQUEUE_STALE, REQUEUES
from register.recognisers.common import (
    lagging,
    own_expired_stamp,
    reaper_decision,
    reaper_tick,
    rows_of_run,
    stale_fence_dead_letter,
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
    found = stale_fence_dead_letter(ix, verdict)
    if found is None:
        return False
    prior = found[0]
    row = row_of(prior)
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
    tick = reaper_tick(ix, settle)
    if tick is None:
        offset = _offset_in_force(ix, settle.process, settle.index)
        return offset > 0 and lease < settle.time_s + offset
    offset = _offset_at(ix, settle.process, tick.index)
    return offset > 0 and lease < tick.time_s + offset


def _reaper_now(ix: Index, statement: Op) -> tuple[float, float] | None:
    """(the true time at which the reaper invocation of ``statement`` read its ``now``, the offset its
    clock had then), on the records' time axis; None without a recorded invocation. The staleness
    ``now`` of T13 and T14 is read once, when the invocation begins (spec 5.1 step 2)."""
    tick = reaper_tick(ix, statement)
    if tick is None:
        return None
    return tick.time_s, _offset_at(ix, statement.process, tick.index)


def _passed_by_reaper_lead(ix: Index, statement: Op, lease: object) -> bool:
    """Whether the staleness re-check of the reaper's ``statement`` (T13/T14: ``0 < lease_expires < now``)
    passed on ``lease`` only because the reaper's clock ran ahead: the lease was not yet past at the
    true moment the invocation read its ``now`` (a true clock's re-check would have refused), and it was
    before that clock's reading (a ``clock_skew`` fault gave the reaper's process a positive offset)."""
    read = _reaper_now(ix, statement)
    if read is None or not isinstance(lease, (int, float)) or lease <= 0:
        return False
    read_s, offset = read
    at = ix.time_of(lease)
    return offset > 0 and int(read_s) <= at < read_s + offset


def reaper_clock_ahead_requeue_past_budget(ix: Index, verdict: Verdict) -> bool:
    """F-19: the reaper requeued a run (T13) past MAX_REQUEUES. It decided on its snapshot (T12, spec 5.1
    3c), whose requeue_count was under the budget; before its T13 applied, other requeues of the run (the
    owner's T11 after retryable failures, or another reclaim) spent the budget, each followed by a claim,
    and T13, which has no requeue_count predicate and sets ``requeue_count + 1`` in SQL, added one more.
    The claim after those requeues wrote a lease later than the invocation's true ``now``; the re-check
    passed only because the reaper's clock ran ahead (a positive ``clock_skew`` offset when the invocation
    read ``now``). The window between snapshot and requeue is the invocation's earlier rows (on the Sync
    transport, the attempts it runs inline). Not a requeue whose snapshot already showed the budget spent
    (the reaper dead-letters those, spec 5.1 3c), nor one whose re-check a true reaper clock would pass."""
    ops = witness_of(ix, verdict)
    if verdict.name != "requeue_budget_respected" or len(ops) != 1:
        return False
    requeue = ops[0]
    if requeue.op != H.STORE or ix.number(requeue) != REQUEUE_STALE or requeue.get("actor") != "reaper":
        return False
    select = tick_snapshot(ix, requeue)
    if select is None or requeue.run not in (select.get("result") or ()):
        return False
    note = reaper_decision(ix, requeue, select)
    counted = None if note is None else note.get("requeue_count")
    if note is None or note.get("decision") != "requeue" or not isinstance(counted, int) or counted >= MAX_REQUEUES:
        return False
    spent = [
        op
        for op in rows_of_run(ix, requeue.run)
        if select.index < op.index < requeue.index and ix.number(op) in REQUEUES
    ]
    prior = ix.row_before(requeue.run, requeue.index)
    if prior is None or len(spent) < MAX_REQUEUES - counted or prior.index < spent[-1].index:
        return False
    return _passed_by_reaper_lead(ix, requeue, row_of(prior).get("lease_expires"))


def reaper_clock_ahead_dead_letter(ix: Index, verdict: Verdict) -> bool:
    """F-20: the reaper dead-lettered a run ``not_retryable`` (T14) on its snapshot's non-idempotent fence,
    which the live segment holding the run cleared after the snapshot (:func:`stale_fence_dead_letter`);
    the clear and the renewals after it moved the lease past the true moment the invocation read its
    ``now``, but the reaper's clock ran ahead (a positive ``clock_skew`` offset at that moment), so T14's
    staleness re-check still passed. Not F-16's route (a lagging segment clock renews into a past the
    true reaper clock already saw) and not F-21's (a clear stalled past its lease)."""
    found = stale_fence_dead_letter(ix, verdict)
    if found is None:
        return False
    prior, dead_letter, _, _ = found
    return _passed_by_reaper_lead(ix, dead_letter, row_of(prior).get("lease_expires"))


def reaper_clock_ahead_exhausted_over_new_fence(ix: Index, verdict: Verdict) -> bool:
    """F-22: the reaper dead-lettered a run ``retries_exhausted`` (T14) on its snapshot (T12) and decision,
    which read no fence and the spent budget (spec 5.1 3c); after the snapshot the live segment holding the
    run stamped a non-idempotent fence (T5 at ``executor.fence``), which moved the lease past the true
    moment the invocation read its ``now``, and T14 (no pending_effect predicate) found that row: its
    staleness re-check passed only because the reaper's clock ran ahead. The row's standing fence calls
    for ``not_retryable`` (spec 5.1 3a: the fence check outranks the budget), and the write it fences is
    in flight. The window between snapshot and dead-letter is the invocation's own (a stalled T14, or on
    the Sync transport the attempts it runs inline). Not F-20 (the snapshot read a fence the segment then
    cleared) nor F-18 (a requeue, T13, under the budget)."""
    ops = witness_of(ix, verdict)
    if verdict.name != "dead_letter_reason_matches_cause" or len(ops) != 2:
        return False
    prior, dead_letter = ops
    if dead_letter.op != H.STORE or number(dead_letter) != DEAD_LETTER_STALE or dead_letter.get("actor") != "reaper":
        return False
    if row_of(dead_letter).get("termination_reason") != "retries_exhausted":
        return False
    select = tick_snapshot(ix, dead_letter)
    if select is None:
        return False
    listed = dict(zip(select.get("result") or (), select.get("fences") or (), strict=False))
    note = reaper_decision(ix, dead_letter, select)
    if listed.get(dead_letter.run) != "" or note is None or note.get("pending_effect") != "":
        return False
    if note.get("decision") != "retries_exhausted":
        return False
    if prior.process == dead_letter.process or row_of(prior).get("pending_effect") != NON_IDEMPOTENT_WRITE:
        return False
    stamped = any(
        number(op) == MARK_PENDING_EFFECT
        and op.get("site") == "executor.fence"
        and op.process == prior.process
        and row_of(op).get("pending_effect") == NON_IDEMPOTENT_WRITE
        for op in rows_of_run(ix, dead_letter.run)
        if select.index < op.index <= prior.index
    )
    return stamped and _passed_by_reaper_lead(ix, dead_letter, row_of(prior).get("lease_expires"))


__all__ = [
    "lagging_clock_dead_letter",
    "lagging_clock_stamp",
    "reaper_clock_ahead",
    "reaper_clock_ahead_dead_letter",
    "reaper_clock_ahead_exhausted_over_new_fence",
    "reaper_clock_ahead_requeue_past_budget",
]
