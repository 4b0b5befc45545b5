"""Recognisers of wake-ups that failed or went missing: the recovery's and the enqueue's dispatch
failures, queued orphans, the reaper's dispatch settle (its dead-letter and its settle over a new
owner), and the Sync transport's outer REQUEUED."""

from __future__ import annotations

from checks import Index, Verdict
from checks import history as H
from checks.history import Op, OpType
from checks.index import Span, row_of
from checks.own import matched, number, statements
from model.statements import CANCEL, ENQUEUE_RUN, FINISH_RUN, REQUEUE, REQUEUE_STALE
from register.recognisers.common import (
    CLAIM_STATEMENTS,
    rows_of_run,
    settle_over_claim,
    witness_of,
)


def recovery_dispatch_orphan(ix: Index, verdict: Verdict) -> bool:
    """F-05: the run's last row change is recovery's owner requeue (T11), whose wake-up dispatch
    then failed; the owner-guarded dead-letter that follows matches nothing on a QUEUED row."""
    final = _queued_final(ix, verdict)
    if final is None:
        return False
    rows = rows_of_run(ix, final.run)
    last = rows[-1] if rows else None
    if last is None or ix.number(last) != REQUEUE or last.get("site") != "recovery.requeue":
        return False
    dispatches = _dispatches_after(ix, final.run, last.index)
    refused = any(
        op.run == final.run and op.index > last.index and op.get("site") == "recovery.dead_letter"
        for op in ix.of_type(H.STORE, OpType.OK)
        if not op.get("matched")
    )
    return refused and bool(dispatches) and all(site == "recovery.dispatch" and not ok for site, ok in dispatches)


def recovery_dispatch_outcome(ix: Index, verdict: Verdict) -> bool:
    """F-05 through segment_outcome_matches_row: the worker segment reports FAILED while the row it
    leaves is the QUEUED row of recovery's own requeue (T11), whose wake-up dispatch failed. Also
    when a user's cancel (T8) lands between the failed dispatch and the dead-letter: the guarded
    dead-letter matches nothing either way and the segment reports FAILED over a CANCELLED row. Also
    when the dead-letter stalled and landed after another worker claimed the requeued run and requeued
    it in turn (its own T11) or settled it (its own T7, e.g. completed): the guard matches nothing on
    that worker's row just as on the segment's."""
    if verdict.name != "segment_outcome_matches_row":
        return recovery_dispatch_orphan(ix, verdict)
    ops = witness_of(ix, verdict)
    if len(ops) != 2:
        return False
    row, segment = ops
    if row.op != H.STORE or segment.get("outcome") != "failed":
        return False
    if ix.number(row) == CANCEL:
        requeue = _requeue_before_cancel(ix, row, segment)
        if requeue is None:
            return False
        row = requeue
    elif row.process != segment.process and ix.number(row) in (REQUEUE, FINISH_RUN):
        requeue = _requeue_before_new_owner(ix, row, segment)
        if requeue is None:
            return False
        row = requeue
    elif ix.number(row) != REQUEUE:
        return False
    dispatches = [(site, ok) for site, ok in _dispatches_after(ix, row.run, row.index) if site == "recovery.dispatch"]
    return bool(dispatches) and not dispatches[0][1]


def _requeue_before_cancel(ix: Index, cancel: Op, segment: Op) -> Op | None:
    """The segment's own recovery requeue (T11) that the user's cancel overwrote: the run's last row
    before the cancel, written by the segment's process."""
    before = [op for op in rows_of_run(ix, cancel.run) if op.index < cancel.index]
    if not before or ix.number(before[-1]) != REQUEUE or before[-1].process != segment.process:
        return None
    return before[-1]


NEW_OWNER_SETTLE_SITES = ("executor.", "recovery.", "run_queued.")
"""Where a worker segment settles a run it claimed (T7): the new owner's row on F-05's route. The
reaper's and the enqueue's settles are other mechanisms (no claim by their process precedes them)."""


def _new_owners_row(ix: Index, other: Op) -> bool:
    """``other`` is a row a worker writes in its own segment: its recovery requeue (T11) or a settle (T7)."""
    site = str(other.get("site"))
    if ix.number(other) == REQUEUE:
        return site == "recovery.requeue"
    return ix.number(other) == FINISH_RUN and site.startswith(NEW_OWNER_SETTLE_SITES)


def _requeue_before_new_owner(ix: Index, other: Op, segment: Op) -> Op | None:
    """The segment's own recovery requeue (T11) when the row it ends on is another worker's own row,
    its recovery requeue or its settle: that worker claimed the run after the segment's requeue and
    wrote ``other``, and the segment's owner-guarded dead-letter (recovery.dead_letter) took effect on
    nothing after ``other`` (the store's own record: matched nothing)."""
    if not _new_owners_row(ix, other):
        return None
    span = _span_of_completion(ix, segment)
    if span is None:
        return None
    own = [op for op in statements(span) if op.index < other.index and number(op) == REQUEUE and matched(op)]
    if not own or own[-1].get("site") != "recovery.requeue":
        return None
    requeue = own[-1]
    between = [op for op in rows_of_run(ix, other.run) if requeue.index < op.index < other.index]
    if not any(ix.number(op) in CLAIM_STATEMENTS and op.process == other.process for op in between):
        return None
    if any(op.process == segment.process for op in between):
        return None
    refused = [
        op
        for op in statements(span)
        if op.get("site") == "recovery.dead_letter" and op.type is OpType.OK and not op.get("matched")
    ]
    return requeue if refused and refused[-1].index > other.index else None


def _queued_final(ix: Index, verdict: Verdict) -> Op | None:
    finals = [op for op in witness_of(ix, verdict) if op.op == H.FINAL]
    if len(finals) != 1 or row_of(finals[0]).get("status") != "queued":
        return None
    return finals[0]


def _dispatches_after(ix: Index, run: str, index: int) -> list[tuple[str, bool]]:
    """(site, succeeded) of every wake-up dispatch of ``run`` issued after ``index``."""
    found = []
    for invoke in ix.of_type(H.DISPATCH, OpType.INVOKE):
        if invoke.run == run and invoke.index > index:
            completion = ix.completions.get(invoke.index)
            found.append((str(invoke.get("site")), completion is not None and completion.type is OpType.OK))
    return found


def enqueue_dispatch_settle_lost(ix: Index, verdict: Verdict) -> bool:
    """F-08: the enqueue's wake-up dispatch failed and the unguarded settle that should fail the row
    (T7, enqueue.dispatch_failed) was lost — it threw, or the client died before it ran: the client
    is told (or would have been told) the enqueue failed, the row stays QUEUED."""
    final = _queued_final(ix, verdict)
    if final is None:
        return False
    rows = rows_of_run(ix, final.run)
    if not rows or ix.number(rows[-1]) != ENQUEUE_RUN:
        return False
    if _dispatches_after(ix, final.run, rows[-1].index) != [("enqueue.dispatch", False)]:
        return False
    return _settle_lost(ix, rows[-1], "enqueue.dispatch_failed")


def queued_orphan(ix: Index, verdict: Verdict) -> bool:
    """The run ended QUEUED with its stored request, and its last wake-up was lost the ways the
    spec records: never dispatched (the writer died between the row and the dispatch), consumed
    by a worker that never claimed (a store error or a crash before T3: the handler returns null),
    or a failed re-dispatch (reaper or recovery) whose settle was lost to a second fault: it threw,
    the MAX(sequence) read before it failed (spec 5.1 3e), or the process died first. No ADR names
    these paths; the enqueue's is F-08 and recovery's refused dead-letter is F-05."""
    final = _queued_final(ix, verdict)
    if final is None or not row_of(final).get("has_request"):
        return False
    rows = rows_of_run(ix, final.run)
    if not rows:
        return False
    last = rows[-1].index
    dispatches = _dispatches_after(ix, final.run, last)
    if not dispatches:
        return True
    if any(ok for _, ok in dispatches):
        return _claim_lost(ix, final.run, last)
    sites = {site for site, _ in dispatches}
    if sites == {"reaper.dispatch"}:
        return _settle_lost(ix, rows[-1], "reaper.dispatch_failed")
    if sites == {"recovery.dispatch"}:
        return _settle_lost(ix, rows[-1], "recovery.dead_letter")
    return False


def _claim_lost(ix: Index, run: str, index: int) -> bool:
    """A wake-up of ``run`` delivered after ``index`` was consumed without a claim: a read or a
    guarded update of the run failed on a store error, or the worker it reached died."""
    failures = (*ix.of_type(H.STORE, OpType.FAIL), *ix.of_type(H.READ, OpType.FAIL))
    if any(op.run == run and op.index > index for op in failures):
        return True
    reached = {op.process for op in ix.of_type(H.DELIVER, OpType.OK) if op.run == run and op.index > index}
    return any(op.get("process") in reached and op.index > index for op in ix.of_type(H.CRASH, OpType.INFO))


def _settle_lost(ix: Index, row: Op, site: str) -> bool:
    """After ``row`` (a requeue or insert) and its failed dispatch, the settle meant to follow was
    lost: it threw (or the MAX(sequence) read before it failed, spec 5.1 3e), or the process that
    wrote ``row`` died before writing anything else of the run."""
    lost = any(
        op.run == row.run and op.index > row.index and op.get("site") == site
        for op in (*ix.of_type(H.STORE, OpType.FAIL), *ix.of_type(H.READ, OpType.FAIL))
    )
    return lost or _died_after(ix, row)


def _died_after(ix: Index, row: Op) -> bool:
    """The process that wrote ``row`` crashed later without writing another row of the run."""
    later = [op for op in ix.rows if op.run == row.run and op.index > row.index and op.process == row.process]
    return not later and any(
        op.get("process") == row.process and op.index > row.index for op in ix.of_type(H.CRASH, OpType.INFO)
    )


def reaper_dispatch_settle_over_new_owner(ix: Index, verdict: Verdict) -> bool:
    """F-17: the reaper requeued the run (its own T13, its last row of the run), the wake-up dispatch
    after it threw, and the settleFailed that follows (spec 9 C6: a plain T7, no owner guard, no
    staleness predicate) committed over the RUNNING row of a segment that had claimed the requeued run
    (T3 or T10 after the requeue, by the process that wrote the row the settle overwrote) in the meantime (with a spare
    wake-up: a duplicate or late delivery of an earlier one), within the latency of the reaper's
    MAX(sequence) read and settle, or while that settle stalled."""
    found = settle_over_claim(ix, verdict, frozenset({"reaper.dispatch_failed"}))
    if found is None:
        return False
    prior, settle = found
    rows = rows_of_run(ix, settle.run)
    own = [op for op in rows if op.index < settle.index and op.process == settle.process]
    if not own or ix.number(own[-1]) != REQUEUE_STALE:
        return False
    requeue = own[-1]
    claimed = any(
        ix.number(op) in CLAIM_STATEMENTS and op.process == prior.process
        for op in rows
        if requeue.index < op.index <= prior.index
    )
    if not claimed:
        return False
    dispatches = [
        op
        for op in ix.of_type(H.DISPATCH, OpType.INVOKE)
        if op.process == settle.process and op.run == settle.run and op.get("site") == "reaper.dispatch"
        if requeue.index < op.index < settle.index
    ]
    if len(dispatches) != 1:
        return False
    done = ix.completions.get(dispatches[0].index)
    return done is not None and done.type is OpType.FAIL


def _span_of_completion(ix: Index, done: Op) -> Span | None:
    return next((s for s in ix.spans if s.completion is done), None)


def reaper_dispatch_dead_letter(ix: Index, verdict: Verdict) -> bool:
    """The reaper requeued a row (T13, matched), the wake-up dispatch threw, and it counted the row as
    dead-lettered with the reason settleFailed writes (provider_failed, retryable) — whether or not
    that unguarded settle took effect (spec 5.1 3e, C6)."""
    ops = witness_of(ix, verdict)
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
    requeues = [op for op in mine if op.op == H.STORE and number(op) == REQUEUE_STALE and matched(op)]
    if not requeues:
        return False
    after = requeues[-1].index
    dispatches = [op for op in mine if op.op == H.DISPATCH and op.index > after and op.type is not OpType.INVOKE]
    return bool(dispatches) and dispatches[0].type is OpType.FAIL


def recovery_dispatch_told_failed(ix: Index, verdict: Verdict) -> bool:
    """F-05 as the outcome oracle sees it: the worker reported FAILED, its last statement (recovery's
    owner-guarded dead-letter) did not take effect, and before it the segment's own requeue (T11)
    matched and its wake-up dispatch threw."""
    ops = witness_of(ix, verdict)
    if len(ops) != 2:
        return False
    last, done = ops
    if done.op != H.SEGMENT or done.get("outcome") != "failed" or last.op != H.STORE or number(last) != FINISH_RUN:
        return False
    if matched(last):
        return False
    span = _span_of_completion(ix, done)
    if span is None:
        return False
    own = statements(span)
    requeues = [op for op in own if number(op) == REQUEUE and matched(op) and op.index < last.index]
    if not requeues:
        return False
    after = [op for op in span.records if op.op == H.DISPATCH and requeues[-1].index < op.index < last.index]
    return any(op.type is OpType.FAIL for op in after) and not any(op.type is OpType.OK for op in after)


def recovery_dispatch_any(ix: Index, verdict: Verdict) -> bool:
    """F-05 through any of its invariants: the outcome oracle's route, or the earlier recogniser's."""
    if verdict.name == "segment_outcome_true":
        return recovery_dispatch_told_failed(ix, verdict)
    return recovery_dispatch_outcome(ix, verdict)


def sync_outer_requeued(ix: Index, verdict: Verdict) -> bool:
    """On the Sync transport a worker's recovery requeued the run (T11) and dispatched its wake-up, which
    the same process handled inline, nested in the call (spec 5.2, ADR-104); the nested attempt then left
    the row terminal, and the outer call still returned REQUEUED. Not a terminal row another process or
    the outer call itself wrote."""
    ops = witness_of(ix, verdict)
    if verdict.name != "segment_outcome_true" or len(ops) != 3:
        return False
    requeue, left, done = ops
    if done.op != H.SEGMENT or done.get("outcome") != "requeued" or number(requeue) != REQUEUE:
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
    "enqueue_dispatch_settle_lost",
    "queued_orphan",
    "reaper_dispatch_dead_letter",
    "reaper_dispatch_settle_over_new_owner",
    "recovery_dispatch_any",
    "recovery_dispatch_orphan",
    "recovery_dispatch_outcome",
    "recovery_dispatch_told_failed",
    "sync_outer_requeued",
]
