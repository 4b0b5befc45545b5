"""Recognisers of the findings the deployment-range grid and swarm met (issue 18: F-15 .. F-17).

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
from scenarios.findings.witness import _invoke_of, _lagging, _rows_of_run, _witness

_CLAIMS = ("T3", "T10")
_POSITION_FAILED_SITES = frozenset({"run_queued.position_failed", "resume.position_failed"})
_POSITION_READ_SITES = frozenset({"run_queued.position", "resume.position"})


def _settle_over_claim(ix: Index, verdict: Verdict, sites: frozenset[str]) -> tuple[Op, Op] | None:
    """For a ``settles_by_owner`` witness (prior row, settle): (prior, settle) when the settle is a T7
    from one of ``sites`` and the prior row was written by another process."""
    ops = _witness(ix, verdict)
    if len(ops) != 2 or ops[1].op != H.STORE or ix.number(ops[1]) != "T7":
        return None
    prior, settle = ops
    if settle.get("site") not in sites or prior.process == settle.process:
        return None
    return prior, settle


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


def lagging_clock_dead_letter(ix: Index, verdict: Verdict) -> bool:
    """F-16: the reaper selected a run whose lease looked stale, read its non-idempotent fence in the
    snapshot and issued its dead-letter (T14, ``not_retryable``); before that statement committed, the
    live segment holding the run cleared the fence (its boundary T5 after the write returned). The
    clear renews the lease, which would make T14's staleness re-check refuse, but the segment's clock
    lagged (a ``clock_skew`` fault with a negative offset), so the renewed lease was still in the past
    in true time: the re-check passed and the run was dead-lettered for a fence that no longer stood."""
    ops = _witness(ix, verdict)
    if len(ops) != 2 or ops[1].op != H.STORE or ix.number(ops[1]) != "T14":
        return False
    clear, dead_letter = ops
    if row_of(dead_letter).get("termination_reason") != "not_retryable" or ix.number(clear) != "T5":
        return False
    row = row_of(clear)
    if row.get("pending_effect") != "" or clear.process == dead_letter.process:
        return False
    issued = _invoke_of(ix, dead_letter)
    if issued is None or not issued.index < clear.index:
        return False
    snapshot = [
        op
        for op in ix.of_type(H.DECIDE, OpType.OK)
        if op.process == dead_letter.process and op.run == dead_letter.run and op.index < issued.index
    ]
    if not snapshot or snapshot[-1].get("pending_effect") != NON_IDEMPOTENT_WRITE:
        return False
    lease = row.get("lease_expires")
    past = isinstance(lease, (int, float)) and lease > 0 and ix.time_of(lease) < clear.time_s
    return past and _lagging(ix, clear.process, clear.index)


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


__all__ = ["lagging_clock_dead_letter", "reaper_dispatch_settle_over_new_owner", "stalled_position_read_settle"]
