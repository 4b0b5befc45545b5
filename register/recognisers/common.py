"""What the recognisers share: the witness records of a verdict, the invoke of a completion, a run's
rows, and the few routes several mechanisms take (a lagging clock, a settle over a new owner's claim,
the reaper's snapshot of a row).

Every recogniser is a pure function of one judged history (through the shared invariant index) and
the verdict of the violated invariant: it reads the records the verdict names as its witness and
checks the interleaving an entry's write-up describes, read from ground truth (which process wrote a
row, which fault struck whom, what a decider read), never from the runtime's own labels alone, so
that a new mechanism with the same symptom stays unexplained.
"""

from __future__ import annotations

from collections.abc import Callable

from checks import Index, Verdict
from checks import history as H
from checks.history import Op, OpType
from checks.index import NON_IDEMPOTENT_WRITE, row_of
from model.statements import CLAIM_FOR_RESUME, CLAIM_QUEUED, DEAD_LETTER_STALE, FINISH_RUN, MARK_PENDING_EFFECT

Recogniser = Callable[[Index, Verdict], bool]


def witness_of(ix: Index, verdict: Verdict) -> list[Op]:
    return [ix.history[i] for i in verdict.witness if 0 <= i < len(ix.history)]


def invoke_of(ix: Index, completion: Op) -> Op | None:
    """The invoke record that ``completion`` completed (same op type): where a statement or a
    segment was issued, as opposed to where it took effect."""
    completions = ix.completions
    return next((i for i in ix.of_type(completion.op, OpType.INVOKE) if completions.get(i.index) is completion), None)


def rows_of_run(ix: Index, run: str) -> list[Op]:
    return [op for op in ix.rows if op.run == run]


def own_expired_stamp(ix: Index, verdict: Verdict) -> tuple[Op, Op, Op] | None:
    """(the stamp's invoke, the stamp, the write's invoke) when the write ran under its own
    segment's fence stamp with only the lease wrong: already past when the tool was invoked."""
    witness = witness_of(ix, verdict)
    stores = [op for op in witness if op.op == H.STORE]
    invokes = [op for op in witness if op.op == H.TOOL]
    if len(stores) != 1 or len(invokes) != 1:
        return None
    stamp, invoke = stores[0], invokes[0]
    row = row_of(stamp)
    lease = row.get("lease_expires")
    own = (
        ix.number(stamp) == MARK_PENDING_EFFECT
        and stamp.get("site") == "executor.fence"
        and stamp.process == invoke.process
        and row.get("status") == "running"
        and row.get("claimed_by") == invoke.get("identity")
        and row.get("pending_effect") == invoke.get("true_effect")
    )
    if not own or not isinstance(lease, (int, float)) or ix.time_of(lease) >= invoke.time_s:
        return None
    issued = invoke_of(ix, stamp)
    return None if issued is None else (issued, stamp, invoke)


def lagging(ix: Index, process: str, index: int) -> bool:
    """Whether a ``clock_skew`` fault set a negative offset on ``process`` before ``index`` that is
    still (or was, up to the last fault before ``index``) in force: not reset by the quiet phase."""
    quiet = [op.index for op in ix.of_type(H.PHASE, OpType.INFO) if op.get("phase") == "quiet" and op.index < index]
    offsets = [
        float(fault.get("offset_s") or 0.0)
        for fault in ix.of_type(H.FAULT, OpType.INFO)
        if fault.index < index
        and fault.get("family") == "clock_skew"
        and fault.get("target") == process
        and not (quiet and fault.index < quiet[-1])
    ]
    return any(offset < 0 for offset in offsets[-2:])


def settle_over_claim(ix: Index, verdict: Verdict, sites: frozenset[str]) -> tuple[Op, Op] | None:
    """For a ``settles_by_owner`` witness (prior row, settle): (prior, settle) when the settle is a T7
    from one of ``sites`` and the prior row was written by another process."""
    ops = witness_of(ix, verdict)
    if len(ops) != 2 or ops[1].op != H.STORE or ix.number(ops[1]) != FINISH_RUN:
        return None
    prior, settle = ops
    if settle.get("site") not in sites or prior.process == settle.process:
        return None
    return prior, settle


UNCHECKED_SETTLE_SITES = frozenset(
    {
        "resume.position_failed",
        "resume.state_unreadable",
        "resume.release_failed",
        "run_queued.position_failed",
        "run_queued.rehydration_failed",
    }
)


CLAIM_STATEMENTS = (CLAIM_QUEUED, CLAIM_FOR_RESUME)


def tick_snapshot(ix: Index, dead_letter: Op) -> Op | None:
    """The SelectStale read (T12) of the reaper invocation that issued ``dead_letter``: the process's last
    before the statement."""
    reads = [
        op
        for op in ix.of_type(H.READ, OpType.OK)
        if op.process == dead_letter.process and op.get("what") == "SelectStale" and op.index < dead_letter.index
    ]
    return reads[-1] if reads else None


def reaper_decision(ix: Index, statement: Op, select: Op) -> Op | None:
    """The note the reaper made about ``statement``'s run on its snapshot (``decide`` by the same
    process, after the invocation's SelectStale and before the statement): what it read and chose."""
    notes = [
        op
        for op in ix.of_type(H.DECIDE, OpType.OK)
        if op.process == statement.process and op.run == statement.run and select.index < op.index < statement.index
    ]
    return notes[-1] if notes else None


def stale_fence_dead_letter(ix: Index, verdict: Verdict) -> tuple[Op, Op, Op, Op] | None:
    """For a ``dead_letter_reason_matches_cause`` witness (prior row, reaper dead-letter): (the row before
    the dead-letter, the dead-letter, the invocation's snapshot, the segment's fence clear) when the reaper
    dead-lettered the run ``not_retryable`` (T14) on a snapshot (T12) and a decision that read a
    non-idempotent fence, and the process that stamped that fence cleared it (its boundary T5 with '')
    after the snapshot; the row the dead-letter found was written after that by the same process (the
    clear, or a renewal) or is a claim of the run by another one (after a requeue): the reason names a
    fence that no longer stood (spec 5.1: decisions use the snapshot; T14 has no pending_effect
    predicate). What let the staleness re-check pass is each finding's own route."""
    ops = witness_of(ix, verdict)
    if verdict.name != "dead_letter_reason_matches_cause" or len(ops) != 2:
        return None
    prior, dead_letter = ops
    if dead_letter.op != H.STORE or ix.number(dead_letter) != DEAD_LETTER_STALE or dead_letter.get("actor") != "reaper":
        return None
    if row_of(dead_letter).get("termination_reason") != "not_retryable":
        return None
    if row_of(prior).get("pending_effect") != "" or prior.process == dead_letter.process:
        return None
    select = tick_snapshot(ix, dead_letter)
    if select is None:
        return None
    listed = dict(zip(select.get("result") or (), select.get("fences") or (), strict=False))
    if listed.get(dead_letter.run) != NON_IDEMPOTENT_WRITE:
        return None
    note = reaper_decision(ix, dead_letter, select)
    if note is None or note.get("pending_effect") != NON_IDEMPOTENT_WRITE:
        return None
    rows = rows_of_run(ix, dead_letter.run)
    stamps = [
        op
        for op in rows
        if op.index < select.index
        and ix.number(op) == MARK_PENDING_EFFECT
        and row_of(op).get("pending_effect") == NON_IDEMPOTENT_WRITE
    ]
    if not stamps:
        return None
    holder = stamps[-1].process
    clears = [
        op
        for op in rows
        if select.index < op.index <= prior.index
        and ix.number(op) == MARK_PENDING_EFFECT
        and op.process == holder
        and row_of(op).get("pending_effect") == ""
    ]
    if not clears:
        return None
    if prior.process != holder and ix.number(prior) not in CLAIM_STATEMENTS:
        return None
    return prior, dead_letter, select, clears[0]


def reaper_tick(ix: Index, statement: Op) -> Op | None:
    """The reaper invocation (segment ``reap``) a statement belongs to: the process's last before it."""
    ticks = [
        op
        for op in ix.of_type(H.SEGMENT, OpType.INVOKE)
        if op.process == statement.process and op.get("entry") == "reap" and op.index < statement.index
    ]
    return ticks[-1] if ticks else None


__all__ = [
    "CLAIM_STATEMENTS",
    "UNCHECKED_SETTLE_SITES",
    "Recogniser",
    "invoke_of",
    "lagging",
    "own_expired_stamp",
    "reaper_decision",
    "reaper_tick",
    "rows_of_run",
    "settle_over_claim",
    "stale_fence_dead_letter",
    "tick_snapshot",
    "witness_of",
]
