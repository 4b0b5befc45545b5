"""One shared pre-indexing pass over a history, computed once and read by every checker.

The checkers must stay linear in the history, so everything several of them need is
computed here in a single pass: the records bucketed by operation and type, the matched
store rows (the row's after-states, in order), the completion of every invoke, the
landing each tool invoke produced, the executions that landed and each run's final row.
Checkers that must interleave two kinds of record walk a merge of two buckets.

It knows only the history (:mod:`model.history`); it never sees the runtime or the world.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import Any

from model.history import FINAL, LANDING, SEGMENT, STORE, TOOL, Op, OpType

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
    as ``heapq.merge`` does."""
    if len(streams) == 1:
        return iter(streams[0])
    return iter(sorted(chain.from_iterable(streams), key=_by_index))


@dataclass(frozen=True, slots=True)
class Index:
    """Everything the checkers share, built by :meth:`of` in one pass."""

    history: tuple[Op, ...]
    buckets: Mapping[tuple[str, OpType], Sequence[Op]]
    rows: Sequence[Op]
    numbers: Mapping[int, str]
    rows_by_number: Mapping[str, Sequence[Op]]
    completions: Mapping[int, Op]
    landing_of: Mapping[int, Op]
    landed: frozenset[tuple[str, Any]]
    finals: Mapping[str, Op]

    @classmethod
    def of(cls, history: Iterable[Op]) -> Index:
        return _build(tuple(history))

    def of_type(self, op: str, type_: OpType) -> Sequence[Op]:
        """The records of one operation and type, in history order."""
        return self.buckets.get((op, type_), _EMPTY)

    def all(self, op: str) -> Iterator[Op]:
        """The records of one operation, any type, in history order."""
        return merged(*(self.buckets.get((op, type_), _EMPTY) for type_ in OpType))

    def number(self, row: Op) -> str:
        """The T-number of one of :attr:`rows` (computed once, in the index pass)."""
        return self.numbers[row.index]

    def rows_of(self, number: str) -> Sequence[Op]:
        """The matched store rows of one T-number, in history order."""
        return self.rows_by_number.get(number, _EMPTY)


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


@dataclass(slots=True)
class _Builder:
    buckets: dict[tuple[str, OpType], list[Op]]
    rows: list[Op]
    numbers: dict[int, str]
    rows_by_number: dict[str, list[Op]]
    pending: dict[tuple[str, ...], list[Op]]
    completions: dict[int, Op]
    open_calls: dict[tuple[str, Any, Any], list[Op]]
    landing_of: dict[int, Op]
    landed: set[tuple[str, Any]]
    finals: dict[str, Op]

    def add(self, op: Op) -> None:
        # Tuple positions rather than field names: this runs once per record of every
        # simulation (op[3] = op, op[5] = type, op[6] = value).
        name, type_ = op[3], op[5]
        bucket = self.buckets.get((name, type_))
        if bucket is None:
            bucket = self.buckets[(name, type_)] = []
        bucket.append(op)
        if type_ is _INVOKE:
            self._invoke(op)
        elif name == LANDING:
            self._landing(op)
        else:
            self._complete(op)
            if name == STORE:
                value = op[6]
                if type_ is _OK and value.get("matched") and value.get("row") is not None:
                    self._row(op)
            elif name == FINAL:
                self.finals[op.run] = op

    def _row(self, op: Op) -> None:
        number = transition_number(op)
        self.rows.append(op)
        self.numbers[op.index] = number
        self.rows_by_number.setdefault(number, []).append(op)

    def _invoke(self, op: Op) -> None:
        key = (SEGMENT, op[2]) if op[3] == SEGMENT else (op[3], op[2], op[4])  # = _pairing_key(op)
        stack = self.pending.get(key)
        if stack is None:
            stack = self.pending[key] = []
        stack.append(op)
        if op[3] == TOOL:
            self.open_calls.setdefault(_call_key(op), []).append(op)

    def _complete(self, op: Op) -> None:
        stack = self.pending.get((SEGMENT, op[2]) if op[3] == SEGMENT else (op[3], op[2], op[4]))
        if not stack:
            return
        invoke = stack.pop()
        self.completions[invoke[0]] = op
        if op[3] == TOOL:
            calls = self.open_calls.get(_call_key(invoke), [])
            for i, call in enumerate(calls):
                if call is invoke:
                    del calls[i]
                    break

    def _landing(self, op: Op) -> None:
        self.landed.add((op.run, op.get("execution")))
        calls = self.open_calls.get(_call_key(op))
        if calls:
            self.landing_of.setdefault(calls[-1].index, op)


def _call_key(op: Op) -> tuple[str, Any, Any]:
    return (op.run, op.get("call"), op.get("identity"))


def _build(history: tuple[Op, ...]) -> Index:
    b = _Builder({}, [], {}, {}, {}, {}, {}, {}, set(), {})
    for op in history:
        b.add(op)
    return Index(
        history=history,
        buckets=b.buckets,
        rows=b.rows,
        numbers=b.numbers,
        rows_by_number=b.rows_by_number,
        completions=b.completions,
        landing_of=b.landing_of,
        landed=frozenset(b.landed),
        finals=b.finals,
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
    "as_index",
    "merged",
    "row_of",
    "transition_number",
]
