"""Invariants of the run row's lifecycle (ADR-092, ADR-095, ADR-104, spec section 2):
terminal is terminal, settles come from the owner or an unguarded path, the requeue budget
holds, a retryable failure is not dead-lettered as not retryable, and every run ends.

Pure checkers over the shared index of one history; they know only the history, never the
runtime or the world that produced it.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import attrgetter
from typing import Any, ClassVar

from checks.fused import Key, Machine
from checks.history import INDEX, OP, PROVIDER, READ, RUN, TYPE, VALUE, Op, OpType
from checks.horizon import movers
from checks.index import TERMINAL_STATUSES, Index, Span, merged, row_of
from checks.judgement import Finding, Tally, invariant
from checks.own import fence_is_strict
from checks.verdict import Kind
from model.constants import MAX_REQUEUES
from model.statements import FINISH_RUN, REQUEUE, REQUEUES

_TOTALS = ("status", "iterations", "total_tokens")
_STRANDED = frozenset({"queued", "running"})
# ADR-095 / spec 4: the failure classes FailureClass::isRetryable accepts.
RETRYABLE_CLASSES: frozenset[str] = frozenset({"connection", "rateLimit", "serverError", "circuitOpen"})
_WORKER_ENTRY = "run_queued"
_by_index = attrgetter("index")
_REQUEUE_NUMBERS = tuple(sorted(REQUEUES))
_RESOLVES = frozenset(
    {FINISH_RUN, REQUEUE}
)  # how a queued segment's recovery settles a failure: dead-letter or requeue


@invariant(
    "terminal_is_terminal",
    Kind.ALWAYS,
    "a terminal row never changes status or totals again (ADR-092)",
)
class TerminalIsTerminal(Machine):
    """Once a run's row is terminal, no later row of it changes status, iterations or tokens:
    the index's rows, in order."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        terminal: dict[str, Op] = {}
        tally = Tally()
        for op in ix.rows:
            first = terminal.get(op[RUN])
            if first is None:
                row = op[VALUE].get("row")
                if (row if type(row) is dict else row_of(op)).get("status") in TERMINAL_STATUSES:
                    terminal[op[RUN]] = op
                    tally.hold()  # a case: a run that reached a terminal row (its later writes are judged too)
                continue
            changed = _changed_totals(row_of(first), row_of(op))
            if not changed:
                tally.hold()
                continue
            tally.violate(
                (first.index, op.index),
                f"run {op.run!r} was terminal at {first.index}; {op.get('transition')!r} at {op.index} "
                f"changed {', '.join(changed)}",
            )
        return tally.finding("writes to terminal rows")


def _changed_totals(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    return [f"{k} {before.get(k)!r}->{after.get(k)!r}" for k in _TOTALS if before.get(k) != after.get(k)]


@invariant(
    "requeue_budget_respected",
    Kind.ALWAYS,
    "no row is requeued more than MAX_REQUEUES times",
)
class RequeueBudgetRespected(Machine):
    """No requeue (T11/T13) leaves a row with requeue_count above MAX_REQUEUES: each of the index's
    requeue rows, in history order, once the pass is over."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for op in merged(*[ix.rows_of(number) for number in _REQUEUE_NUMBERS]):
            count = row_of(op).get("requeue_count")
            if isinstance(count, int) and count > MAX_REQUEUES:
                tally.violate(
                    (op.index,),
                    f"{op.get('transition')!r} at {op.index} requeued run {op.run!r} a {count}th time "
                    f"(MAX_REQUEUES={MAX_REQUEUES})",
                )
            else:
                tally.hold()
        return tally.finding("requeues")


@invariant(
    "retryable_failure_retried",
    Kind.ALWAYS,
    "a retryable provider failure is retried while budget remains, never dead-lettered not_retryable (ADR-095)",
)
class RetryableFailureRetried(Machine):
    """On a worker segment, a provider failure whose true class is retryable is not settled
    ``not_retryable`` by that segment, unless its recovery's read of the row returned a write fence whose
    stamped call truly is a non-idempotent write (or an unknown name): the fence's true effect, never
    its value or the decider's note.

    The failure is resolved by the segment's next matched T7 or T11 of the run under the
    segment's identity: a requeue, or a dead-letter ``retries_exhausted``, holds. A failure
    with no true class, or a segment that never settles (lease lost, crashed), is not judged.
    Fed the provider failures; the worker segments that had one are walked at the end.
    """

    __slots__ = ("spans",)

    def __init__(self) -> None:
        self.spans: dict[int, Span] = {}

    HANDLERS: ClassVar[Mapping[Key, str]] = {(PROVIDER, OpType.FAIL): "on_failure"}

    def on_failure(self, op: Op) -> None:
        span = self.live.own_span(op)
        if span is not None and span.entry == _WORKER_ENTRY:
            self.spans[span.key] = span

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        numbers = ix.numbers
        for span in self.spans.values():
            failure: Op | None = None
            fenced: Op | None = None
            for op in span.records:
                name, type_ = op[OP], op[TYPE]
                if name == PROVIDER:
                    if type_ is OpType.FAIL:
                        fenced = None
                        failure = op if op.get("true_class") in RETRYABLE_CLASSES else None
                elif failure is None:
                    continue
                elif name == READ:
                    if type_ is OpType.OK and fence_is_strict(ix, op.run, op.get("fence"), op.index):
                        fenced = op
                elif numbers.get(op[INDEX]) in _RESOLVES and op.get("identity") == span.identity:
                    _judge_retry(tally, ix, failure, op, fenced)
                    failure = fenced = None
        return tally.finding("retryable provider failures")


def _judge_retry(tally: Tally, ix: Index, failure: Op, store: Op, fence: Op | None) -> None:
    reason = row_of(store).get("termination_reason")
    if ix.number(store) != FINISH_RUN or reason != "not_retryable" or fence is not None:
        tally.hold()
        return
    tally.violate(
        (failure.index, store.index),
        f"run {store.run!r} was dead-lettered not_retryable at {store.index} after a retryable provider "
        f"failure ({failure.get('true_class')}, classified {failure.get('failure_class')!r}) at "
        f"{failure.index}, with no non-idempotent fence standing",
        at=store.index,
    )


@invariant(
    "every_run_terminates",
    Kind.EVENTUALLY,
    "after the quiet phase no run is QUEUED or RUNNING (nothing stranded)",
)
class EveryRunTerminates(Machine):
    """At the end no run's final row is QUEUED or RUNNING with nothing left to move it: the final rows
    the index kept. A run something still moves (an open segment, a wake-up on the bus, a lease the
    reaper has yet to find: :mod:`checks.horizon`) was cut by the horizon: unknown, never violated."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        if not ix.finals:
            tally.unknown((), "the history has no final rows")
        unfinished = [f for f in sorted(ix.finals.values(), key=_by_index) if row_of(f).get("status") in _STRANDED]
        moving = movers(ix.history) if unfinished else None
        for final in sorted(ix.finals.values(), key=_by_index):
            status = row_of(final).get("status")
            if status not in _STRANDED:
                tally.hold()
                continue
            assert moving is not None
            mover = moving.mover(final, ix.epoch_s)
            if mover is None:
                tally.violate((final.index,), f"run {final.run!r} ended {status!r} (stranded)")
            else:
                tally.unknown((final.index,), f"run {final.run!r} ended {status!r}, cut by the horizon: {mover}")
        return tally.finding("final rows")


__all__ = [
    "RETRYABLE_CLASSES",
    "EveryRunTerminates",
    "RequeueBudgetRespected",
    "RetryableFailureRetried",
    "TerminalIsTerminal",
]
