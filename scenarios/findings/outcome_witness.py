"""Recognisers for violations of the outcome oracles and ADR promises of issue 18.

Each reads the records the verdict names as its witness and accepts only the route its finding or
non-guarantee describes (the statement that failed and how, the process that issued it, the clock
it read, the fault that struck it), so that a new mechanism with the same symptom stays
unregistered. Pure functions of one judged history; they know only the history and the index.
"""

from __future__ import annotations

from model import history as H
from model.history import Op, OpType
from model.invariants import Index, Verdict
from model.invariants.index import Span, row_of
from model.invariants.own import matched, number, statements
from scenarios.findings import witness

_LEASE_STATEMENTS = frozenset({"T4", "T5", "T7", "T11", "P1"})


def _witness(ix: Index, verdict: Verdict) -> list[Op]:
    return [ix.history[i] for i in verdict.witness if 0 <= i < len(ix.history)]


def _span_of_completion(ix: Index, done: Op) -> Span | None:
    return next((s for s in ix.spans if s.completion is done), None)


# ---- NG-store-error-lease-lost -------------------------------------------------------------------


def store_error_lease_lost(ix: Index, verdict: Verdict) -> bool:
    """A segment's renewal, fence stamp, settle or requeue threw a store error while the row was still
    its own, and the runtime reported LEASE_LOST: the persister turns the exception into false and the
    executor (or recovery) reads false as a lost lease (spec T4, T5, 2 header, 3.5, 5.2). Not a
    statement that matched (KB-6's no-op renewal) or one refused on a row the segment held."""
    ops = _witness(ix, verdict)
    if verdict.name != "lease_lost_means_lost" or len(ops) != 3:
        return False
    before, last, done = ops
    return (
        last.op == H.STORE
        and last.type is OpType.FAIL
        and number(last) in _LEASE_STATEMENTS
        and before.op == H.STORE
        and done.op == H.SEGMENT
        and done.get("outcome") == "lease_lost"
        and last.process == done.process
    )


# ---- NG-reaper-dispatch-dead-letter ---------------------------------------------------------------


def reaper_dispatch_dead_letter(ix: Index, verdict: Verdict) -> bool:
    """The reaper requeued a row (T13, matched), the wake-up dispatch threw, and it counted the row as
    dead-lettered with the reason settleFailed writes (provider_failed, retryable) — whether or not
    that unguarded settle took effect (spec 5.1 3e, C6)."""
    ops = _witness(ix, verdict)
    if verdict.name != "reaper_account_true" or not ops:
        return False
    account = ops[-1]
    said = (account.get("account"), account.get("reason"))
    if account.op != H.ACCOUNT or said != ("dead_lettered", "provider_failed"):
        return False
    span = ix.span_at(account)
    if span is None or span.entry != "reap":
        return False
    mine = [
        op for op in ix.history[span.key + 1 : account.index] if op.process == account.process and op.run == account.run
    ]
    requeues = [op for op in mine if op.op == H.STORE and number(op) == "T13" and matched(op)]
    if not requeues:
        return False
    after = requeues[-1].index
    dispatches = [op for op in mine if op.op == H.DISPATCH and op.index > after and op.type is not OpType.INVOKE]
    return bool(dispatches) and dispatches[0].type is OpType.FAIL


# ---- F-05 through segment_outcome_true ----------------------------------------------------------


def recovery_dispatch_told_failed(ix: Index, verdict: Verdict) -> bool:
    """F-05 as the outcome oracle sees it: the worker reported FAILED, its last statement (recovery's
    owner-guarded dead-letter) did not take effect, and before it the segment's own requeue (T11)
    matched and its wake-up dispatch threw."""
    ops = _witness(ix, verdict)
    if len(ops) != 2:
        return False
    last, done = ops
    if done.op != H.SEGMENT or done.get("outcome") != "failed" or last.op != H.STORE or number(last) != "T7":
        return False
    if matched(last):
        return False
    span = _span_of_completion(ix, done)
    if span is None:
        return False
    own = statements(span)
    requeues = [op for op in own if number(op) == "T11" and matched(op) and op.index < last.index]
    if not requeues:
        return False
    after = [op for op in span.records if op.op == H.DISPATCH and requeues[-1].index < op.index < last.index]
    return any(op.type is OpType.FAIL for op in after) and not any(op.type is OpType.OK for op in after)


def recovery_dispatch_any(ix: Index, verdict: Verdict) -> bool:
    """F-05 through any of its invariants: the outcome oracle's route, or the earlier recogniser's."""
    if verdict.name == "segment_outcome_true":
        return recovery_dispatch_told_failed(ix, verdict)
    return witness.recovery_dispatch_outcome(ix, verdict)


# ---- F-14: a reaper whose clock runs ahead --------------------------------------------------------


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
    ops = _witness(ix, verdict)
    if verdict.name != "settles_by_owner" or len(ops) != 2:
        return False
    prior, settle = ops
    if settle.op != H.STORE or number(settle) != "T14" or settle.get("actor") != "reaper":
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


# ---- NG-cancel-probe-fail-closed -----------------------------------------------------------------


def cancel_probe_fail_closed(ix: Index, verdict: Verdict) -> bool:
    """The boundary read the run cancelled and persisted its step with the write-fail-closed rule: the step
    is a tool step whose true effect is a write (or a name no loaded code has, resolved strictest), its
    insert failed, so AuditPersistenceFailedException was thrown instead of the cancellation; the caller
    was told LEASE_LOST or FAILED (spec 3.3 steps 3 and 5, 3.6). Not a read-only step (fail-soft, so it
    must end CANCELLED), not an insert that succeeded."""
    ops = _witness(ix, verdict)
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


# ---- NG-sync-outer-requeued -------------------------------------------------------------------------


def sync_outer_requeued(ix: Index, verdict: Verdict) -> bool:
    """On the Sync transport a worker's recovery requeued the run (T11) and dispatched its wake-up, which
    the same process handled inline, nested in the call (spec 5.2, ADR-104); the nested attempt then left
    the row terminal, and the outer call still returned REQUEUED. Not a terminal row another process or
    the outer call itself wrote."""
    ops = _witness(ix, verdict)
    if verdict.name != "segment_outcome_true" or len(ops) != 3:
        return False
    requeue, left, done = ops
    if done.op != H.SEGMENT or done.get("outcome") != "requeued" or number(requeue) != "T11":
        return False
    outer = _span_of_completion(ix, done)
    inner = ix.span_at(left)
    if outer is None or inner is None or inner is outer or left.process != done.process:
        return False
    parent = inner.parent
    while parent is not None and parent is not outer:
        parent = parent.parent
    inline = any(op.op == H.DELIVER and op.get("inline") for op in ix.history[requeue.index : inner.key])
    return parent is outer and inline and inner.entry == "run_queued"


__all__ = [
    "cancel_probe_fail_closed",
    "reaper_clock_ahead",
    "reaper_dispatch_dead_letter",
    "recovery_dispatch_any",
    "recovery_dispatch_told_failed",
    "store_error_lease_lost",
    "sync_outer_requeued",
]
