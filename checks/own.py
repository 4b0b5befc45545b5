"""What one segment physically did, as the history shows it: shared by the outcome oracles.

A segment's *own* records are those of its process between its invoke and its completion that the
shared index attributes to it (records of calls nested inside it, on the Sync transport, belong to
the nested segment). Helpers here read only ground truth: the statements the store applied or
refused and the rows it left, the reads it answered, the calls the world ran, the true effect of a
tool the world records on each call. Nothing here reads a label the runtime attached to a request
to decide what happened (the ``site`` of a read is used only to say which boundary it was).

Knows only the history, through the shared index.
"""

from __future__ import annotations

from collections.abc import Sequence

from checks.history import INDEX, OP, PROCESS, RUN, TYPE, VALUE, Op, OpType
from checks.index import NON_IDEMPOTENT_WRITE, UNLISTED_ENTRIES, WRITE_EFFECTS, Index, Span, row_of
from model.statements import MARK_PENDING_EFFECT

UNKNOWN_EFFECT = "unknown"
STRICT_EFFECTS = frozenset({NON_IDEMPOTENT_WRITE, UNKNOWN_EFFECT})
"""True effects a retry must not repeat: a non-idempotent write, or a name no loaded code has (which
ADR-111 resolves to the strictest effect)."""
_OK, _FAIL = OpType.OK, OpType.FAIL


def spans_of_entries(ix: Index, entries: frozenset[str]) -> list[Span]:
    """The segments of the given entry points, in the order of their invoke. Read from the segments
    whose records the pass listed when no entry asked for is a reaper's tick: a reaper that ticks
    every second makes most segments, and no outcome oracle of a run needs to look at one."""
    spans = ix.spans if not UNLISTED_ENTRIES.isdisjoint(entries) else ix.listed_spans
    return [span for span in spans if span.entry in entries]


def statements(span: Span) -> list[Op]:
    """The completions (ok or fail) of the guarded statements the segment issued on its run."""
    return span.statements


def matched(op: Op) -> bool:
    """A store completion that took effect (matched a row and carries its after-state)."""
    return op[TYPE] is _OK and bool(op[VALUE].get("matched")) and op[VALUE].get("row") is not None


def number(op: Op) -> str:
    """The spec's T-number of a store record ('T7 finishRun' -> 'T7')."""
    name = op[VALUE].get("transition")
    return name.partition(" ")[0] if isinstance(name, str) else ""


def records_in(ix: Index, span: Span, run: str) -> Sequence[Op]:
    """The records of ``run`` the segment's process made while the segment was open (its own run's
    are the span's records; a reaper tick's, on the rows it acted on, are gathered from the history)."""
    if run == span.run:
        return span.records
    end = min(span.end, len(ix.history))
    process = span.invoke[PROCESS]
    return [
        op for op in ix.history[span.key + 1 : end] if op[PROCESS] == process and op[RUN] == run and op[OP] != "segment"
    ]


def left_row(ix: Index, span: Span) -> Op | None:
    """The row the call left: the run's latest matched statement issued by the call's own process
    (the call itself or a call nested in it) before the call returned; None when it changed none."""
    rows: Sequence[Op] = ix.rows_by_run.get(span.run, ())
    process = span.invoke[PROCESS]
    for i in range(len(rows) - 1, -1, -1):
        op = rows[i]
        if op.index < span.end and op.index > span.key and op.process == process:
            return op
        if op.index <= span.key:
            break
    return None


def stamp_of(ix: Index, run: str, fence: str, before: int) -> Op | None:
    """The statement that put the write fence ``fence`` on the run's row: its latest matched T5
    before history index ``before`` that left that fence."""
    rows: Sequence[Op] = ix.rows_by_run.get(run, ())
    for i in range(len(rows) - 1, -1, -1):
        op = rows[i]
        if op.index >= before:
            continue
        if ix.numbers.get(op.index) == MARK_PENDING_EFFECT and row_of(op).get("pending_effect") == fence:
            return op
    return None


def stamped_call(ix: Index, stamp: Op) -> Op | None:
    """The call a fence stamp announced: the stamping process's first tool invoke of the run after it."""
    for op in ix.tool_invokes:
        if op[INDEX] > stamp[INDEX] and op[RUN] == stamp[RUN] and op[PROCESS] == stamp[PROCESS]:
            return op
    return None


def fence_is_strict(ix: Index, run: str, fence: object, before: int) -> bool:
    """Whether a write fence the store held (or returned) before ``before`` truly stands for a write a
    retry must not repeat: the call its stamp announced is a non-idempotent write, or a name no loaded
    code has. Judged from the call's true effect, never from the fence's value; a stamp whose call
    never started is taken at its value (nothing else can say what it announced: a dead-letter over
    it is a cost, counted as one with no write in flight)."""
    if fence not in WRITE_EFFECTS:
        return False
    stamp = stamp_of(ix, run, str(fence), before)
    call = stamped_call(ix, stamp) if stamp is not None else None
    if call is None:
        return fence == NON_IDEMPOTENT_WRITE
    return call[VALUE].get("true_effect") in STRICT_EFFECTS


__all__ = [
    "STRICT_EFFECTS",
    "UNKNOWN_EFFECT",
    "fence_is_strict",
    "left_row",
    "matched",
    "number",
    "records_in",
    "spans_of_entries",
    "stamp_of",
    "stamped_call",
    "statements",
]
