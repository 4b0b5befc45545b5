"""Outcome oracles: what a segment call tells its caller is judged against what its statements did.

The table (entry point x what it reports -> when the report is true; the same rows, as data, are
:data:`checks.outcome_table.OUTCOME_TABLE`, which the report's glossary renders):

====================================  ===========================  ==========================================
entry point                           reports                      true when (ground truth)
====================================  ===========================  ==========================================
run_queued (both transports, the      completed                    its last statement is its own settle (T7),
Sync transport's nested retry and                                  matched, row COMPLETED (interactive: or its
the outer call alike),                                             begin T1 failed and nothing of it matched)
run_interactive, approve,             failed                       its last statement is its own settle,
submit_input                                                       matched, row FAILED (or unpersisted)
                                      guardrail_blocked /          own settle matched, FAILED policy_denied /
                                      guardrail_approval_required  approval_denied (or unpersisted)
                                      awaiting_approval / _input   its last statement is its own T9 (suspend or
                                                                   release), matched, row waiting for approval
                                                                   / for input
                                      suspend_failed               no T9 of the call matched
                                      cancelled                    a read of the call returned CANCELLED and
                                                                   none of its later statements matched
                                      lease_lost                   its last statement failed or matched nothing
                                                                   and the row the store held just before it
                                                                   was not held by the call (RUNNING under its
                                                                   identity, lease not past in true time)
run_queued                            requeued                     its own T11 matched, its dispatch returned,
                                                                   and the row it left when it returned (the
                                                                   nested retry's included) is not terminal
run_queued, approve, submit_input     null (nothing to do)         none of its statements matched
approve, submit_input                 RunAlreadyResumingException  its T10 failed or matched nothing
reap, per row (``account`` record)    requeued / dead_lettered R   see :mod:`checks.accounts`
                                      / skipped; printed counts
enqueue; cancel                       uuid / RunEnqueueFailed;     see :mod:`checks.accounts`
                                      true / false
every settle                          reason, error class          see :mod:`checks.reasons`
====================================  ===========================  ==========================================

- ``segment_outcome_true``: every row above but lease_lost, for every segment that returned.
- ``lease_lost_means_lost``: a segment that reports LEASE_LOST had lost it: its last statement failed
  or matched nothing, and the row the store held just before that statement was not RUNNING under the
  segment's identity with a lease still ahead of true time. A statement that matched (the lease was
  confirmed, KB-6's no-op renewal) or a store error on a row the segment still held is a violation.

"The row left" is the run's latest row written by the call's own process before the call returned:
other processes' later writes (a user's cancel) do not make a report false, a call nested in it does.
Checkers fed by the single pass (machines that judge once it is over, from the segments it indexed
and the statements it listed for each); they know only the history.
"""

from __future__ import annotations

from collections.abc import Mapping

from checks.fused import Machine
from checks.history import INDEX, OP, READ, TIME_S, TYPE, VALUE, Op, OpType
from checks.index import TERMINAL_STATUSES, Index, Span, row_of
from checks.judgement import OUTCOME_ORACLE, Finding, Tally, invariant
from checks.own import left_row, matched, number, spans_of_entries, statements
from checks.verdict import Kind
from model.statements import CLAIM_FOR_RESUME, FINISH_RUN, REQUEUE, START_RUN, SUSPEND_RUN

_JUDGED_ENTRIES = frozenset({"run_queued", "run_interactive", "approve", "submit_input"})
_SETTLE_STATUS: Mapping[str, tuple[str, frozenset[str] | None]] = {
    "completed": ("completed", None),
    "failed": ("failed", None),
    "guardrail_blocked": ("failed", frozenset({"policy_denied"})),
    "guardrail_approval_required": ("failed", frozenset({"approval_denied"})),
}
_UNPERSISTED_OUTCOMES = frozenset({"completed", "failed", "guardrail_blocked", "guardrail_approval_required",
                                   "suspend_failed"})  # fmt: skip
_WAITING = {"awaiting_approval": "waiting_for_approval", "awaiting_input": "waiting_for_input"}
_ALREADY_RESUMING = "RunAlreadyResumingException"


@invariant(
    "segment_outcome_true",
    Kind.ALWAYS,
    "every outcome a segment call returns (and the refusal it throws) is true of its own statements: "
    "the outcome table of checks/outcomes.py",
    tags=(OUTCOME_ORACLE,),
)
class SegmentOutcomeTrue(Machine):
    """Every outcome a segment call returned (and the refusal it threw) is true of its own statements,
    as the module's table says: judged once the pass is over, from the segments it indexed and the
    statements it listed for each."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for span in spans_of_entries(ix, _JUDGED_ENTRIES):
            done = span.completion
            if done is None or done[TYPE] is OpType.INFO:
                continue
            if done[TYPE] is OpType.FAIL:
                if done[VALUE].get("error") == _ALREADY_RESUMING:
                    _judge_claim_lost(tally, span, done)
                continue
            outcome = done[VALUE].get("outcome")
            if outcome == "lease_lost":
                continue
            _judge_report(tally, span, done, repr(outcome), _falsehood(ix, span, outcome))
        return tally.finding("segment outcomes")


def _judge_report(tally: Tally, span: Span, done: Op, said: str, why: tuple[tuple[int, ...], str] | None) -> None:
    """One judged case: the call reported ``said`` (as the explanation words it); ``why`` is None when
    that is true of what it did, else (witness indexes, words) saying why it is false."""
    if why is None:
        tally.hold()
        return
    witness, reason = why
    tally.violate(
        (*witness, done[INDEX]),
        f"the {span.entry} call of run {span.run!r} by {span.identity!r} reported {said} at {done.index}, but {reason}",
        at=done[INDEX],
    )


def _falsehood(ix: Index, span: Span, outcome: object) -> tuple[tuple[int, ...], str] | None:
    """Why ``outcome`` is false of what the call did (witness indexes, words), or None when it is true."""
    own = statements(span)
    took = []
    for op in own:  # matched(op), inline: a call per statement of every judged segment
        if op[TYPE] is OpType.OK and op[VALUE].get("matched") and op[VALUE].get("row") is not None:
            took.append(op)
    last = own[-1] if own else None
    if outcome is None:
        return None if not took else ((took[0][INDEX],), f"its {took[0][VALUE].get('transition')!r} matched")
    if outcome in _UNPERSISTED_OUTCOMES and own and not took and number(own[0]) == START_RUN:
        return None  # the call's begin (T1) failed and nothing of it matched: the run executed unpersisted
    if outcome in _SETTLE_STATUS:
        status, reasons = _SETTLE_STATUS[str(outcome)]
        return _own_last(last, (FINISH_RUN,), status, reasons)
    if outcome in _WAITING:
        return _own_last(last, (SUSPEND_RUN,), _WAITING[str(outcome)], None)
    if outcome == "suspend_failed":
        suspends = [op for op in took if number(op) == SUSPEND_RUN]
        return None if not suspends else ((suspends[-1][0],), "its suspend (T9) matched")
    if outcome == "cancelled":
        return _cancel_seen(span, took)
    if outcome == "requeued":
        return _requeued(ix, span, took)
    return ((), f"{outcome!r} is no outcome the spec gives this entry point")


def _own_last(
    last: Op | None, numbers: tuple[str, ...], status: str, reasons: frozenset[str] | None
) -> tuple[tuple[int, ...], str] | None:
    if last is None:
        return (), "it changed no row"
    if number(last) not in numbers or not matched(last):
        state = "matched" if matched(last) else "did not take effect"
        return (last[INDEX],), f"its last statement {last[VALUE].get('transition')!r} at {last[INDEX]} {state}"
    row = row_of(last)
    if row.get("status") != status or (reasons is not None and row.get("termination_reason") not in reasons):
        return (last[INDEX],), (
            f"its last statement at {last[INDEX]} left the row {row.get('status')!r} "
            f"(reason {row.get('termination_reason')!r})"
        )
    return None


def _cancel_seen(span: Span, took: list[Op]) -> tuple[tuple[int, ...], str] | None:
    seen: Op | None = None
    for op in span.records:
        if op[OP] == READ and op[TYPE] is OpType.OK and op[VALUE].get("result") == "cancelled":
            seen = op
    if seen is None:
        return (), "no read of it returned the run cancelled"
    later = [op for op in took if op[INDEX] > seen[0]]
    if later:
        return (seen[0], later[0][0]), f"its {later[0][6].get('transition')!r} matched after it read the cancel"
    return None


def _requeued(ix: Index, span: Span, took: list[Op]) -> tuple[tuple[int, ...], str] | None:
    requeues = [op for op in took if number(op) == REQUEUE]
    if not requeues:
        return (), "no requeue (T11) of it matched"
    requeue = requeues[-1]
    sent = any(op[OP] == "dispatch" and op[TYPE] is OpType.OK and op[INDEX] > requeue[INDEX] for op in span.records)
    if not sent:
        return (requeue[INDEX],), f"no wake-up dispatch of it returned after its requeue at {requeue[INDEX]}"
    left = left_row(ix, span)
    if left is not None and row_of(left).get("status") in TERMINAL_STATUSES:
        return (requeue[INDEX], left[INDEX]), (
            f"the row it left was {row_of(left).get('status')!r} when it returned ({left[VALUE].get('transition')!r} "
            f"at {left[INDEX]} by its own process)"
        )
    return None


def _judge_claim_lost(tally: Tally, span: Span, done: Op) -> None:
    claims = [op for op in statements(span) if number(op) == CLAIM_FOR_RESUME]
    if claims and not any(matched(op) for op in claims):
        tally.hold()
        return
    witness = tuple(op[INDEX] for op in claims)
    tally.violate(
        (*witness, done[INDEX]),
        f"the {span.entry} call of run {span.run!r} threw {_ALREADY_RESUMING} at {done[INDEX]}, but "
        + ("its claim (T10) matched" if claims else "it issued no claim"),
        at=done[INDEX],
    )


# ---- LEASE_LOST ---------------------------------------------------------------------------------


@invariant(
    "lease_lost_means_lost",
    Kind.ALWAYS,
    "a segment that reports LEASE_LOST had lost it: its last statement failed or matched nothing on a row "
    "it no longer held",
    tags=(OUTCOME_ORACLE,),
)
class LeaseLostMeansLost(Machine):
    """A segment reporting LEASE_LOST had lost the lease: judged once the pass is over, from the
    segments it indexed, their statements and the rows before each."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for span in spans_of_entries(ix, _JUDGED_ENTRIES):
            done = span.completion
            if done is None or done[TYPE] is not OpType.OK or done[VALUE].get("outcome") != "lease_lost":
                continue
            own = statements(span)
            if not own:
                tally.violate((done[INDEX],), f"the {span.entry} call of run {span.run!r} reported lease_lost at "
                              f"{done[INDEX]} without issuing a statement", at=done[INDEX])  # fmt: skip
                continue
            _judge_report(tally, span, done, "lease_lost", _lease_held(ix, span, own[-1]))
        return tally.finding("lease_lost outcomes")


def _lease_held(ix: Index, span: Span, last: Op) -> tuple[tuple[int, ...], str] | None:
    transition = last[VALUE].get("transition")
    if matched(last):
        return (last[INDEX],), f"its last statement {transition!r} at {last[INDEX]} matched"
    before = ix.row_before(span.run, last[INDEX])
    if before is None:
        return None
    row = row_of(before)
    lease = row.get("lease_expires")
    held = (
        row.get("status") == "running"
        and row.get("claimed_by") == span.identity
        and isinstance(lease, (int, float))
        and ix.time_of(lease) >= last[TIME_S]  # a clock reading against the statement's true time
    )
    if not held or not isinstance(lease, (int, float)):
        return None
    failed = "failed" if last[TYPE] is OpType.FAIL else "matched nothing"
    return (before[INDEX], last[INDEX]), (
        f"its last statement {transition!r} {failed} at {last[INDEX]} while the store held the row RUNNING under it "
        f"with its lease to {ix.time_of(lease)} (row of {before[INDEX]})"
    )


__all__ = ["LeaseLostMeansLost", "SegmentOutcomeTrue"]
