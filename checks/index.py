"""The shared index of one history: what several checkers need, computed once, in one pass.

The matched store rows (the row's after-states, in order, also per T-number and per run), the
completion of every tool invoke, the landing each tool invoke produced, the executions that
landed, each run's final row, and the segments (:class:`Span`: how each completed, the row it
left, and the records that ran in it). The pass that builds it is the judging pass of
:mod:`checks.fused`, which feeds the checkers in the same walk; ``Index.of`` runs it
alone. The records by operation and type (:attr:`Index.buckets`), the completion of every other
invoke and a reaper tick's records are listed on first use. Checkers written against the index
(rather than fed by the pass) interleave two kinds of record by walking a merge of two buckets,
and judge "within one segment" by walking the records of the few segments that can hold a case.

It knows only the history (:mod:`checks.history`); it never sees the runtime or the world.
"""

from __future__ import annotations

import sys
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Any

from checks.history import INDEX, LANDING, OP, PHASE, PROCESS, RUN, SEGMENT, STORE, TYPE, VALUE, Op, OpType

IDEMPOTENT_WRITE = "idempotent_write"
NON_IDEMPOTENT_WRITE = "non_idempotent_write"
WRITE_EFFECTS = frozenset({IDEMPOTENT_WRITE, NON_IDEMPOTENT_WRITE})
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
AUDIT_FAILED = "AuditPersistenceFailedException"


_EMPTY: tuple[Op, ...] = ()
_INVOKE, _OK, _FAIL, _INFO = OpType.INVOKE, OpType.OK, OpType.FAIL, OpType.INFO
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
UNLISTED_ENTRIES = frozenset({"reap"})
"""Entry points whose segments' records the pass does not list (read back on first use): see :class:`Span`."""


class Span:
    """One segment (an entry-point call): its invoke, the history index of its completion
    (``_NEVER`` while none), the records of its own run that ran in it and the row it left.

    A record of a process belongs to the innermost segment of that process open at it (the
    segment invokes and completions pair last-in-first-out per process, so a wake-up handled
    inline on the Sync transport is a segment nested inside the dispatching one). ``records``
    holds those of the segment's run, in history order, without segment records; a record of
    another run is attributed too (see :meth:`Index.span_at`) but not listed here. The pass lists
    them as it walks, with the segment's statements, for every segment but the reaper's ticks
    (:data:`UNLISTED_ENTRIES`): the outcome oracles read the records of every segment of a run or
    a client call, and reading them back from the history (a slice per segment, with the records of
    every other process in between) costs more than listing them (benchmarks/PROFILE.md). A tick's
    records are read from the history on first use: a reaper that
    ticks every second makes most segments, and few checkers walk one. (A tick that found nothing is
    one ``idle`` record and no segment at all: see :data:`checks.history.IDLE`.)

    A plain slotted class rather than a dataclass: the index pass builds one per segment. It
    refers to the history, never to other segments' lists, so an index is freed by reference
    counting (no cycle for the collector to walk).
    """

    __slots__ = (
        "_history",
        "_records",
        "_statements",
        "completion",
        "end",
        "entry",
        "identity",
        "invoke",
        "key",
        "last_row",
        "parent",
        "run",
    )

    def __init__(self, invoke: Op, parent: Span | None, history: tuple[Op, ...], by_pass: bool = False) -> None:
        """``by_pass``: made by the judging pass, which lists the records of a segment whose entry
        it lists as it walks; any other segment reads them from ``history`` on first use."""
        value = invoke[VALUE]
        self.invoke = invoke
        self.parent = parent
        """The segment of the same process open beneath this one at its invoke (None when none)."""
        self.end = _NEVER
        self.completion: Op | None = None
        self.last_row: Op | None = None
        """The run's latest matched store row when the segment completed (None before)."""
        self.key = invoke[INDEX]
        """A stable key for per-segment state: the index of the segment invoke."""
        entry = value.get("entry", "")
        self.entry = entry if type(entry) is str else str(entry)
        identity = value.get("identity", "")
        self.identity = identity if type(identity) is str else str(identity)
        self.run = invoke[RUN]
        if not by_pass or self.entry in UNLISTED_ENTRIES:
            self._records: list[Op] | None = None
            self._statements: list[Op] | None = None
        else:  # the pass appends this segment's records (and statements) as it reaches them
            self._records = []
            self._statements = []
        self._history = history

    @property
    def records(self) -> list[Op]:
        """Only once the history is indexed (a handler of the pass asks :meth:`records_before`)."""
        found = self._records
        if found is None:
            found = self._records = self._records_until(self.completion)
        return found

    @property
    def statements(self) -> list[Op]:
        """The completions (ok or fail) of the guarded statements among :attr:`records`: listed by the
        pass with the records, or once on first use (the outcome oracles each ask for them)."""
        found = self._statements
        if found is None:
            found = self._statements = [
                op for op in self.records if op[OP] == STORE and (op[TYPE] is _OK or op[TYPE] is _FAIL)
            ]
        return found

    def records_before(self, op: Op) -> list[Op]:
        """The segment's records up to (without) ``op``; a handler of the pass may ask while ``op``
        is being dispatched (nothing is kept: the segment may not be complete yet)."""
        listed = self._records
        if listed is not None:  # listed by the pass (the records so far), or complete once read after it
            return listed[: bisect_left(listed, op[INDEX], key=_by_index)]
        return self._records_until(op)

    def _records_until(self, last: Op | None) -> list[Op]:
        """The records of the segment's process and run after its invoke and before ``last`` (the
        history's end when None) that no segment nested in it holds: segment records of the process
        open and close the nested ones (they pair last-in-first-out, as the index pairs them)."""
        history = self._history
        process, run = self.invoke[PROCESS], self.run
        stop = len(history) if last is None else _position(history, last)
        out: list[Op] = []
        depth = 0
        for op in history[_position(history, self.invoke) + 1 : stop]:
            if op[PROCESS] != process:
                continue
            if op[OP] == SEGMENT:
                depth += 1 if op[TYPE] is _INVOKE else -1
            elif depth == 0 and op[RUN] == run:
                out.append(op)
        return out

    def __repr__(self) -> str:
        return f"Span(key={self.key}, entry={self.entry!r}, run={self.run!r}, end={self.end})"


def _position(history: tuple[Op, ...], op: Op) -> int:
    """Where ``op`` is in the history: at its index unless the history was renumbered."""
    index = op[INDEX]
    if 0 <= index < len(history) and history[index] is op:
        return index
    return next(i for i, other in enumerate(history) if other is op)


@dataclass(frozen=True, slots=True)
class Index:
    """Everything the checkers share, built by :meth:`of` in one pass."""

    history: tuple[Op, ...]
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
    landings: int = 0
    """Landing records of any type."""
    tool_invokes: Sequence[Op] = ()
    """Every tool invoke, in history order."""
    refused: Sequence[Op] = ()
    """The store completions (ok) that matched nothing, in history order."""
    listed_spans: Sequence[Span] = ()
    """The segments whose records the pass listed (all but :data:`UNLISTED_ENTRIES`'), in the order of
    their invoke: the few a checker of runs and client calls walks, without the reaper's many ticks."""
    _lazy: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def buckets(self) -> Mapping[tuple[str, OpType], Sequence[Op]]:
        """The records by operation and type, in history order, listed on first use: the judging
        pass lists only the kinds its machines read (a second walk here is the price of a checker
        written against the index, and of the witness recognisers, which read few histories)."""
        found: dict[tuple[str, OpType], list[Op]] | None = self._lazy.get("buckets")
        if found is None:
            found = self._lazy["buckets"] = {}
            for op in self.history:
                same = found.get((op[OP], op[TYPE]))
                if same is None:
                    found[op[OP], op[TYPE]] = [op]
                else:
                    same.append(op)
        return found

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
        """The true clock's reading at time 0 (:func:`checks.history.epoch_of`; 0 for a history that
        states none). A clock value a row holds (``lease_expires``) minus this is a record time."""
        found: int | None = self._lazy.get("epoch_s")
        if found is None:
            found = self._lazy["epoch_s"] = epoch_in(self.history)
        return found

    def time_of(self, clock_s: float) -> float:
        """A clock reading a row holds (unix seconds) on the records' time axis."""
        return clock_s - self.epoch_s

    def of_type(self, op: str, type_: OpType) -> Sequence[Op]:
        """The records of one operation and type, in history order (a kind the pass listed for its
        machines is read from that list, without listing every kind)."""
        streams: dict[tuple[str, Any], list[Op]] | None = self._lazy.get("streams")
        if streams is not None:
            found = streams.get((op, type_))
            if found is not None:
                return found
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
        spans = self.spans_by_process.get(op[PROCESS])
        if not spans:
            return None
        index = op[INDEX]
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
            if span is not None and span.run == op[RUN]:
                found[span.key] = span
        return [found[key] for key in sorted(found)]


def epoch_in(history: Iterable[Op]) -> int:
    """:func:`checks.history.epoch_of` over the 'chaos' phase records (process ``nemesis``, type info)
    only, walking the history until the first: the world records it first, so this reads one record
    rather than listing the buckets."""
    for op in history:
        if op[OP] == PHASE and op[TYPE] is _INFO and op[VALUE].get("phase") == "chaos":
            return int(op[VALUE].get("epoch_s") or 0)
    return 0


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
        if op[TYPE] is _INVOKE:
            pending.setdefault(_pairing_key(op), []).append(op)
        elif op[OP] != LANDING:
            stack = pending.get(_pairing_key(op))
            if stack:
                completions[stack.pop()[0]] = op
    return completions


__all__ = [
    "AUDIT_FAILED",
    "IDEMPOTENT_WRITE",
    "NON_IDEMPOTENT_WRITE",
    "TERMINAL_STATUSES",
    "WRITE_EFFECTS",
    "Index",
    "Span",
    "epoch_in",
    "merged",
    "row_of",
    "transition_number",
]
