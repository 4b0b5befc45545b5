"""Invariants of what a row says once a segment is done with it (spec 2, 3.5, 5.1, 5.2).

- ``dead_letter_reason_matches_cause``: a dead-letter's termination reason matches the failure
  that caused it, judged from ground truth: the true class the fault plan injected, the row the
  store held (requeue count, fence, stored request), the reads and dispatches that failed.
- ``segment_outcome_matches_row``: a segment that reports a settled outcome (completed, failed,
  cancelled, awaiting approval or input) leaves the row in that state.
- ``terminal_row_no_stale_fence``: a terminal row keeps a write fence only while the write it
  announces may still be in flight: never for a write that had already returned.
- ``row_timestamps_kept``: once set, a row's ``started_at`` and ``finished_at`` are never
  overwritten by a later statement.

Pure checkers over the shared index of one history; they know only the history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model.constants import MAX_REQUEUES
from model.history import DISPATCH, EVENT, PLAN, PROVIDER, READ, SEGMENT, STORE, TOOL, Op, OpType
from model.invariants.index import (
    NON_IDEMPOTENT_WRITE,
    TERMINAL_STATUSES,
    WRITE_EFFECTS,
    Index,
    merged,
    row_of,
)
from model.invariants.judgement import Finding, Tally
from model.invariants.segments import within_segments

RETRYABLE = frozenset({"connection", "rateLimit", "serverError", "circuitOpen"})
_DEAD_LETTER_REASONS = frozenset({"not_retryable", "retries_exhausted"})

# ---- dead-letter reasons ------------------------------------------------------------------------


def dead_letter_reason_matches_cause(ix: Index) -> Finding:
    """A dead-letter says ``not_retryable`` only for a cause that is not retryable (a failure whose
    true class is not retryable, a write fence, a run with no stored request) and
    ``retries_exhausted`` only when the budget is spent or the retry could not be set up (the
    re-read or the wake-up failed).

    Reaper dead-letters (T14) are judged on the row as the store held it just before; recovery
    dead-letters (T7 on a worker segment) on the segment's last failure before it. A segment
    whose workload scripts a pipeline stop (``plan`` stops), or with no recorded failure, is not
    judged on the cause of a ``not_retryable``.
    """
    scripted = {plan.run for plan in ix.of_type(PLAN, OpType.OK) if plan.get("stops")}
    prior: dict[str, Op] = {}
    cause: dict[int, Op] = {}
    setup_failed: dict[int, Op] = {}
    fenced: dict[int, Op] = {}
    tally = Tally()
    streams = (
        ix.rows,
        ix.of_type(PROVIDER, OpType.FAIL),
        ix.of_type(EVENT, OpType.FAIL),
        ix.of_type(STORE, OpType.FAIL),
        ix.of_type(READ, OpType.FAIL),
        ix.of_type(READ, OpType.OK),
        ix.of_type(DISPATCH, OpType.FAIL),
    )
    for op, span in within_segments(ix, *streams):
        if op.op == STORE and op.type is OpType.OK:
            before = prior.get(op.run)
            prior[op.run] = op
            if before is not None and _is_dead_letter(ix, op):
                _judge_dead_letter(tally, op, before, span, cause, setup_failed, fenced, op.run in scripted)
            continue
        if span is None or op.run != span.run:
            continue
        key = span.key
        if op.op == READ and op.type is OpType.OK:
            if op.get("fence") == NON_IDEMPOTENT_WRITE:
                fenced[key] = op
        elif op.op in (READ, DISPATCH):
            setup_failed[key] = op
        else:
            cause[key] = op
            setup_failed.pop(key, None)
            fenced.pop(key, None)
    return tally.finding("dead-letters")


def _is_dead_letter(ix: Index, op: Op) -> bool:
    row = row_of(op)
    return (
        ix.number(op) in ("T7", "T14")
        and row.get("status") == "failed"
        and row.get("termination_reason") in _DEAD_LETTER_REASONS
    )


def _judge_dead_letter(
    tally: Tally,
    settle: Op,
    before: Op,
    span: Any,
    cause: Mapping[int, Op],
    setup_failed: Mapping[int, Op],
    fenced: Mapping[int, Op],
    scripted: bool,
) -> None:
    reason = row_of(settle).get("termination_reason")
    row = row_of(before)
    if str(settle.get("transition", "")).startswith("T14"):
        fence_or_no_request = row.get("pending_effect") == NON_IDEMPOTENT_WRITE or not row.get("has_request")
        expected = "not_retryable" if fence_or_no_request else "retries_exhausted"
        if expected == "retries_exhausted" and (row.get("requeue_count") or 0) < MAX_REQUEUES:
            expected = "requeue"
        _verdict(tally, settle, before, reason, {expected}, "the row the reaper dead-lettered")
        return
    if span is None or span.entry != "run_queued" or settle.get("identity") != span.identity:
        return  # only the recovery's dead-letters have a cause in their own segment
    key = span.key
    if reason == "retries_exhausted":
        spent = (row.get("requeue_count") or 0) >= MAX_REQUEUES
        allowed = {"retries_exhausted"} if spent or key in setup_failed else {"a requeue"}
        _verdict(tally, settle, before, reason, allowed, "the budget and the retry's set-up")
        return
    failure = cause.get(key)
    if failure is None or scripted:
        return
    retryable = failure.op == PROVIDER and failure.get("true_class") in RETRYABLE
    allowed = {"retries_exhausted", "a requeue"} if retryable and key not in fenced else {"not_retryable"}
    _verdict(tally, settle, failure, reason, allowed, f"the failure at {failure.index}")


def _verdict(tally: Tally, settle: Op, witness: Op, reason: Any, allowed: set[str], basis: str) -> None:
    if reason in allowed:
        tally.hold()
        return
    tally.violate(
        (witness.index, settle.index),
        f"run {settle.run!r} was dead-lettered {reason!r} at {settle.index}; {basis} calls for "
        f"{' or '.join(sorted(allowed))}",
    )


# ---- segment outcomes ---------------------------------------------------------------------------

_SETTLED_OUTCOMES: Mapping[str, frozenset[str]] = {
    "completed": frozenset({"completed"}),
    "failed": frozenset({"failed"}),
    "guardrail_blocked": frozenset({"failed"}),
    "guardrail_approval_required": frozenset({"failed"}),
    "cancelled": frozenset({"cancelled"}),
    "awaiting_approval": frozenset({"waiting_for_approval"}),
    "awaiting_input": frozenset({"waiting_for_input"}),
}
"""Outcomes that report the row's state. lease_lost, requeued and suspend_failed (spec C5: the
fallback settle's result is ignored) say nothing the row must show."""
_JUDGED_ENTRIES = frozenset({"run_queued", "run_interactive", "approve", "submit_input"})


def segment_outcome_matches_row(ix: Index) -> Finding:
    """A segment reporting a settled outcome leaves its run's row in that state when it returns."""
    current: dict[str, Op] = {}
    tally = Tally()
    invoke_of = {
        done.index: invoke
        for invoke in ix.of_type(SEGMENT, OpType.INVOKE)
        if (done := ix.completions.get(invoke.index)) is not None
    }
    for op in merged(ix.rows, ix.of_type(SEGMENT, OpType.OK)):
        if op.op == STORE:
            current[op.run] = op
            continue
        invoke = invoke_of.get(op.index)
        outcome = op.get("outcome")
        if invoke is None or invoke.get("entry") not in _JUDGED_ENTRIES or not isinstance(outcome, str):
            continue
        expected = _SETTLED_OUTCOMES.get(outcome)
        row = current.get(invoke.run)
        if expected is None or row is None:
            continue
        status = row_of(row).get("status")
        if status in expected:
            tally.hold()
            continue
        tally.violate(
            (row.index, op.index),
            f"the {invoke.get('entry')} segment of run {invoke.run!r} reported {outcome!r} at {op.index}, "
            f"but the row is {status!r} (row of {row.index})",
        )
    return tally.finding("settled outcomes")


# ---- fences on terminal rows --------------------------------------------------------------------


def terminal_row_no_stale_fence(ix: Index) -> Finding:
    """A row that turns terminal with a write fence has that write still in flight (or its outcome
    unknown): the fence's write was not invoked yet, or its call had not returned."""
    stamp: dict[str, Op] = {}
    invoke: dict[str, Op] = {}
    done: set[str] = set()
    tally = Tally()
    for op in merged(ix.rows, ix.of_type(TOOL, OpType.INVOKE)):
        run = op.run
        if run in done:
            continue
        if op.op == TOOL:
            if run in stamp and run not in invoke and op.get("identity") == stamp[run].get("identity"):
                invoke[run] = op
            continue
        row = row_of(op)
        if ix.number(op) == "T5":
            if row.get("pending_effect") in WRITE_EFFECTS:
                stamp[run] = op
                invoke.pop(run, None)
            continue
        if row.get("status") not in TERMINAL_STATUSES:
            continue
        done.add(run)
        _judge_terminal_fence(tally, ix, op, stamp.get(run), invoke.get(run))
    return tally.finding("terminal rows")


def _judge_terminal_fence(tally: Tally, ix: Index, terminal: Op, stamp: Op | None, call: Op | None) -> None:
    fence = row_of(terminal).get("pending_effect")
    if fence not in WRITE_EFFECTS or stamp is None or call is None:
        tally.hold()
        return
    returned = ix.completions.get(call.index)
    if returned is None or returned.type is OpType.INFO or returned.index > terminal.index:
        tally.hold()
        return
    tally.violate(
        (stamp.index, call.index, returned.index, terminal.index),
        f"run {terminal.run!r} turned {row_of(terminal).get('status')!r} at {terminal.index} with the "
        f"{fence!r} fence of {stamp.index} standing, although that write ({call.get('tool')!r}) had "
        f"returned at {returned.index}",
    )


# ---- timestamps ---------------------------------------------------------------------------------

_KEPT = ("started_at", "finished_at")


def row_timestamps_kept(ix: Index) -> Finding:
    """Once a row's started_at or finished_at is set (non-zero), no later statement changes it.
    Rows recorded without a timestamp column are not judged on it."""
    first: dict[tuple[str, str], Op] = {}
    tally = Tally()
    for op in ix.rows:
        row = row_of(op)
        for column in _KEPT:
            value = row.get(column)
            if not value:
                continue
            earlier = first.setdefault((op.run, column), op)
            if earlier is op:
                tally.hold()
                continue
            before = row_of(earlier).get(column)
            if before != value:
                tally.violate(
                    (earlier.index, op.index),
                    f"{op.get('transition')!r} at {op.index} overwrote {column} of run {op.run!r}: "
                    f"{before!r} (set at {earlier.index}) -> {value!r}",
                )
    return tally.finding("timestamps set")


__all__ = [
    "dead_letter_reason_matches_cause",
    "row_timestamps_kept",
    "segment_outcome_matches_row",
    "terminal_row_no_stale_fence",
]
