"""The in-memory database: run rows and the event stream, applying the model's transitions atomically.

Plain Python, no simpy and no randomness: the synchronous test driver and the simpy
world share it. Faults are not injected here; the caller decides whether a statement
fails before it reaches the store. Iteration order is insertion order, so every scan
is deterministic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from model.records import EventRow, RunRow
from model.requests import UpdateResult
from model.transitions import Transition, find_stale_running, max_event_sequence, replace_row
from model.vocab import RunStatus


def _row_comparer() -> Callable[[RunRow, RunRow], bool]:
    """``new != row`` for two RunRows, generated once: column by column, an identical object
    counting as equal (as RunRow's own tuple comparison does), ``tstamp`` first since nearly
    every statement sets it, so a changed row is told apart at the first column compared."""
    names = [f.name for f in dataclasses.fields(RunRow) if f.compare]
    names.sort(key=lambda n: n != "tstamp")
    source = (
        "def differs(a, b):\n    return (\n"
        + "".join(f"        {'or ' if i else ''}(a.{n} is not b.{n} and a.{n} != b.{n})\n" for i, n in enumerate(names))
        + "    )\n"
    )
    scope: dict[str, Any] = {}
    exec(source, scope)
    differs: Callable[[RunRow, RunRow], bool] = scope["differs"]
    return differs


_differs = _row_comparer()

_RUNNING = RunStatus.RUNNING
_REFUSED = UpdateResult(False, False)
_CHANGED = UpdateResult(True, True)
_UNCHANGED = UpdateResult(True, False)
"""The three results an UPDATE can report: frozen values, shared rather than built per statement."""


class Database:
    """`tx_nrllm_agentrun` + `tx_nrllm_agentrun_event`, keyed by uuid."""

    __slots__ = ("_next_uid", "_running", "events", "rows")

    def __init__(self) -> None:
        self.rows: dict[str, RunRow] = {}
        self.events: dict[str, list[EventRow]] = {}
        self._next_uid = 1
        self._running: dict[str, RunRow] = {}
        """The rows whose status is RUNNING (kept with ``rows``): the only rows T12 can select."""

    def _place(self, row: RunRow) -> None:
        self.rows[row.uuid] = row
        if row.status is _RUNNING:
            self._running[row.uuid] = row
        else:
            self._running.pop(row.uuid, None)

    def find(self, uuid: str) -> RunRow | None:
        return self.rows.get(uuid)

    def has_running(self) -> bool:
        """Whether any row is RUNNING (the world's end grants a live run grace while one is)."""
        return bool(self._running)

    def insert(self, row: RunRow) -> RunRow:
        """T1/T2: the store assigns the auto-increment uid."""
        if row.uuid in self.rows:
            raise ValueError(f"duplicate uuid {row.uuid}")
        stored = replace_row(row, uid=self._next_uid)
        self._next_uid += 1
        self._place(stored)
        return stored

    def put(self, row: RunRow) -> None:
        """Place a row as-is (test fixtures only)."""
        self._place(row)
        self._next_uid = max(self._next_uid, row.uid + 1)

    def update(self, uuid: str, transition: Transition) -> tuple[UpdateResult, RunRow | None]:
        """Apply one guarded UPDATE atomically; returns the result and the row after it."""
        row = self.rows.get(uuid)
        if row is None:
            return _REFUSED, None
        new = transition.apply(row)
        if new is None:
            return _REFUSED, row
        self.rows[uuid] = new  # _place, inlined: every guarded UPDATE passes here
        if new.status is _RUNNING:
            self._running[uuid] = new
        else:
            self._running.pop(uuid, None)
        return (_CHANGED if _differs(new, row) else _UNCHANGED), new

    def select_stale(self, now: int, limit: int) -> tuple[RunRow, ...]:
        """T12 over the running rows only: the same rows it would pick from all of them, in the
        same order (it sorts by lease expiry and uid, which no two rows share). With no running row
        there is nothing to select (most reaper ticks)."""
        running = self._running
        if not running:
            return ()
        return tuple(find_stale_running(running.values(), now, limit))

    def insert_event(self, uuid: str, event: EventRow) -> None:
        self.events.setdefault(uuid, []).append(event)

    def max_sequence(self, uuid: str) -> int:
        return max_event_sequence(self.events.get(uuid, []))

    def count_events(self, uuid: str) -> int:
        return len(self.events.get(uuid, []))

    def sequences(self, uuid: str) -> list[int]:
        return [e.sequence for e in self.events.get(uuid, [])]
