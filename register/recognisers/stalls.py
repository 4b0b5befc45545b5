"""Recognisers of stalled store calls overtaken by a new owner: a fence stamp, a resume's event, a
settle or a position read that lands after the lease moved on, and a store error read as a lost
lease."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from checks import Index, Verdict
from checks import history as H
from checks.history import Op, OpType
from checks.index import row_of
from checks.own import number
from model.constants import LEASE_S
from model.statements import (
    CLAIM_FOR_RESUME,
    CLAIM_QUEUED,
    CLAIMS,
    FINISH_RUN,
    OWNER_GUARDED,
    REQUEUE_STALE,
    SUSPEND_RUN,
)
from register.recognisers.common import (
    CLAIM_STATEMENTS,
    UNCHECKED_SETTLE_SITES,
    invoke_of,
    lagging,
    own_expired_stamp,
    reaper_tick,
    rows_of_run,
    settle_over_claim,
    stale_fence_dead_letter,
    witness_of,
)


def stalled_fence_stamp(ix: Index, verdict: Verdict) -> bool:
    """F-11: the write ran under its own segment's fence stamp (T5), whose statement stalled in the
    store (a ``store`` slow fault on it) past the lease it was computing: ``lease_expires = now + 900``
    was read before the statement, the statement committed after that moment (T5 has no lease-expiry
    predicate), and the tool ran at once under a lease already past. Had the statement committed
    when issued, the lease would have covered the call (with a lagging clock also corrected, when
    the stamping process had one)."""
    found = own_expired_stamp(ix, verdict)
    if found is None:
        return False
    issued, stamp, invoke = found
    stalled = any(
        fault.get("family") == "store" and fault.get("kind") == "slow" and fault.get("target") == stamp.process
        for fault in ix.of_type(H.FAULT, OpType.INFO)
        if issued.index < fault.index < stamp.index
    )
    if not stalled:
        return False
    lease = ix.time_of(float(row_of(stamp).get("lease_expires") or 0))
    if lagging(ix, stamp.process, issued.index):
        lease = max(lease, float(int(issued.time_s) + LEASE_S))
    return lease + 1 >= invoke.time_s - (stamp.time_s - issued.time_s)


_RESUME_EVENT_KINDS = frozenset({"approval", "input"})


def stalled_resume_event(ix: Index, verdict: Verdict) -> bool:
    """F-10: one of the colliding events is a resume's approval (or input) event, which the resume
    coordinator stores after its claim (T10) with no renewal in between; the reaper requeued the run
    (T13) between that claim and the event (a store statement of the resume stalled past the lease),
    so the event landed in the stream of the attempt that claimed the run next."""
    events = [op for op in witness_of(ix, verdict) if op.op == H.EVENT]
    if len(events) != 2 or events[0].process == events[1].process:
        return False
    for event in events:
        if event.get("kind") not in _RESUME_EVENT_KINDS:
            continue
        own = [op for op in rows_of_run(ix, event.run) if op.index < event.index and op.process == event.process]
        if not own or ix.number(own[-1]) != CLAIM_FOR_RESUME:
            continue
        claim = own[-1]
        if any(
            claim.index < op.index < event.index and ix.number(op) == REQUEUE_STALE for op in rows_of_run(ix, event.run)
        ):
            return True
    return False


def stalled_settle_over_new_owner(ix: Index, verdict: Verdict) -> bool:
    """F-12: an unguarded pre-execution settleFailed (spec 3.1: runQueued's position/rehydration
    failures, the resume coordinator's own failures; ownedBy null) was issued by a segment right
    after its own claim (T3 or T10), before any other change to the row; the statement stalled in
    the store until the row had passed to another segment, and its WHERE (non-terminal status only)
    then matched that segment's RUNNING row. The row passes on by either route of
    :func:`_handed_on`: the reaper's requeue, or an earlier holder's stale suspend."""
    if verdict.name == WRITE_ACCOUNTED:
        return _writer_audit_lost(ix, verdict, stalled_settle_over_new_owner)
    found = _settle_issued_before(ix, verdict, UNCHECKED_SETTLE_SITES)
    if found is None:
        return False
    settle, own, later = found
    return ix.number(own) in (CLAIM_QUEUED, CLAIM_FOR_RESUME) and _handed_on(ix, settle, own, later)


def _handed_on(ix: Index, settle: Op, own: Op, later: list[Op]) -> bool:
    """Whether the rows written between the settling segment's claim ``own`` and its stalled settle
    hand the run to another segment: the reaper requeued it (T13) and another segment claimed it; or
    an earlier holder suspended it (T9, no owner guard: spec 9 C12; the executor's suspend or a resume's
    release), that is a process whose own last claim of the run came before ``own``, so its T9 put the
    settling segment's RUNNING row back to waiting, and a resume claimed it (T10) after that. A T9 by a
    process that held the run only after ``own``, or never, is no such route."""
    if any(ix.number(op) == REQUEUE_STALE for op in later):
        return any(ix.number(op) in CLAIM_STATEMENTS and op.process != settle.process for op in later)
    rows = rows_of_run(ix, settle.run)
    for suspend in (op for op in later if ix.number(op) == SUSPEND_RUN and op.process != settle.process):
        claims = [
            op for op in rows if op.index < suspend.index and op.process == suspend.process and ix.number(op) in CLAIMS
        ]
        if not claims or claims[-1].index > own.index:
            continue
        if any(
            ix.number(op) == CLAIM_FOR_RESUME and op.index > suspend.index and op.process != settle.process
            for op in later
        ):
            return True
    return False


def _settle_issued_before(ix: Index, verdict: Verdict, sites: frozenset[str]) -> tuple[Op, Op, list[Op]] | None:
    """For a ``settles_by_owner`` witness (prior row, settle): when the settle is a T7 from one of
    ``sites`` by a process other than the prior row's writer, and its statement was issued before
    every row change since that process's own last row change: (the settle, that own row, the rows
    written between it and the settle)."""
    found = settle_over_claim(ix, verdict, sites)
    if found is None:
        return None
    _, settle = found
    issued = invoke_of(ix, settle)
    if issued is None:
        return None
    rows = rows_of_run(ix, settle.run)
    own = [op for op in rows if op.index < issued.index and op.process == settle.process]
    if not own:
        return None
    later = [op for op in rows if own[-1].index < op.index < settle.index]
    if not later or any(op.index < issued.index for op in later):
        return None
    return settle, own[-1], later


_POSITION_FAILED_SITES = frozenset({"run_queued.position_failed", "resume.position_failed"})


_POSITION_READ_SITES = frozenset({"run_queued.position", "resume.position"})


_RELEASE_FAILED_SITE = "resume.release_failed"


def stalled_position_read_settle(ix: Index, verdict: Verdict) -> bool:
    """F-15: a segment claimed the run (T3 by runQueued, or T10 by a resume) and its post-claim
    position read (the fresh FindRun / MAX(sequence) of spec 3.1) stalled in the store: a ``store``
    slow fault struck that process after its claim and before the reaper's requeue (T13). Meanwhile
    another segment claimed the run. The segment then went on without a lease check to one of its
    unguarded pre-execution settles (ownedBy null), issued after that other claim, which failed the
    other segment's RUNNING row. The settle comes by either route of spec 3.1:

    - the stalled read failed (``position_failed``); or
    - a resume's read returned, the resume refused to go on and its release (T9, spec 3.1 "failed
      release") threw, so ``release_failed`` settled (``ResumeCoordinator::release``): the release
      and the post-claim read both completed after the other claim.

    Not F-12, where the settle statement itself stalled and was issued before the other claim."""
    if verdict.name == WRITE_ACCOUNTED:
        return _writer_audit_lost(ix, verdict, stalled_position_read_settle)
    found = settle_over_claim(ix, verdict, _POSITION_FAILED_SITES | {_RELEASE_FAILED_SITE})
    if found is None:
        return False
    _, settle = found
    rows = rows_of_run(ix, settle.run)
    own = [op for op in rows if op.index < settle.index and op.process == settle.process]
    if not own or ix.number(own[-1]) not in CLAIM_STATEMENTS:
        return False
    claim = own[-1]
    between = [op for op in rows if claim.index < op.index < settle.index]
    requeues = [op for op in between if ix.number(op) == REQUEUE_STALE]
    reclaims = [op for op in between if ix.number(op) in CLAIM_STATEMENTS and op.process != settle.process]
    issued = invoke_of(ix, settle)
    if not requeues or not reclaims or issued is None or issued.index < reclaims[0].index:
        return False
    stalled = any(
        fault.get("family") == "store" and fault.get("kind") == "slow" and fault.get("target") == settle.process
        for fault in ix.of_type(H.FAULT, OpType.INFO)
        if claim.index < fault.index < requeues[0].index
    )
    if settle.get("site") == _RELEASE_FAILED_SITE:
        return stalled and _release_failed_after(ix, settle, reclaims[0], issued)
    read_failed = any(
        read.process == settle.process and read.run == settle.run and read.get("site") in _POSITION_READ_SITES
        for read in ix.of_type(H.READ, OpType.FAIL)
        if reclaims[0].index < read.index < issued.index
    )
    return stalled and read_failed


def _release_failed_after(ix: Index, settle: Op, reclaim: Op, issued: Op) -> bool:
    """Whether the resume behind a ``release_failed`` settle read its post-claim position after the
    other segment's claim ``reclaim`` (the stalled read returned then) and its release (T9 at
    ``resume.release``) threw after that, before the settle was issued."""
    position_read = any(
        read.process == settle.process and read.run == settle.run and read.get("site") == "resume.position"
        for read in ix.of_type(H.READ, OpType.OK)
        if reclaim.index < read.index < issued.index
    )
    release_threw = any(
        op.process == settle.process
        and op.run == settle.run
        and number(op) == SUSPEND_RUN
        and op.get("site") == "resume.release"
        for op in ix.of_type(H.STORE, OpType.FAIL)
        if reclaim.index < op.index < issued.index
    )
    return position_read and release_threw


WRITE_ACCOUNTED = "every_write_accounted"
_TERMINAL = frozenset({"completed", "failed", "cancelled"})


def _writer_audit_lost(ix: Index, verdict: Verdict, settle_is: Callable[[Index, Verdict], bool]) -> bool:
    """The ``every_write_accounted`` route of F-12 and F-15: a write landed and its tool event was not
    stored; the writing segment still held the run (the row before the run's terminal settle is its
    own), but that terminal settle was another segment's unguarded pre-execution settle which
    ``settle_is`` recognises, judged as the ``settles_by_owner`` violation it is (the row before it, the
    settle); the writer's own fail-closed settle (T7) came after and matched nothing, so the row never
    records that a write may be unaudited (spec 3.6's fail-closed rule lost to the settle over it)."""
    ops = witness_of(ix, verdict)
    if len(ops) != 2 or ops[0].op != H.LANDING or ops[1].op != H.FINAL:
        return False
    landing = ops[0]
    writer = landing.get("process")
    rows = rows_of_run(ix, landing.run)
    ends = [op for op in rows if op.index > landing.index and row_of(op).get("status") in _TERMINAL]
    if not ends:
        return False
    settle = ends[0]
    before = [op for op in rows if op.index < settle.index]
    if not before or before[-1].process != writer or settle.process == writer:
        return False
    as_settle = replace(verdict, name="settles_by_owner", witness=(before[-1].index, settle.index))
    if not settle_is(ix, as_settle):
        return False
    return any(
        op.process == writer and op.run == landing.run and number(op) == FINISH_RUN and not op.get("matched")
        for op in ix.of_type(H.STORE, OpType.OK)
        if op.index > settle.index
    )


_LEASE_STATEMENTS = OWNER_GUARDED


def store_error_lease_lost(ix: Index, verdict: Verdict) -> bool:
    """A segment's renewal, fence stamp, settle or requeue threw a store error while the row was still
    its own, and the runtime reported LEASE_LOST: the persister turns the exception into false and the
    executor (or recovery) reads false as a lost lease (spec T4, T5, 2 header, 3.5, 5.2). Not a
    statement that matched (KB-6's no-op renewal) or one refused on a row the segment held."""
    ops = witness_of(ix, verdict)
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


def stalled_clear_dead_letter(ix: Index, verdict: Verdict) -> bool:
    """F-21: the reaper dead-lettered a run ``not_retryable`` (T14) on its snapshot's non-idempotent
    fence, which the segment holding the run cleared after the snapshot (:func:`stale_fence_dead_letter`);
    the clear (T5 with '' at the write's boundary) was issued before the invocation read its ``now`` and
    stalled in the store (a ``store`` slow fault on it) past the lease it computed, so it committed after
    the snapshot with ``lease_expires = now + 900`` from its issue already past, and it is the row T14
    found: the staleness re-check passed with every clock true. The window between snapshot and
    dead-letter is the invocation's earlier rows (a stalled statement, or on the Sync transport the
    attempts it runs inline). Not F-16's route (a lagging clock) nor F-20's (a reaper clock ahead)."""
    found = stale_fence_dead_letter(ix, verdict)
    if found is None:
        return False
    prior, dead_letter, _, clear = found
    issued = invoke_of(ix, clear)
    tick = reaper_tick(ix, dead_letter)
    lease = row_of(clear).get("lease_expires")
    if clear is not prior or issued is None or tick is None or not isinstance(lease, (int, float)) or lease <= 0:
        return False
    stalled = any(
        fault.get("family") == "store" and fault.get("kind") == "slow" and fault.get("target") == clear.process
        for fault in ix.of_type(H.FAULT, OpType.INFO)
        if issued.index < fault.index < clear.index
    )
    at = ix.time_of(lease)
    true_clock = at >= int(issued.time_s) + LEASE_S - 1
    return stalled and true_clock and at < clear.time_s and at < int(tick.time_s) and issued.time_s < tick.time_s


__all__ = [
    "stalled_clear_dead_letter",
    "stalled_fence_stamp",
    "stalled_position_read_settle",
    "stalled_resume_event",
    "stalled_settle_over_new_owner",
    "store_error_lease_lost",
]
