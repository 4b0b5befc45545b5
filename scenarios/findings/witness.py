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

from model import history as H
from model.constants import LEASE_S
from model.history import Op, OpType
from model.invariants import Index, Verdict
from model.invariants.index import REQUEUES, WRITE_EFFECTS, row_of

Recogniser = Callable[[Index, Verdict], bool]


def _witness(ix: Index, verdict: Verdict) -> list[Op]:
    return [ix.history[i] for i in verdict.witness if 0 <= i < len(ix.history)]


def _invoke_of(ix: Index, completion: Op) -> Op | None:
    """The invoke record that ``completion`` completed (same op type): where a statement or a
    segment was issued, as opposed to where it took effect."""
    completions = ix.completions
    return next((i for i in ix.of_type(completion.op, OpType.INVOKE) if completions.get(i.index) is completion), None)


def _rows_of_run(ix: Index, run: str) -> list[Op]:
    return [op for op in ix.rows if op.run == run]


def _first_row_after(rows: Iterable[Op], index: int, process: str) -> Op | None:
    """The first row after ``index`` written by ``process`` (ground truth: the identity a process
    presents can change under the identity fault, the process that wrote cannot)."""
    for op in rows:
        if op.index > index and op.process == process:
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
    if _audit_failed(ix, first.run, first.get("execution")):
        return False
    rows = _rows_of_run(ix, first.run)
    clear = _first_row_after(rows, first.index, str(first.get("process")))
    if clear is None or ix.number(clear) != "T5" or row_of(clear).get("pending_effect") != "":
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


_REAPED = REQUEUES | {"T14"}


def failed_write_audit_requeued(ix: Index, verdict: Verdict) -> bool:
    """F-06: a write's audit insert failed, and the next change to the run's row is the reaper's
    (or a requeue), not the fail-closed settle: that settle was lost (it threw, or the segment died)
    while the fence was already cleared, so the reaper reclaimed the run and it ran again — or, with
    no stored request, dead-lettered it with nothing on the row recording the audit failure."""
    witness = _witness(ix, verdict)
    if not witness:
        return False
    run = witness[0].run
    executions = {op.get("execution") for op in witness if op.op in (H.LANDING, H.EVENT)}
    rows = _rows_of_run(ix, run)
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
    landings = [op for op in _witness(ix, verdict) if op.op == H.LANDING]
    finals = [op for op in _witness(ix, verdict) if op.op == H.FINAL]
    if len(landings) != 1 or len(finals) != 1 or row_of(finals[0]).get("status") != "cancelled":
        return False
    landing = landings[0]
    return _audit_failed(ix, landing.run, landing.get("execution")) and any(
        ix.number(op) == "T8" for op in _rows_of_run(ix, landing.run)
    )


def unaudited_landed_write(ix: Index, verdict: Verdict) -> bool:
    """F-02: the landed execution never even reached its audit insert: its segment stopped
    between the landing and the tool step's record — the process that ran the tool died (it never
    inserted the step), or its next statement on the run (the boundary's renewal or clear) failed or
    matched nothing (the lease was lost: reaped mid-call, re-claimed, or cancelled)."""
    landings = [op for op in _witness(ix, verdict) if op.op == H.LANDING]
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
    final = _queued_final(ix, verdict)
    if final is None:
        return False
    rows = _rows_of_run(ix, final.run)
    last = rows[-1] if rows else None
    if last is None or ix.number(last) != "T11" or last.get("site") != "recovery.requeue":
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
    dead-letter matches nothing either way and the segment reports FAILED over a CANCELLED row."""
    if verdict.name != "segment_outcome_matches_row":
        return recovery_dispatch_orphan(ix, verdict)
    ops = _witness(ix, verdict)
    if len(ops) != 2:
        return False
    row, segment = ops
    if row.op != H.STORE or segment.get("outcome") != "failed":
        return False
    if ix.number(row) == "T8":
        requeue = _requeue_before_cancel(ix, row, segment)
        if requeue is None:
            return False
        row = requeue
    elif ix.number(row) != "T11":
        return False
    dispatches = [(site, ok) for site, ok in _dispatches_after(ix, row.run, row.index) if site == "recovery.dispatch"]
    return bool(dispatches) and not dispatches[0][1]


def _requeue_before_cancel(ix: Index, cancel: Op, segment: Op) -> Op | None:
    """The segment's own recovery requeue (T11) that the user's cancel overwrote: the run's last row
    before the cancel, written by the segment's process."""
    before = [op for op in _rows_of_run(ix, cancel.run) if op.index < cancel.index]
    if not before or ix.number(before[-1]) != "T11" or before[-1].process != segment.process:
        return None
    return before[-1]


def _queued_final(ix: Index, verdict: Verdict) -> Op | None:
    finals = [op for op in _witness(ix, verdict) if op.op == H.FINAL]
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
    rows = _rows_of_run(ix, final.run)
    if not rows or ix.number(rows[-1]) != "T2":
        return False
    if _dispatches_after(ix, final.run, rows[-1].index) != [("enqueue.dispatch", False)]:
        return False
    return _settle_lost(ix, rows[-1], "enqueue.dispatch_failed")


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
    found = _own_expired_stamp(ix, verdict)
    if found is None:
        return False
    issued, stamp, invoke = found
    lease = ix.time_of(float(row_of(stamp).get("lease_expires") or 0))
    lag = issued.time_s + LEASE_S - lease
    unstalled_call_s = invoke.time_s - (stamp.time_s - issued.time_s)
    return (
        lag > 1
        and _lagging(ix, stamp.process, issued.index)
        and int(issued.time_s) + LEASE_S >= invoke.time_s
        and lease < unstalled_call_s
    )


def stalled_fence_stamp(ix: Index, verdict: Verdict) -> bool:
    """F-11: the write ran under its own segment's fence stamp (T5), whose statement stalled in the
    store (a ``store`` slow fault on it) past the lease it was computing: ``lease_expires = now + 900``
    was read before the statement, the statement committed after that moment (T5 has no lease-expiry
    predicate), and the tool ran at once under a lease already past. Had the statement committed
    when issued, the lease would have covered the call (with a lagging clock also corrected, when
    the stamping process had one)."""
    found = _own_expired_stamp(ix, verdict)
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
    if _lagging(ix, stamp.process, issued.index):
        lease = max(lease, float(int(issued.time_s) + LEASE_S))
    return lease + 1 >= invoke.time_s - (stamp.time_s - issued.time_s)


def _own_expired_stamp(ix: Index, verdict: Verdict) -> tuple[Op, Op, Op] | None:
    """(the stamp's invoke, the stamp, the write's invoke) when the write ran under its own
    segment's fence stamp with only the lease wrong: already past when the tool was invoked."""
    witness = _witness(ix, verdict)
    stores = [op for op in witness if op.op == H.STORE]
    invokes = [op for op in witness if op.op == H.TOOL]
    if len(stores) != 1 or len(invokes) != 1:
        return None
    stamp, invoke = stores[0], invokes[0]
    row = row_of(stamp)
    lease = row.get("lease_expires")
    own = (
        ix.number(stamp) == "T5"
        and stamp.get("site") == "executor.fence"
        and stamp.process == invoke.process
        and row.get("status") == "running"
        and row.get("claimed_by") == invoke.get("identity")
        and row.get("pending_effect") == invoke.get("true_effect")
    )
    if not own or not isinstance(lease, (int, float)) or ix.time_of(lease) >= invoke.time_s:
        return None
    issued = _invoke_of(ix, stamp)
    return None if issued is None else (issued, stamp, invoke)


def _lagging(ix: Index, process: str, index: int) -> bool:
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


_RESUME_EVENT_KINDS = frozenset({"approval", "input"})


def stalled_resume_event(ix: Index, verdict: Verdict) -> bool:
    """F-10: one of the colliding events is a resume's approval (or input) event, which the resume
    coordinator stores after its claim (T10) with no renewal in between; the reaper requeued the run
    (T13) between that claim and the event (a store statement of the resume stalled past the lease),
    so the event landed in the stream of the attempt that claimed the run next."""
    events = [op for op in _witness(ix, verdict) if op.op == H.EVENT]
    if len(events) != 2 or events[0].process == events[1].process:
        return False
    for event in events:
        if event.get("kind") not in _RESUME_EVENT_KINDS:
            continue
        own = [op for op in _rows_of_run(ix, event.run) if op.index < event.index and op.process == event.process]
        if not own or ix.number(own[-1]) != "T10":
            continue
        claim = own[-1]
        if any(claim.index < op.index < event.index and ix.number(op) == "T13" for op in _rows_of_run(ix, event.run)):
            return True
    return False


def stalled_settle_over_new_owner(ix: Index, verdict: Verdict) -> bool:
    """F-12: an unguarded pre-execution settleFailed (spec 3.1: runQueued's position/rehydration
    failures, the resume coordinator's own failures; ownedBy null) was issued by a segment right
    after its own claim (T3 or T10), before any other change to the row; the statement stalled in
    the store until the reaper had reclaimed the run (T13) and another segment had claimed it, and
    its WHERE (non-terminal status only) then matched that segment's RUNNING row."""
    found = _settle_issued_before(ix, verdict, _UNCHECKED_SETTLE_SITES)
    if found is None:
        return False
    settle, own, later = found
    return (
        ix.number(own) in ("T3", "T10")
        and any(ix.number(op) == "T13" for op in later)
        and any(ix.number(op) in ("T3", "T10") and op.process != settle.process for op in later)
    )


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


def _settle_issued_before(ix: Index, verdict: Verdict, sites: frozenset[str]) -> tuple[Op, Op, list[Op]] | None:
    """For a ``settles_by_owner`` witness (prior row, settle): when the settle is a T7 from one of
    ``sites`` by a process other than the prior row's writer, and its statement was issued before
    every row change since that process's own last row change: (the settle, that own row, the rows
    written between it and the settle)."""
    found = _settle_over_claim(ix, verdict, sites)
    if found is None:
        return None
    _, settle = found
    issued = _invoke_of(ix, settle)
    if issued is None:
        return None
    rows = _rows_of_run(ix, settle.run)
    own = [op for op in rows if op.index < issued.index and op.process == settle.process]
    if not own:
        return None
    later = [op for op in rows if own[-1].index < op.index < settle.index]
    if not later or any(op.index < issued.index for op in later):
        return None
    return settle, own[-1], later


def stale_suspend_reruns_write(ix: Index, verdict: Verdict) -> bool:
    """F-13: a suspend (T9) that a segment had issued before another segment claimed the run
    committed late (spec 9 C12: suspension has no owner guard) over the RUNNING row of a later
    attempt that had already executed the non-idempotent write: the run went back to waiting for
    approval of that turn with the write's fence still standing, and the segment that claimed the
    approval (T10) ran the write again.

    Through ``non_idempotent_at_most_once``: the stale suspend lies between the two landings and the
    second landing's process claimed the approval after it. Through ``fence_matches_inflight_write``:
    the claim whose read met the previous attempt's fence followed the stale suspend."""
    ops = _witness(ix, verdict)
    if verdict.name == "fence_matches_inflight_write":
        claims = [op for op in ops if op.op == H.STORE and ix.number(op) == "T10"]
        stamps = [op for op in ops if op.op == H.STORE and ix.number(op) == "T5"]
        if len(claims) != 1 or len(stamps) != 1:
            return False
        before = [op for op in _rows_of_run(ix, claims[0].run) if op.index < claims[0].index]
        return bool(before) and ix.number(before[-1]) == "T9" and _stale_suspend(ix, before[-1], stamps[0].index)
    landings = [op for op in ops if op.op == H.LANDING]
    if len(landings) != 2:
        return False
    first, second = landings
    rows = _rows_of_run(ix, first.run)
    return any(
        first.index < suspend.index < second.index
        and ix.number(suspend) == "T9"
        and _stale_suspend(ix, suspend, first.index)
        and any(
            suspend.index < op.index < second.index and ix.number(op) == "T10" and op.process == second.get("process")
            for op in rows
        )
        for suspend in rows
    )


def _stale_suspend(ix: Index, suspend: Op, before: int) -> bool:
    """Whether ``suspend`` (a T9 row) was issued before another process claimed the run (T3 or T10)
    at an index below ``before``: the suspend overtook a later attempt."""
    issued = _invoke_of(ix, suspend)
    if issued is None:
        return False
    return any(
        issued.index < op.index < before and ix.number(op) in ("T3", "T10") and op.process != suspend.process
        for op in _rows_of_run(ix, suspend.run)
    )


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


def claim_restamps_started(ix: Index, verdict: Verdict) -> bool:
    """Spec 2 T3: a claim of a requeued run sets started_at=now again (T10 leaves it untouched)."""
    ops = _witness(ix, verdict)
    return (
        len(ops) == 2
        and ops[1].op == H.STORE
        and ix.number(ops[1]) == "T3"
        and row_of(ops[0]).get("started_at") != row_of(ops[1]).get("started_at")
        and row_of(ops[0]).get("finished_at") == row_of(ops[1]).get("finished_at")
    )


def clear_not_persisted(ix: Index, verdict: Verdict) -> bool:
    """Spec 7.2: the write returned but its fence clear never persisted (the T5 failed, matched
    nothing, or the process died first), and the run then ended FAILED with the fence standing."""
    ops = _witness(ix, verdict)
    if len(ops) != 4 or row_of(ops[3]).get("status") != "failed":
        return False
    call, returned, terminal = ops[1], ops[2], ops[3]
    identity = call.get("identity")
    return not any(
        returned.index < op.index < terminal.index
        and op.run == call.run
        and op.get("identity") == identity
        and ix.number(op) == "T5"
        and row_of(op).get("pending_effect") == ""
        for op in ix.rows
    )


_UNCHECKED_SETTLE_SITES = frozenset(
    {
        "resume.position_failed",
        "resume.state_unreadable",
        "resume.release_failed",
        "run_queued.position_failed",
        "run_queued.rehydration_failed",
    }
)


def unchecked_settle_outcome(ix: Index, verdict: Verdict) -> bool:
    """Spec 3.1 with 2 (persister wrappers never throw): a pre-execution settleFailed of a resume or
    runQueued segment is unguarded and its result unchecked; the segment reports FAILED although
    that settle failed or matched nothing (the run was cancelled, or the statement threw)."""
    ops = _witness(ix, verdict)
    if len(ops) != 2 or ops[1].op != H.SEGMENT or ops[1].get("outcome") != "failed":
        return False
    segment = ops[1]
    invoke = _invoke_of(ix, segment)
    if invoke is None:
        return False
    for op in ix.of_type(H.STORE, OpType.INVOKE):
        inside = invoke.index < op.index < segment.index and op.process == segment.process
        if inside and op.run == invoke.run and op.get("site") in _UNCHECKED_SETTLE_SITES:
            done = ix.completions.get(op.index)
            return done is None or done.type is not OpType.OK or not done.get("matched")
    return False


def cancel_keeps_fence(ix: Index, verdict: Verdict) -> bool:
    """Spec 3.3 step 3 and T8: a cancel keeps the row's fence, and a segment that finds its run
    cancelled persists the step without renewing or clearing; the row ends CANCELLED, fenced."""
    ops = _witness(ix, verdict)
    return (
        len(ops) == 4
        and row_of(ops[3]).get("status") == "cancelled"
        and ix.number(ops[3]) == "T8"
        and ops[3].index > ops[0].index
    )


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
    rows = _rows_of_run(ix, final.run)
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


__all__ = [
    "Recogniser",
    "cancel_after_fence_stamp",
    "cancel_probe_zombie_event",
    "cancelled_run_write_audit_lost",
    "completed_write_rerun",
    "enqueue_dispatch_settle_lost",
    "failed_write_audit_requeued",
    "lagging_clock_stamp",
    "queued_orphan",
    "recovery_dispatch_orphan",
    "shared_identity",
    "stale_suspend_reruns_write",
    "stalled_fence_stamp",
    "stalled_resume_event",
    "stalled_settle_over_new_owner",
    "unaudited_landed_write",
]
