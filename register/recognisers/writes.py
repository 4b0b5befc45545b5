"""Recognisers of writes that ran twice or ran unrecorded: a completed write re-run, a write whose
failed audit was retried or lost, a stale suspension or a stale reaper snapshot that re-runs a
non-idempotent write, and the fence clear that did not persist."""

from __future__ import annotations

from collections.abc import Iterable

from checks import Index, Verdict
from checks import history as H
from checks.history import Op, OpType
from checks.index import NON_IDEMPOTENT_WRITE, WRITE_EFFECTS, row_of
from model.statements import (
    CANCEL,
    CLAIM_FOR_RESUME,
    CLAIM_QUEUED,
    DEAD_LETTER_STALE,
    MARK_PENDING_EFFECT,
    REQUEUE_STALE,
    REQUEUES,
    SUSPEND_RUN,
)
from register.recognisers.common import (
    CLAIM_STATEMENTS,
    invoke_of,
    rows_of_run,
    tick_snapshot,
    witness_of,
)


def _first_row_after(rows: Iterable[Op], index: int, process: str) -> Op | None:
    """The first row after ``index`` written by ``process`` (ground truth: the identity a process
    presents can change under the identity fault, the process that wrote cannot)."""
    for op in rows:
        if op.index > index and op.process == process:
            return op
    return None


def completed_write_rerun(ix: Index, verdict: Verdict) -> bool:
    """F-01: the first landing's segment cleared its fence (the write completed), and only then
    was the run requeued (T11 by recovery or T13 by the reaper) and run again from round 1."""
    landings = [op for op in witness_of(ix, verdict) if op.op == H.LANDING]
    if len(landings) != 2:
        return False
    first, second = landings
    if _audit_failed(ix, first.run, first.get("execution")):
        return False
    rows = rows_of_run(ix, first.run)
    clear = _first_row_after(rows, first.index, str(first.get("process")))
    if clear is None or ix.number(clear) != MARK_PENDING_EFFECT or row_of(clear).get("pending_effect") != "":
        return False
    return any(clear.index < op.index < second.index and ix.number(op) in REQUEUES for op in rows)


def _audit_failed(ix: Index, run: str, execution: object) -> bool:
    """Whether an audit insert of ``execution``'s tool step failed."""
    return any(
        op.run == run and op.get("execution") == execution and op.get("kind") == "tool"
        for op in ix.of_type(H.EVENT, OpType.FAIL)
    )


def _failed_write_audits(ix: Index, run: str) -> list[Op]:
    return [
        op
        for op in ix.of_type(H.EVENT, OpType.FAIL)
        if op.run == run and op.get("kind") == "tool" and op.get("true_effect") in WRITE_EFFECTS
    ]


_REAPED = REQUEUES | {DEAD_LETTER_STALE}


def failed_write_audit_requeued(ix: Index, verdict: Verdict) -> bool:
    """F-06: a write's audit insert failed, and the next change to the run's row is the reaper's
    (or a requeue), not the fail-closed settle: that settle was lost (it threw, or the segment died)
    while the fence was already cleared, so the reaper reclaimed the run and it ran again — or, with
    no stored request, dead-lettered it with nothing on the row recording the audit failure."""
    witness = witness_of(ix, verdict)
    if not witness:
        return False
    run = witness[0].run
    executions = {op.get("execution") for op in witness if op.op in (H.LANDING, H.EVENT)}
    rows = rows_of_run(ix, run)
    for failure in _failed_write_audits(ix, run):
        if executions and failure.get("execution") not in executions:
            continue
        following = [op for op in rows if op.index > failure.index]
        if following and ix.number(following[0]) in _REAPED:
            return True
    return False


def cancelled_run_write_audit_lost(ix: Index, verdict: Verdict) -> bool:
    """F-07: the landed write's audit insert failed and a user cancel made the row terminal before
    the fail-closed settle could fail it (the cancel came first and the probe persisted the step, or
    it landed between the failed insert and the dead-letter): the run ends CANCELLED with no tool
    event for the write and no audit failure recorded."""
    landings = [op for op in witness_of(ix, verdict) if op.op == H.LANDING]
    finals = [op for op in witness_of(ix, verdict) if op.op == H.FINAL]
    if len(landings) != 1 or len(finals) != 1 or row_of(finals[0]).get("status") != "cancelled":
        return False
    landing = landings[0]
    return _audit_failed(ix, landing.run, landing.get("execution")) and any(
        ix.number(op) == CANCEL for op in rows_of_run(ix, landing.run)
    )


def unaudited_landed_write(ix: Index, verdict: Verdict) -> bool:
    """F-02: the landed execution never even reached its audit insert: its segment stopped
    between the landing and the tool step's record — the process that ran the tool died (it never
    inserted the step), or its next statement on the run (the boundary's renewal or clear) failed or
    matched nothing (the lease was lost: reaped mid-call, re-claimed, or cancelled)."""
    landings = [op for op in witness_of(ix, verdict) if op.op == H.LANDING]
    if len(landings) != 1:
        return False
    landing = landings[0]
    key = (landing.run, landing.get("execution"))
    if any((op.run, op.get("execution")) == key for op in ix.all(H.EVENT) if op.get("kind") == "tool"):
        return False
    process = landing.get("process")
    after = [
        op
        for op in ix.all(H.STORE)
        if op.index > landing.index and op.run == landing.run and op.process == process and op.type is not OpType.INVOKE
    ]
    following = after[0] if after else None
    died = any(op.get("process") == process and op.index > landing.index for op in ix.of_type(H.CRASH, OpType.INFO))
    lost = following is not None and (following.type is OpType.FAIL or not following.get("matched"))
    return died or lost


def stale_suspend_reruns_write(ix: Index, verdict: Verdict) -> bool:
    """F-13: a suspend (T9) that a segment had issued before another segment claimed the run
    committed late (spec 9 C12: suspension has no owner guard) over the RUNNING row of a later
    attempt that had already executed the non-idempotent write: the run went back to waiting for
    approval of that turn with the write's fence still standing, and the segment that claimed the
    approval (T10) ran the write again.

    Through ``non_idempotent_at_most_once``: the stale suspend lies between the two landings and the
    second landing's process claimed the approval after it. Through ``fence_matches_inflight_write``:
    the claim whose read met the previous attempt's fence followed the stale suspend."""
    ops = witness_of(ix, verdict)
    if verdict.name == "fence_matches_inflight_write":
        claims = [op for op in ops if op.op == H.STORE and ix.number(op) == CLAIM_FOR_RESUME]
        stamps = [op for op in ops if op.op == H.STORE and ix.number(op) == MARK_PENDING_EFFECT]
        if len(claims) != 1 or len(stamps) != 1:
            return False
        before = [op for op in rows_of_run(ix, claims[0].run) if op.index < claims[0].index]
        return bool(before) and ix.number(before[-1]) == SUSPEND_RUN and _stale_suspend(ix, before[-1], stamps[0].index)
    landings = [op for op in ops if op.op == H.LANDING]
    if len(landings) != 2:
        return False
    first, second = landings
    rows = rows_of_run(ix, first.run)
    return any(
        first.index < suspend.index < second.index
        and ix.number(suspend) == SUSPEND_RUN
        and _stale_suspend(ix, suspend, first.index)
        and any(
            suspend.index < op.index < second.index
            and ix.number(op) == CLAIM_FOR_RESUME
            and op.process == second.get("process")
            for op in rows
        )
        for suspend in rows
    )


def _stale_suspend(ix: Index, suspend: Op, before: int) -> bool:
    """Whether ``suspend`` (a T9 row) was issued before another process claimed the run (T3 or T10)
    at an index below ``before``: the suspend overtook a later attempt."""
    issued = invoke_of(ix, suspend)
    if issued is None:
        return False
    return any(
        issued.index < op.index < before
        and ix.number(op) in (CLAIM_QUEUED, CLAIM_FOR_RESUME)
        and op.process != suspend.process
        for op in rows_of_run(ix, suspend.run)
    )


def clear_not_persisted(ix: Index, verdict: Verdict) -> bool:
    """Spec 7.2: the write returned but its fence clear never persisted (the T5 failed, matched
    nothing, or the process died first), and the run then ended FAILED with the fence standing."""
    ops = witness_of(ix, verdict)
    if len(ops) != 4 or row_of(ops[3]).get("status") != "failed":
        return False
    call, returned, terminal = ops[1], ops[2], ops[3]
    identity = call.get("identity")
    return not any(
        returned.index < op.index < terminal.index
        and op.run == call.run
        and op.get("identity") == identity
        and ix.number(op) == MARK_PENDING_EFFECT
        and row_of(op).get("pending_effect") == ""
        for op in ix.rows
    )


def stale_snapshot_requeue_reruns_write(ix: Index, verdict: Verdict) -> bool:
    """F-18: a non-idempotent call landed twice because the reaper requeued its run on a snapshot taken
    before the call's fence was stamped. The first landing's segment's fence stamp (T5 at
    ``executor.fence``, ``non_idempotent_write``) applied after the reaper's invocation had read its
    snapshot (T12), in which the row was stale and carried no fence; the reaper's requeue (T13, which
    re-checks only staleness: no pending_effect predicate) applied after the stamp, while the store's row
    held the fence, cleared it and re-dispatched the run; a later attempt (a claim of the run by the
    second landing's process, after the requeue) then ran the same call again.
    Not a requeue after the write completed and cleared its fence (F-01), not a stale suspend (F-13),
    not a reaper that read the fence (it dead-letters, spec 5.1 3a). The first attempt's call may land
    after the second's (a call slower than the whole next attempt): the landings are tried in both orders."""
    landings = [op for op in witness_of(ix, verdict) if op.op == H.LANDING]
    if verdict.name != "non_idempotent_at_most_once" or len(landings) != 2:
        return False
    return _snapshot_requeue_reran(ix, landings[0], landings[1]) or _snapshot_requeue_reran(
        ix, landings[1], landings[0]
    )


def _snapshot_requeue_reran(ix: Index, first: Op, second: Op) -> bool:
    """F-18's route with ``first`` the landing of the attempt whose fence the requeue cleared and
    ``second`` the landing of the attempt that claimed the run after that requeue."""
    rows = rows_of_run(ix, first.run)
    stamps = [
        op
        for op in rows
        if op.index < first.index
        and op.process == first.get("process")
        and ix.number(op) == MARK_PENDING_EFFECT
        and op.get("site") == "executor.fence"
        and row_of(op).get("pending_effect") == NON_IDEMPOTENT_WRITE
    ]
    if not stamps:
        return False
    stamp = stamps[-1]
    for requeue in rows:
        if not (stamp.index < requeue.index < second.index) or ix.number(requeue) != REQUEUE_STALE:
            continue
        if requeue.get("actor") != "reaper":
            continue
        before = ix.row_before(first.run, requeue.index)
        if before is None or row_of(before).get("pending_effect") != NON_IDEMPOTENT_WRITE:
            continue  # the fence no longer stood when the requeue applied: another route
        select = tick_snapshot(ix, requeue)
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
    return any(
        after < op.index < landing.index and op.process == caller and ix.number(op) in CLAIM_STATEMENTS for op in rows
    )


__all__ = [
    "cancelled_run_write_audit_lost",
    "clear_not_persisted",
    "completed_write_rerun",
    "failed_write_audit_requeued",
    "stale_snapshot_requeue_reruns_write",
    "stale_suspend_reruns_write",
    "unaudited_landed_write",
]
