"""One shared pre-indexing pass over a history, computed once and read by every checker.

The checkers must stay linear in the history, so everything several of them need is
computed here in a single pass: the records bucketed by operation and type, the matched
store rows (the row's after-states, in order, also per T-number and per run), the
completion of every tool invoke, the landing each tool invoke produced, the executions that
landed, each run's final row, and the segments (:class:`Span`: which records ran in each, how
it completed, the row it left). The completion of every other invoke is paired on first use.
Checkers that must interleave two kinds of record walk a merge of two buckets; checkers that
judge "within one segment" walk the records of the few segments that can hold a case.

It knows only the history (:mod:`model.history`); it never sees the runtime or the world.
"""

from __future__ import annotations

import sys
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Any

from model.history import FINAL, LANDING, PHASE, SEGMENT, STORE, TOOL, Op, OpType, epoch_of

IDEMPOTENT_WRITE = "idempotent_write"
NON_IDEMPOTENT_WRITE = "non_idempotent_write"
WRITE_EFFECTS = frozenset({IDEMPOTENT_WRITE, NON_IDEMPOTENT_WRITE})
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
AUDIT_FAILED = "AuditPersistenceFailedException"

CLAIMS = frozenset({"T1", "T3", "T10"})
SETTLES = frozenset({"T7", "T8", "T14"})
REQUEUES = frozenset({"T11", "T13"})

_EMPTY: tuple[Op, ...] = ()
_INVOKE, _OK = OpType.INVOKE, OpType.OK
_TYPES = tuple(OpType)
_span_key = attrgetter("key")
_by_index = attrgetter("index")


def transition_number(op: Op) -> str:
    """The spec's T-number of a store record: 'T7 finishRun' -> 'T7' ('' when none).

    Compared exactly, never by prefix: 'T1' must not match 'T10', 'T11', 'T13', 'T14'.
    """
    name = op.get("transition")
    if not isinstance(name, str):
        return ""
    head, _, _ = name.strip().partition(" ")
    return head


def row_of(op: Op) -> Mapping[str, Any]:
    """The after-state row a store ok or a final record carries."""
    row = op.value.get("row")
    if type(row) is dict:  # the common case, without the slower ABC check
        return row
    if not isinstance(row, Mapping):
        raise ValueError(f"record {op.index} ({op.op} {op.type.value}) carries no row mapping")
    return row


def merged(*streams: Iterable[Op]) -> Iterator[Op]:
    """The records of several buckets in history order (each bucket already is).

    Sorting the concatenation is a C-level merge of the sorted runs (Timsort finds them),
    several times faster than ``heapq.merge``'s Python generator; ties keep stream order,
    as ``heapq.merge`` does. Empty buckets (most fail buckets) are dropped first, and a single
    stream left is walked as it is."""
    if len(streams) != 1:
        streams = tuple([stream for stream in streams if stream])
    if len(streams) == 1:
        return iter(streams[0])
    return iter(sorted(chain.from_iterable(streams), key=_by_index))


_NEVER = sys.maxsize


class Span:
    """One segment (an entry-point call): its invoke, the history index of its completion
    (``_NEVER`` while none), the records of its own run that ran in it and the row it left.

    A record of a process belongs to the innermost segment of that process open at it (the
    segment invokes and completions pair last-in-first-out per process, so a wake-up handled
    inline on the Sync transport is a segment nested inside the dispatching one). ``records``
    holds those of the segment's run, in history order, without segment records; a record of
    another run is attributed too (see :meth:`Index.span_at`) but not listed here.

    A plain slotted class rather than a dataclass: the index pass builds one per segment.
    """

    __slots__ = ("completion", "end", "entry", "identity", "invoke", "key", "last_row", "parent", "records", "run")

    def __init__(self, invoke: Op, parent: Span | None) -> None:
        value = invoke[6]
        self.invoke = invoke
        self.parent = parent
        """The segment of the same process open beneath this one at its invoke (None when none)."""
        self.end = _NEVER
        self.completion: Op | None = None
        self.last_row: Op | None = None
        """The run's latest matched store row when the segment completed (None before)."""
        self.records: list[Op] = []
        self.key = invoke[0]
        """A stable key for per-segment state: the index of the segment invoke."""
        self.entry = str(value.get("entry", ""))
        self.identity = str(value.get("identity", ""))
        self.run = invoke[4]

    def __repr__(self) -> str:
        return f"Span(key={self.key}, entry={self.entry!r}, run={self.run!r}, end={self.end})"


@dataclass(frozen=True, slots=True)
class Index:
    """Everything the checkers share, built by :meth:`of` in one pass."""

    history: tuple[Op, ...]
    buckets: Mapping[tuple[str, OpType], Sequence[Op]]
    rows: Sequence[Op]
    numbers: Mapping[int, str]
    rows_by_number: Mapping[str, Sequence[Op]]
    tool_completions: Mapping[int, Op]
    """History index of a tool invoke -> its completion (see :attr:`completions`)."""
    landing_of: Mapping[int, Op]
    landed: frozenset[tuple[str, Any]]
    finals: Mapping[str, Op]
    rows_by_run: Mapping[str, Sequence[Op]]
    """The matched store rows of each run, in history order."""
    spans: Sequence[Span]
    """Every segment, in the order of its invoke."""
    spans_by_process: Mapping[str, Sequence[Span]]
    """The segments of each process, in the order of their invoke."""
    _lazy: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, history: Iterable[Op]) -> Index:
        return _build(tuple(history))

    @property
    def completions(self) -> Mapping[int, Op]:
        """History index of every invoke -> its completion, paired as :func:`_pairing_key` says.

        The checkers need only the tool and segment pairs, which the index pass computes
        (:attr:`tool_completions`, :attr:`Span.completion`); this full map is a second pass,
        made on first use and kept."""
        found: Mapping[int, Op] | None = self._lazy.get("completions")
        if found is None:
            found = self._lazy["completions"] = _pair_all(self.history)
        return found

    @property
    def epoch_s(self) -> int:
        """The true clock's reading at time 0 (:func:`model.history.epoch_of`; 0 for a history that
        states none). A clock value a row holds (``lease_expires``) minus this is a record time."""
        found: int | None = self._lazy.get("epoch_s")
        if found is None:
            found = self._lazy["epoch_s"] = epoch_of(self.of_type(PHASE, OpType.INFO))
        return found

    def time_of(self, clock_s: float) -> float:
        """A clock reading a row holds (unix seconds) on the records' time axis."""
        return clock_s - self.epoch_s

    def of_type(self, op: str, type_: OpType) -> Sequence[Op]:
        """The records of one operation and type, in history order."""
        return self.buckets.get((op, type_), _EMPTY)

    def all(self, op: str) -> Iterator[Op]:
        """The records of one operation, any type, in history order."""
        buckets = self.buckets
        return merged(*[buckets.get((op, type_), _EMPTY) for type_ in _TYPES])

    def number(self, row: Op) -> str:
        """The T-number of one of :attr:`rows` (computed once, in the index pass)."""
        return self.numbers[row.index]

    def rows_of(self, number: str) -> Sequence[Op]:
        """The matched store rows of one T-number, in history order."""
        return self.rows_by_number.get(number, _EMPTY)

    def row_before(self, run: str, index: int) -> Op | None:
        """The run's latest matched store row recorded before history index ``index``."""
        rows = self.rows_by_run.get(run)
        if not rows:
            return None
        at = bisect_left(rows, index, key=_by_index)
        return rows[at - 1] if at else None

    def span_at(self, op: Op) -> Span | None:
        """The innermost segment of the record's process open at it (None outside every segment);
        ``op`` must not be a segment record.

        The latest segment of the process invoked before the record, or, if that one had
        completed, the first of its enclosing segments still open: any segment open at the
        record and invoked earlier was open beneath that latest one when it was invoked."""
        spans = self.spans_by_process.get(op[2])
        if not spans:
            return None
        index = op[0]
        at = bisect_left(spans, index, key=_span_key)
        span = spans[at - 1] if at else None
        while span is not None and span.end < index:
            span = span.parent
        return span

    def spans_of(self, records: Iterable[Op]) -> list[Span]:
        """The segments the given records ran in, each once, in the order of their invoke;
        only records of the segment's own run count."""
        found: dict[int, Span] = {}
        for op in records:
            span = self.span_at(op)
            if span is not None and span.run == op[4]:
                found[span.key] = span
        return [found[key] for key in sorted(found)]


def as_index(history: Iterable[Op] | Index) -> Index:
    return history if isinstance(history, Index) else Index.of(history)


def _pairing_key(op: Op) -> tuple[str, ...]:
    """Invokes and completions pair per (op, process, run); segments per (op, process).

    A segment's run may be unknown at its invoke (enqueue) and segments nest on the
    Sync transport, so segments pair last-in-first-out per process alone.
    """
    if op.op == SEGMENT:
        return (op.op, op.process)
    return (op.op, op.process, op.run)


def _call_key(op: Op) -> tuple[str, Any, Any]:
    return (op.run, op.get("call"), op.get("identity"))


def _pair_all(history: Iterable[Op]) -> dict[int, Op]:
    """Every invoke's completion: a landing completes nothing, a completion with no pending
    invoke of its key pairs with nothing."""
    pending: dict[tuple[str, ...], list[Op]] = {}
    completions: dict[int, Op] = {}
    for op in history:
        if op[5] is _INVOKE:
            pending.setdefault(_pairing_key(op), []).append(op)
        elif op[3] != LANDING:
            stack = pending.get(_pairing_key(op))
            if stack:
                completions[stack.pop()[0]] = op
    return completions


def _build(history: tuple[Op, ...]) -> Index:
    """The one pass over the history. A single loop over local names rather than methods: it
    runs once per record of every simulation. It pairs only what the checkers need (segments
    and tool calls, as :func:`_pairing_key` says); the open segments of a process are its
    pending segment invokes, so segment attribution falls out of their pairing."""
    buckets: defaultdict[tuple[str, OpType], list[Op]] = defaultdict(list)
    rows: list[Op] = []
    numbers: dict[int, str] = {}
    rows_by_number: dict[str, list[Op]] = {}
    rows_by_run: dict[str, list[Op]] = {}
    open_tools: dict[tuple[str, str], list[Op]] = {}
    open_segments: dict[str, list[Span]] = {}
    tool_completions: dict[int, Op] = {}
    open_calls: dict[tuple[str, Any, Any], list[Op]] = {}
    landing_of: dict[int, Op] = {}
    landed: set[tuple[str, Any]] = set()
    finals: dict[str, Op] = {}
    spans: list[Span] = []
    spans_by_process: dict[str, list[Span]] = {}
    invoke_type, ok_type = _INVOKE, _OK
    for op in history:
        index, _, process, name, run, type_, value = op
        buckets[name, type_].append(op)
        segments = open_segments.get(process)
        if name == SEGMENT:
            if type_ is invoke_type:
                if segments is None:
                    span = Span(op, None)
                    open_segments[process] = [span]
                    spans_by_process[process] = [span]
                else:
                    span = Span(op, segments[-1] if segments else None)
                    segments.append(span)
                    spans_by_process[process].append(span)
                spans.append(span)
            elif segments:
                span = segments.pop()
                span.end = index
                span.completion = op
                run_rows = rows_by_run.get(span.run)
                span.last_row = run_rows[-1] if run_rows else None
            continue
        if segments:
            span = segments[-1]
            if run == span.run:
                span.records.append(op)
        if name == STORE:
            if type_ is ok_type and value.get("matched") and value.get("row") is not None:
                transition = value.get("transition")
                number = transition.strip().partition(" ")[0] if isinstance(transition, str) else ""
                rows.append(op)
                numbers[index] = number
                same = rows_by_number.get(number)
                if same is None:
                    rows_by_number[number] = [op]
                else:
                    same.append(op)
                same = rows_by_run.get(run)
                if same is None:
                    rows_by_run[run] = [op]
                else:
                    same.append(op)
        elif name == TOOL:
            if type_ is invoke_type:
                open_tools.setdefault((process, run), []).append(op)
                open_calls.setdefault((run, value.get("call"), value.get("identity")), []).append(op)
                continue
            stack = open_tools.get((process, run))
            if stack:
                invoke = stack.pop()
                tool_completions[invoke[0]] = op
                calls = open_calls.get(_call_key(invoke), [])
                for i, call in enumerate(calls):
                    if call is invoke:
                        del calls[i]
                        break
        elif name == LANDING:
            if type_ is not invoke_type:
                landed.add((run, value.get("execution")))
                outstanding = open_calls.get((run, value.get("call"), value.get("identity")))
                if outstanding:
                    landing_of.setdefault(outstanding[-1][0], op)
        elif name == FINAL and type_ is not invoke_type:
            finals[run] = op
    return Index(
        history=history,
        buckets=dict(buckets),  # a plain dict: a lookup of a missing bucket must not add it
        rows=rows,
        numbers=numbers,
        rows_by_number=rows_by_number,
        tool_completions=tool_completions,
        landing_of=landing_of,
        landed=frozenset(landed),
        finals=finals,
        rows_by_run=rows_by_run,
        spans=spans,
        spans_by_process=spans_by_process,
    )


__all__ = [
    "AUDIT_FAILED",
    "CLAIMS",
    "IDEMPOTENT_WRITE",
    "NON_IDEMPOTENT_WRITE",
    "REQUEUES",
    "SETTLES",
    "TERMINAL_STATUSES",
    "WRITE_EFFECTS",
    "Index",
    "Span",
    "as_index",
    "merged",
    "row_of",
    "transition_number",
]
