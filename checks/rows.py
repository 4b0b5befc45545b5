"""Invariants of what a row says once a segment is done with it (spec 2, 3.5, 5.1, 5.2).

- ``dead_letter_reason_matches_cause``: a dead-letter's termination reason matches the failure
  that caused it, judged from ground truth: the true class the fault plan injected, the row the
  store held (requeue count, stored request), the true effect of the call a standing fence was
  stamped for (never the fence's own value), the reads and dispatches that failed.
- ``segment_outcome_matches_row``: a segment that reports a settled outcome (completed, failed,
  cancelled, awaiting approval or input) leaves the row in that state.
- ``terminal_row_no_stale_fence``: a terminal row keeps a write fence only while the write it
  announces may still be in flight: never for a write that had already returned.
- ``row_timestamps_kept``: once set, a row's ``started_at`` and ``finished_at`` are never
  overwritten by a later statement.

Pure checkers over the shared index of one history; they know only the history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from checks.fused import Key, Machine
from checks.history import DISPATCH, EVENT, INDEX, OP, PLAN, PROVIDER, READ, RUN, STORE, TOOL, TYPE, VALUE, Op, OpType
from checks.index import TERMINAL_STATUSES, WRITE_EFFECTS, Index, Span, merged, row_of
from checks.judgement import Finding, Tally, invariant
from checks.own import fence_is_strict, spans_of_entries
from checks.verdict import Kind
from model.constants import MAX_REQUEUES
from model.statements import DEAD_LETTER_STALE, FINISH_RUN, MARK_PENDING_EFFECT

RETRYABLE = frozenset({"connection", "rateLimit", "serverError", "circuitOpen"})
_DEAD_LETTER_REASONS = frozenset({"not_retryable", "retries_exhausted"})

# ---- dead-letter reasons ------------------------------------------------------------------------


@invariant(
    "dead_letter_reason_matches_cause",
    Kind.ALWAYS,
    "a dead-letter's reason matches the failure that caused it: not_retryable only for a cause that is "
    "not retryable, retries_exhausted only when the budget is spent or the retry could not be set up",
)
class DeadLetterReasonMatchesCause(Machine):
    """A dead-letter says ``not_retryable`` only for a cause that is not retryable (a failure whose
    true class is not retryable, a write fence whose stamped call truly is a non-idempotent write or an
    unknown name, a run with no stored request) and
    ``retries_exhausted`` only when the budget is spent or the retry could not be set up (the
    re-read or the wake-up failed).

    Reaper dead-letters (T14) are judged on the row as the store held it just before; recovery
    dead-letters (T7 on a worker segment) on the segment's last failure before it. A segment
    whose workload scripts a pipeline stop (``plan`` stops), or with no recorded failure, is not
    judged on the cause of a ``not_retryable``. Once the pass is over, each T7/T14 dead-letter among
    the index's rows (in history order) is judged with the row before it, its segment and the plans.
    """

    __slots__ = ("plans",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"plans": (PLAN, OpType.OK)}
    plans: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        numbers = ix.numbers
        scripted: set[str] | None = None
        for op in merged(ix.rows_of(FINISH_RUN), ix.rows_of(DEAD_LETTER_STALE)):
            before = ix.row_before(op[RUN], op[INDEX])
            if before is None or not _is_dead_letter(numbers[op[INDEX]], op):
                continue
            if scripted is None:
                scripted = {plan.run for plan in self.plans if plan.get("stops")}
            _judge_dead_letter(ix, tally, op, before, ix.span_at(op), op[RUN] in scripted)
        return tally.finding("dead-letters")


def _is_dead_letter(number: str, op: Op) -> bool:
    row = row_of(op)
    return (
        number in (FINISH_RUN, DEAD_LETTER_STALE)
        and row.get("status") == "failed"
        and row.get("termination_reason") in _DEAD_LETTER_REASONS
    )


@dataclass(slots=True)
class _Cause:
    """What a segment's own records said before one of its statements: its last failure (of a
    provider call, an audit or a statement), a failed set-up of the retry (a re-read or a
    wake-up) and a non-idempotent fence a read returned, the last two since that failure."""

    failure: Op | None = None
    setup_failed: Op | None = None
    fenced: Op | None = None


def _cause_before(ix: Index, span: Span, index: int) -> _Cause:
    cause = _Cause()
    for op in span.records:
        if op[INDEX] >= index:
            break
        name, type_ = op[OP], op[TYPE]
        if name == READ:
            if type_ is OpType.OK:
                if fence_is_strict(ix, op.run, op.get("fence"), op.index):
                    cause.fenced = op
            elif type_ is OpType.FAIL:
                cause.setup_failed = op
        elif name == DISPATCH:
            if type_ is OpType.FAIL:
                cause.setup_failed = op
        elif type_ is OpType.FAIL and name in (PROVIDER, EVENT, STORE):
            cause.failure = op
            cause.setup_failed = cause.fenced = None
    return cause


def _judge_dead_letter(ix: Index, tally: Tally, settle: Op, before: Op, span: Span | None, scripted: bool) -> None:
    reason = row_of(settle).get("termination_reason")
    row = row_of(before)
    if str(settle.get("transition", "")).startswith(DEAD_LETTER_STALE):
        fenced = fence_is_strict(ix, settle.run, row.get("pending_effect"), before.index + 1)
        fence_or_no_request = fenced or not row.get("has_request")
        expected = "not_retryable" if fence_or_no_request else "retries_exhausted"
        if expected == "retries_exhausted" and (row.get("requeue_count") or 0) < MAX_REQUEUES:
            expected = "requeue"
        _verdict(tally, settle, before, reason, {expected}, "the row the reaper dead-lettered")
        return
    if span is None or span.entry != "run_queued" or settle.get("identity") != span.identity:
        return  # only the recovery's dead-letters have a cause in their own segment
    cause = _cause_before(ix, span, settle.index)
    if reason == "retries_exhausted":
        spent = (row.get("requeue_count") or 0) >= MAX_REQUEUES
        allowed = {"retries_exhausted"} if spent or cause.setup_failed is not None else {"a requeue"}
        _verdict(tally, settle, before, reason, allowed, "the budget and the retry's set-up")
        return
    failure = cause.failure
    if failure is None or scripted:
        return
    retryable = failure.op == PROVIDER and failure.get("true_class") in RETRYABLE
    allowed = {"retries_exhausted", "a requeue"} if retryable and cause.fenced is None else {"not_retryable"}
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


@invariant(
    "segment_outcome_matches_row",
    Kind.ALWAYS,
    "a segment that reports a settled outcome leaves its run's row in that state",
)
class SegmentOutcomeMatchesRow(Machine):
    """A segment reporting a settled outcome leaves its run's row in that state when it returns:
    the index's segments of the judged entry points, with the completion and the row the pass found
    for each."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        ok = OpType.OK
        for span in spans_of_entries(ix, _JUDGED_ENTRIES):
            done = span.completion
            if done is None or done[TYPE] is not ok:
                continue
            outcome = done[VALUE].get("outcome")
            if not isinstance(outcome, str):
                continue
            expected = _SETTLED_OUTCOMES.get(outcome)
            row = span.last_row
            if expected is None or row is None:
                continue
            status = row_of(row).get("status")
            if status in expected:
                tally.hold()
                continue
            tally.violate(
                (row.index, done.index),
                f"the {span.entry} segment of run {span.run!r} reported {outcome!r} at {done.index}, "
                f"but the row is {status!r} (row of {row.index})",
                at=done.index,
            )
        return tally.finding("settled outcomes")


# ---- fences on terminal rows --------------------------------------------------------------------


@invariant(
    "terminal_row_no_stale_fence",
    Kind.ALWAYS,
    "a terminal row keeps a write fence only while that write may still be in flight",
)
class TerminalRowNoStaleFence(Machine):
    """A row that turns terminal with a write fence has that write still in flight (or its outcome
    unknown): the fence's write was not invoked yet, or its call had not returned.

    Judged run by run, on the run's first terminal row: the fence is the latest write stamp (T5)
    before it, the write is the first tool invoke of the stamping identity after that stamp
    (from the tool invokes the pass kept)."""

    __slots__ = ("invokes",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"invokes": (TOOL, OpType.INVOKE)}
    invokes: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        numbers = ix.numbers
        calls: dict[str, list[Op]] | None = None
        for run, rows in ix.rows_by_run.items():
            stamp: Op | None = None
            for op in rows:
                row = op[VALUE].get("row")
                if type(row) is not dict:
                    row = row_of(op)
                if numbers[op[INDEX]] == MARK_PENDING_EFFECT:
                    if row.get("pending_effect") in WRITE_EFFECTS:
                        stamp = op
                    continue
                if row.get("status") not in TERMINAL_STATUSES:
                    continue
                call = None
                if stamp is not None and row.get("pending_effect") in WRITE_EFFECTS:
                    if calls is None:
                        calls = {}
                        for invoke in self.invokes:
                            calls.setdefault(invoke.run, []).append(invoke)
                    call = _first_call(calls.get(run, ()), stamp, op.index)
                _judge_terminal_fence(tally, ix, op, stamp, call)
                break
        return tally.finding("terminal rows")


def _first_call(invokes: Iterable[Op], stamp: Op, before: int) -> Op | None:
    """The first tool invoke of the stamp's identity between the stamp and history index ``before``."""
    identity = stamp.get("identity")
    for invoke in invokes:
        if invoke.index > before:
            return None
        if invoke.index > stamp.index and invoke.value.get("identity") == identity:
            return invoke
    return None


def _judge_terminal_fence(tally: Tally, ix: Index, terminal: Op, stamp: Op | None, call: Op | None) -> None:
    fence = row_of(terminal).get("pending_effect")
    if fence not in WRITE_EFFECTS or stamp is None or call is None:
        tally.hold()
        return
    returned = ix.tool_completions.get(call.index)
    if returned is None or returned.type is OpType.INFO or returned.index > terminal.index:
        tally.hold()
        return
    tally.violate(
        (stamp.index, call.index, returned.index, terminal.index),
        f"run {terminal.run!r} turned {row_of(terminal).get('status')!r} at {terminal.index} with the "
        f"{fence!r} fence of {stamp.index} standing, although that write ({call.get('tool')!r}) had "
        f"returned at {returned.index}",
        at=terminal.index,
    )


# ---- timestamps ---------------------------------------------------------------------------------

_KEPT = ("started_at", "finished_at")


@invariant(
    "row_timestamps_kept",
    Kind.ALWAYS,
    "a row's started_at and finished_at, once set, are never overwritten by a later statement",
)
class RowTimestampsKept(Machine):
    """Once a row's started_at or finished_at is set (non-zero), no later statement changes it.
    Rows recorded without a timestamp column are not judged on it. The index's rows, run by run."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        started_at, finished_at = _KEPT
        for rows in ix.rows_by_run.values():  # run by run: the first setting of each column is a local
            started: tuple[Op, Any] | None = None
            finished: tuple[Op, Any] | None = None
            for op in rows:
                row = op[VALUE].get("row")
                if type(row) is not dict:
                    row = row_of(op)
                value = row.get(started_at)
                if value:
                    if started is None:
                        started = (op, value)
                        tally.held += 1
                    elif started[1] != value:
                        _overwritten(tally, started, op, started_at, value)
                value = row.get(finished_at)
                if value:
                    if finished is None:
                        finished = (op, value)
                        tally.held += 1
                    elif finished[1] != value:
                        _overwritten(tally, finished, op, finished_at, value)
        return tally.finding("timestamps set")


def _overwritten(tally: Tally, first: tuple[Op, Any], op: Op, column: str, value: Any) -> None:
    earlier, before = first
    tally.violate(
        (earlier.index, op.index),
        f"{op.get('transition')!r} at {op.index} overwrote {column} of run {op.run!r}: "
        f"{before!r} (set at {earlier.index}) -> {value!r}",
        at=op.index,
    )


__all__ = ["DeadLetterReasonMatchesCause", "RowTimestampsKept", "SegmentOutcomeMatchesRow", "TerminalRowNoStaleFence"]
