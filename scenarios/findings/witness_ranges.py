"""Recognisers of the findings the deployment-range grid and swarm met (issue 18: F-15 .. F-18).

Beside :mod:`scenarios.findings.witness` (which holds F-01 .. F-13 and the non-guarantees), with the
same contract: a pure function of one judged history (through the shared invariant index) and the
verdict of the violated invariant, true only when the witness shows the route the finding's write-up
describes, read from ground truth (which process wrote a row, which fault struck whom, what a
decider read), never from the runtime's own labels alone. Each is tested against near-miss histories
that differ in the route (``tests/properties/test_deployment_grid_findings.py``).

Knows only the history (:mod:`model.history`) and the invariant index; never the world.
"""

from __future__ import annotations

from model import history as H
from model.history import Op, OpType
from model.invariants import Index, Verdict
from model.invariants.index import NON_IDEMPOTENT_WRITE, row_of
from scenarios.findings.witness import _invoke_of, _lagging, _rows_of_run, _settle_over_claim, _witness

_CLAIMS = ("T3", "T10")
_POSITION_FAILED_SITES = frozenset({"run_queued.position_failed", "resume.position_failed"})
_POSITION_READ_SITES = frozenset({"run_queued.position", "resume.position"})


def stalled_position_read_settle(ix: Index, verdict: Verdict) -> bool:
    """F-15: a segment claimed the run (T3 by runQueued, or T10 by a resume) and its post-claim
    position read (the fresh FindRun / MAX(sequence) of spec 3.1) stalled in the store: a ``store``
    slow fault struck that process after its claim and before the reaper's requeue (T13). Meanwhile
    another segment claimed the run. The stalled read then failed, and the unguarded settleFailed that
    follows (ownedBy null) was issued after that other claim and failed its RUNNING row.

    Not F-12, where the settle statement itself stalled and was issued before the other claim."""
    found = _settle_over_claim(ix, verdict, _POSITION_FAILED_SITES)
    if found is None:
        return False
    _, settle = found
    rows = _rows_of_run(ix, settle.run)
    own = [op for op in rows if op.index < settle.index and op.process == settle.process]
    if not own or ix.number(own[-1]) not in _CLAIMS:
        return False
    claim = own[-1]
    between = [op for op in rows if claim.index < op.index < settle.index]
    requeues = [op for op in between if ix.number(op) == "T13"]
    reclaims = [op for op in between if ix.number(op) in _CLAIMS and op.process != settle.process]
    issued = _invoke_of(ix, settle)
    if not requeues or not reclaims or issued is None or issued.index < reclaims[0].index:
        return False
    stalled = any(
        fault.get("family") == "store" and fault.get("kind") == "slow" and fault.get("target") == settle.process
        for fault in ix.of_type(H.FAULT, OpType.INFO)
        if claim.index < fault.index < requeues[0].index
    )
    read_failed = any(
        read.process == settle.process and read.run == settle.run and read.get("site") in _POSITION_READ_SITES
        for read in ix.of_type(H.READ, OpType.FAIL)
        if reclaims[0].index < read.index < issued.index
    )
    return stalled and read_failed


def _tick_snapshot(ix: Index, dead_letter: Op) -> Op | None:
    """The SelectStale read (T12) of the reaper invocation that issued ``dead_letter``: the process's last
    before the statement."""
    reads = [
        op
        for op in ix.of_type(H.READ, OpType.OK)
        if op.process == dead_letter.process and op.get("what") == "SelectStale" and op.index < dead_letter.index
    ]
    return reads[-1] if reads else None


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
    ops = _witness(ix, verdict)
    if len(ops) != 2 or ops[1].op != H.STORE or ix.number(ops[1]) != "T14":
        return False
    prior, dead_letter = ops
    if row_of(dead_letter).get("termination_reason") != "not_retryable":
        return False
    row = row_of(prior)
    if row.get("pending_effect") != "" or prior.process == dead_letter.process:
        return False
    select = _tick_snapshot(ix, dead_letter)
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
        for op in _rows_of_run(ix, dead_letter.run)
        if select.index < op.index <= prior.index
        and ix.number(op) == "T5"
        and op.process == prior.process
        and row_of(op).get("pending_effect") == ""
    ]
    if not clears:
        return False
    lease = row.get("lease_expires")
    past = isinstance(lease, (int, float)) and lease > 0 and ix.time_of(lease) < prior.time_s
    return past and _lagging(ix, prior.process, prior.index)


def stale_snapshot_requeue_reruns_write(ix: Index, verdict: Verdict) -> bool:
    """F-18: a non-idempotent call landed twice because the reaper requeued its run on a snapshot taken
    before the call's fence was stamped. The first landing's segment's fence stamp (T5 at
    ``executor.fence``, ``non_idempotent_write``) applied after the reaper's invocation had read its
    snapshot (T12), in which the row was stale and carried no fence; the reaper's requeue (T13, which
    re-checks only staleness: no pending_effect predicate) applied after the stamp, while the store's row
    held the fence, cleared it and re-dispatched the run; a later attempt (a claim of the run by the
    second landing's process, after the requeue) then ran the same call again.
    Not a requeue after the write completed and cleared its fence (F-01), not a stale suspend (F-13),
    not a reaper that read the fence (it dead-letters, spec 5.1 3a)."""
    landings = [op for op in _witness(ix, verdict) if op.op == H.LANDING]
    if verdict.name != "non_idempotent_at_most_once" or len(landings) != 2:
        return False
    first, second = landings
    rows = _rows_of_run(ix, first.run)
    stamps = [
        op
        for op in rows
        if op.index < first.index
        and op.process == first.get("process")
        and ix.number(op) == "T5"
        and op.get("site") == "executor.fence"
        and row_of(op).get("pending_effect") == NON_IDEMPOTENT_WRITE
    ]
    if not stamps:
        return False
    stamp = stamps[-1]
    for requeue in rows:
        if not (stamp.index < requeue.index < second.index) or ix.number(requeue) != "T13":
            continue
        if requeue.get("actor") != "reaper":
            continue
        before = ix.row_before(first.run, requeue.index)
        if before is None or row_of(before).get("pending_effect") != NON_IDEMPOTENT_WRITE:
            continue  # the fence no longer stood when the requeue applied: another route
        select = _tick_snapshot(ix, requeue)
        if select is None or not select.index < stamp.index:
            continue
        listed = dict(zip(select.get("result") or (), select.get("fences") or (), strict=False))
        if first.run in listed and listed[first.run] == "" and _claimed_between(ix, rows, second, requeue.index):
            return True
    return False


def _claimed_between(ix: Index, rows: list[Op], landing: Op, after: int) -> bool:
    """The process whose call made ``landing`` claimed the run (T3 or T10, a matched row) after record
    ``after`` and before the landing: the attempt that ran the call again started from that requeue."""
    caller = landing.get("process")
    return any(after < op.index < landing.index and op.process == caller and ix.number(op) in _CLAIMS for op in rows)


def reaper_dispatch_settle_over_new_owner(ix: Index, verdict: Verdict) -> bool:
    """F-17: the reaper requeued the run (its own T13, its last row of the run), the wake-up dispatch
    after it threw, and the settleFailed that follows (spec 9 C6: a plain T7, no owner guard, no
    staleness predicate) committed over the RUNNING row of a segment that had claimed the requeued run
    (T3 or T10 after the requeue, by the process that wrote the row the settle overwrote) in the meantime (with a spare
    wake-up: a duplicate or late delivery of an earlier one), within the latency of the reaper's
    MAX(sequence) read and settle, or while that settle stalled."""
    found = _settle_over_claim(ix, verdict, frozenset({"reaper.dispatch_failed"}))
    if found is None:
        return False
    prior, settle = found
    rows = _rows_of_run(ix, settle.run)
    own = [op for op in rows if op.index < settle.index and op.process == settle.process]
    if not own or ix.number(own[-1]) != "T13":
        return False
    requeue = own[-1]
    claimed = any(
        ix.number(op) in _CLAIMS and op.process == prior.process
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


__all__ = [
    "lagging_clock_dead_letter",
    "reaper_dispatch_settle_over_new_owner",
    "stale_snapshot_requeue_reruns_write",
    "stalled_position_read_settle",
]
