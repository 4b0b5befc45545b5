"""Outcome oracles of the calls that are not segments of a run: the reaper's account, enqueue, cancel.

- ``reaper_account_true`` (spec 5.1): a reaper tick counts each row it acted on as requeued,
  dead-lettered or skipped (an ``account`` record per row; the counts it prints are their sums).
  *requeued* is true when its requeue (T13) of the row matched and the wake-up dispatch returned;
  *dead_lettered, reason R* when a statement of the tick on the row matched and left it FAILED with
  reason R, and R is a dead-letter reason (not_retryable, retries_exhausted: ADR-104 "dead-letter =
  FAILED + retries_exhausted/not_retryable"); *skipped* when no statement of the tick on the row
  matched. The printed counts must equal the tick's per-row accounts.
- ``enqueue_cancel_result_true`` (spec T2, T8): enqueue returns the run's uuid only when its insert
  (T2) matched and its wake-up dispatch returned, and throws RunEnqueueFailedException only when the
  insert never matched or the dispatch threw; cancel returns true exactly when its T8 matched.

Judged from the store's completions and the dispatches the bus answered, never from the runtime's
own words beyond the claim under judgement. Checkers fed by the single pass (machines judging once
it is over); history only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from checks.fused import Key, Machine
from checks.history import ACCOUNT, DISPATCH, INDEX, OP, PROCESS, RUN, SEGMENT, STORE, TYPE, VALUE, Op, OpType
from checks.index import Index, Span, row_of
from checks.judgement import OUTCOME_ORACLE, Finding, Tally, invariant
from checks.own import matched, number, records_in, spans_of_entries, statements
from checks.verdict import Kind
from model.statements import CANCEL, ENQUEUE_RUN, REQUEUE_STALE

DEAD_LETTER_REASONS = frozenset({"not_retryable", "retries_exhausted"})
_COUNTS = ("requeued", "dead_lettered", "skipped")
_CLIENT_ENTRIES = frozenset({"enqueue", "cancel"})


@invariant(
    "reaper_account_true",
    Kind.ALWAYS,
    "the reaper counts a row requeued, dead-lettered (with a dead-letter reason) or skipped only as its "
    "statements on it did, and prints the sums of those counts",
    tags=(OUTCOME_ORACLE,),
)
class ReaperAccountTrue(Machine):
    """Each per-row account of a reaper tick is true of the tick's statements on that row: the
    accounts the pass kept, each with the tick it ran in, judged once the pass is over."""

    __slots__ = ("accounts",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"accounts": (ACCOUNT, OpType.OK)}
    accounts: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        ticks: dict[int, tuple[Span, list[Op]]] = {}
        for account in self.accounts:
            span = ix.span_at(account)
            if span is None or span.entry != "reap":
                continue
            ticks.setdefault(span.key, (span, []))[1].append(account)
        for span, accounts in ticks.values():
            previous = span.key
            by_run: dict[str, list[Op]] | None = None
            for account in accounts:
                run = account[RUN]
                if run == span.run:
                    source: Sequence[Op] = records_in(ix, span, run)
                else:
                    if by_run is None:
                        by_run = _tick_records(ix, span, accounts[-1][0])
                    source = by_run.get(run, ())
                mine = [op for op in source if previous < op[INDEX] < account[INDEX]]
                _judge_account(tally, account, mine)
                previous = account[INDEX]
            _judge_counts(tally, span, accounts)
        return tally.finding("reaper accounts")


def _tick_records(ix: Index, span: Span, last: int) -> dict[str, list[Op]]:
    """The records the tick's process made while the tick was open, before history index ``last``
    (its last account), by run: ``records_in`` for every row the tick acted on, in one walk."""
    process = span.invoke[PROCESS]
    found: dict[str, list[Op]] = {}
    for op in ix.history[span.key + 1 : min(span.end, len(ix.history), last)]:
        if op[PROCESS] == process and op[OP] != SEGMENT:
            same = found.get(op[RUN])
            if same is None:
                found[op[RUN]] = [op]
            else:
                same.append(op)
    return found


def _judge_account(tally: Tally, account: Op, mine: Sequence[Op]) -> None:
    said, reason = account[VALUE].get("account"), account[VALUE].get("reason")
    took = [op for op in mine if op[OP] == STORE and matched(op)]
    why: str | None = None
    witness = tuple(op[INDEX] for op in took)
    if said == "skipped":
        if took:
            why = f"its {took[0][VALUE].get('transition')!r} of the row matched at {took[0][INDEX]}"
    elif said == "requeued":
        requeues = [op for op in took if number(op) == REQUEUE_STALE]
        sent = requeues and any(
            op[OP] == DISPATCH and op[TYPE] is OpType.OK and op[INDEX] > requeues[-1][0] for op in mine
        )
        if not sent:
            why = "no requeue (T13) of it matched" if not requeues else "its wake-up dispatch did not return"
    elif said == "dead_lettered":
        failed = [op for op in took if row_of(op).get("status") == "failed"]
        if not failed:
            why = "no statement of the tick left the row FAILED"
        else:
            written = row_of(failed[-1]).get("termination_reason")
            if written != reason or written not in DEAD_LETTER_REASONS:
                why = f"the row records reason {written!r} (the account says {reason!r})"
    else:
        why = f"{said!r} is no account the reaper gives"
    if why is None:
        tally.hold()
        return
    tally.violate(
        (*witness, account[INDEX]),
        f"the reaper counted run {account[RUN]!r} as {said} ({reason or 'no reason'}) at {account[INDEX]}, but {why}",
        at=account[INDEX],
    )


def _judge_counts(tally: Tally, span: Span, accounts: list[Op]) -> None:
    done = span.completion
    if done is None or done[TYPE] is not OpType.OK or not isinstance(done[VALUE].get("outcome"), dict):
        return
    printed = done[VALUE]["outcome"]
    counted = {name: sum(1 for a in accounts if a[VALUE].get("account") == name) for name in _COUNTS}
    wrong = [f"{name} {printed.get(name)!r} (accounts: {counted[name]})" for name in _COUNTS
             if printed.get(name) != counted[name]]  # fmt: skip
    if not wrong:
        tally.hold()
        return
    tally.violate(
        (done[INDEX],), f"the reaper tick ending at {done[INDEX]} printed " + ", ".join(wrong), at=done[INDEX]
    )


# ---- enqueue and cancel -------------------------------------------------------------------------


@invariant(
    "enqueue_cancel_result_true",
    Kind.ALWAYS,
    "enqueue succeeds only when its row was stored and its wake-up dispatched; cancel says true exactly "
    "when its cancel took effect",
    tags=(OUTCOME_ORACLE,),
)
class EnqueueCancelResultTrue(Machine):
    """What enqueue and cancel return is true of their statements and dispatches: judged once the pass
    is over, from the client segments it indexed and the records it listed for each."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for span in spans_of_entries(ix, _CLIENT_ENTRIES):
            done = span.completion
            if done is None or done[TYPE] is OpType.INFO:
                continue
            if span.entry == "enqueue":
                _judge_enqueue(tally, span, done)
            elif span.entry == "cancel" and done[TYPE] is OpType.OK:
                _judge_cancel(tally, span, done)
        return tally.finding("enqueue and cancel results")


def _judge_enqueue(tally: Tally, span: Span, done: Op) -> None:
    own = statements(span)
    inserted = any(number(op) == ENQUEUE_RUN and matched(op) for op in own)
    dispatches = [op for op in span.records if op[OP] == DISPATCH and op[TYPE] is not OpType.INVOKE]
    sent = any(op[TYPE] is OpType.OK for op in dispatches)
    threw = any(op[TYPE] is OpType.FAIL for op in dispatches)
    if done[TYPE] is OpType.OK:
        true = inserted and sent
        told = f"returned {done[VALUE].get('outcome')!r}"
    else:
        true = not inserted or threw
        told = f"threw {done[VALUE].get('error')!r}"
    if true:
        tally.hold()
        return
    facts = f"its insert {'matched' if inserted else 'never matched'}, its dispatch " + (
        "threw" if threw else "returned" if sent else "was never made"
    )
    tally.violate(
        (*[op[INDEX] for op in own], done[INDEX]),
        f"enqueue of run {span.run!r} {told} at {done[INDEX]}, but {facts}",
        at=done[INDEX],
    )


def _judge_cancel(tally: Tally, span: Span, done: Op) -> None:
    cancels = [op for op in statements(span) if number(op) == CANCEL]
    took = any(matched(op) for op in cancels)
    said = bool(done[VALUE].get("outcome"))
    if said == took:
        tally.hold()
        return
    tally.violate(
        (*[op[INDEX] for op in cancels], done[INDEX]),
        f"cancel of run {span.run!r} returned {said} at {done[INDEX]}, but its T8 "
        + ("matched" if took else "did not take effect"),
        at=done[INDEX],
    )


__all__ = ["DEAD_LETTER_REASONS", "EnqueueCancelResultTrue", "ReaperAccountTrue"]
