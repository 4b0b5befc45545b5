"""The in-memory database: run rows and the event stream, applying the model's transitions atomically.

Plain Python, no simpy and no randomness: the synchronous test driver and the simpy
world share it. Faults are not injected here; the caller decides whether a statement
fails before it reaches the store. Iteration order is insertion order, so every scan
is deterministic.
"""

from __future__ import annotations

from model.collation import COLLATIONS, unicode_ci_key
from model.records import EventRow, RunRow
from model.requests import UpdateResult
from model.transitions import (
    ExtendLease,
    MarkPendingEffect,
    RenewLease,
    Transition,
    find_stale_running,
    max_event_sequence,
    replace_row,
)
from model.vocab import RunStatus


def _differs(new: RunRow, row: RunRow) -> bool:
    """``new != row`` for the row an UPDATE wrote and the row before it (the result's ``changed``).

    The columns statements change most are compared first (in ``default``, a changed row differs in
    its ``tstamp``, ``lease_expires``, ``pending_effect`` or ``status`` in every case measured), each
    a plain int, str or enum comparison; a row equal in all four is compared whole by RunRow's own
    ``__eq__`` (its fields as tuples, compared in C), which is cheaper than testing the other thirteen
    columns one by one, and is what "changed" means. About a third of the UPDATEs change nothing."""
    return (
        new.tstamp != row.tstamp
        or new.lease_expires != row.lease_expires
        or new.pending_effect != row.pending_effect
        or new.status != row.status
        or new != row
    )


_RUNNING = RunStatus.RUNNING
_REFUSED = UpdateResult(False, False)
_CHANGED = UpdateResult(True, True)
_UNCHANGED = UpdateResult(True, False)
"""The three results an UPDATE can report: frozen values, shared rather than built per statement."""


_KEEPS_CLAIM = (RenewLease, MarkPendingEffect, ExtendLease)
"""Owner-guarded transitions whose SET leaves claimed_by alone (T7 and T11 write '')."""


def _guard_identity(transition: Transition) -> str | None:
    """The identity a transition's owner guard compares ``claimed_by`` with, if it has one."""
    for name in ("me", "owned_by"):
        value = getattr(transition, name, None)
        if isinstance(value, str):
            return value
    return None


__all__ = ["COLLATIONS", "Database", "unicode_ci_key"]


class Database:
    """`tx_nrllm_agentrun` + `tx_nrllm_agentrun_event`, keyed by uuid.

    ``identity_collation`` is an engine property of the simulated store (see :data:`COLLATIONS`);
    the default ``binary`` is the store every simulation has always used.
    """

    __slots__ = ("_collate", "_next_uid", "_running", "collation", "equated", "events", "rows")

    def __init__(self, identity_collation: str = "binary") -> None:
        if identity_collation not in COLLATIONS:
            raise ValueError(f"unknown identity collation {identity_collation!r}")
        self.collation = identity_collation
        self._collate = identity_collation != "binary"
        self.equated: tuple[str, str] | None = None
        """Ground truth of the latest UPDATE (a collated store only): (the identity its owner guard
        carried, the distinct identity that held the row) when the guard matched only because the
        collation equates the two; None when it compared equal, refused, or there is no owner guard."""
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
        """The store (T1/T2) assigns the auto-increment uid."""
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
        new = self._apply_collated(row, transition) if self._collate else transition.apply(row)
        if new is None:
            return _REFUSED, row
        self.rows[uuid] = new  # _place, inlined: every guarded UPDATE passes here
        if new.status is _RUNNING:
            self._running[uuid] = new
        else:
            self._running.pop(uuid, None)
        return (_CHANGED if _differs(new, row) else _UNCHANGED), new

    def _apply_collated(self, row: RunRow, transition: Transition) -> RunRow | None:
        """``transition.apply`` with the owner guard compared under ``unicode_ci``; notes in
        :attr:`equated` whom a match the collation alone allowed was over."""
        self.equated = None
        identity = _guard_identity(transition)
        if identity is None or row.claimed_by == identity or unicode_ci_key(row.claimed_by) != unicode_ci_key(identity):
            return transition.apply(row)
        new = transition.apply(replace_row(row, claimed_by=identity))
        if new is not None:
            self.equated = (identity, row.claimed_by)
            if isinstance(transition, _KEEPS_CLAIM):
                new = replace_row(new, claimed_by=row.claimed_by)
        return new

    def select_stale(self, now: int, limit: int) -> tuple[RunRow, ...]:
        """Statement T12 over the running rows only: the same rows it would pick from all of them, in the
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
