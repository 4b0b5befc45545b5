"""The guarded updates T1-T15 of spec section 2, each a frozen value with a pure ``apply``.

``apply(row)`` returns the new row, or ``None`` when the WHERE clause does not match
(a refusal). Each docstring states the predicate exactly, and what it does NOT check:
those gaps are the point of the harness. Flags that switch a historic defect back on
are fields of the transition (the SQL itself differed), set by the runtime from its
policy. The simulated database applies one transition atomically.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from model.constants import LEASE_S
from model.frozen import fast_init
from model.records import EventRow, RunRequest, RunRow, SuspendedState
from model.statements import (
    CANCEL,
    CLAIM_FOR_RESUME,
    CLAIM_QUEUED,
    DEAD_LETTER_STALE,
    EXTEND_LEASE,
    FINISH_RUN,
    MARK_PENDING_EFFECT,
    NAMES,
    RENEW_LEASE,
    REQUEUE,
    REQUEUE_STALE,
    SUSPEND_RUN,
)
from model.vocab import NON_TERMINAL, RunStatus, TerminationReason


def _row_replacer() -> Callable[..., RunRow]:
    """``dataclasses.replace`` for RunRow, generated once: the same new row, several times faster.

    Every guarded UPDATE builds a new row; the generic ``replace`` walks the field list and
    goes through the frozen ``__init__`` (``object.__setattr__`` per field) each time. This
    fills a blank instance of a mutable twin of RunRow (the same ``__slots__``, so the same
    memory layout) with plain attribute stores, from a keyword or the old row, then makes it
    a RunRow by assigning ``__class__`` (CPython allows that between layout-identical
    classes). The result is an ordinary frozen RunRow, equal to what ``replace`` returns.
    RunRow has no ``__post_init__``, so nothing is skipped.
    """
    names = [f.name for f in dataclasses.fields(RunRow)]
    twin = type("_RunRowDraft", (), {"__slots__": RunRow.__slots__})
    source = (
        f"def replace(row, *, {', '.join(f'{n}=_MISSING' for n in names)}):\n    new = _new(_Draft)\n"
        + "".join(f"    new.{n} = row.{n} if {n} is _MISSING else {n}\n" for n in names)
        + "    new.__class__ = RunRow\n    return new\n"
    )
    scope: dict[str, Any] = {"_MISSING": object(), "_new": object.__new__, "_Draft": twin, "RunRow": RunRow}
    exec(source, scope)
    replacer: Callable[..., RunRow] = scope["replace"]
    return replacer


replace_row = _replace = _row_replacer()
"""``dataclasses.replace(row, **changes)`` for a RunRow (keyword changes only)."""


def start_run(uid: int, uuid: str, identity: str, lease_expires: int, now: int) -> RunRow:
    """T1 startRun (INSERT): RUNNING under ``identity`` ('' and 0 = unleased) from ``now``."""
    return RunRow(
        uid=uid,
        uuid=uuid,
        status=RunStatus.RUNNING,
        claimed_by=identity,
        lease_expires=lease_expires,
        started_at=now,
        tstamp=now,
        crdate=now,
    )


def enqueue_run(uid: int, uuid: str, request: RunRequest, now: int) -> RunRow:
    """T2 enqueueRun (INSERT): QUEUED with the payload; claim, lease and fence at DB defaults."""
    return RunRow(uid=uid, uuid=uuid, status=RunStatus.QUEUED, queued_request=request, tstamp=now, crdate=now)


@dataclass(frozen=True, slots=True)
class Transition:
    """Base of the guarded UPDATEs. ``name`` is the spec's T-number and method name."""

    name = "transition"

    def apply(self, row: RunRow) -> RunRow | None:  # pragma: no cover - abstract
        raise NotImplementedError


@fast_init
@dataclass(frozen=True, slots=True)
class ClaimQueued(Transition):
    """T3: WHERE uid AND status=queued. Overwrites started_at. No payload predicate."""

    worker: str
    now: int
    name = NAMES[CLAIM_QUEUED]

    def apply(self, row: RunRow) -> RunRow | None:
        if row.status is not RunStatus.QUEUED:
            return None
        return _replace(
            row,
            status=RunStatus.RUNNING,
            claimed_by=self.worker,
            lease_expires=self.now + LEASE_S,
            started_at=self.now,
            tstamp=self.now,
        )


@fast_init
@dataclass(frozen=True, slots=True)
class RenewLease(Transition):
    """T4: WHERE uid AND status=running AND claimed_by=me. NO lease-expiry predicate."""

    me: str
    now: int
    name = NAMES[RENEW_LEASE]

    def apply(self, row: RunRow) -> RunRow | None:
        if row.status is not RunStatus.RUNNING or row.claimed_by != self.me:
            return None
        return _replace(row, lease_expires=self.now + LEASE_S, tstamp=self.now)


@fast_init
@dataclass(frozen=True, slots=True)
class MarkPendingEffect(Transition):
    """T5: as T4; sets the write fence (``effect`` '' clears it) and renews the lease.

    ``lease_s`` is LEASE_S except under the ``operation_deadline`` proposal, where the
    stamp extends the lease to cover the tool's declared deadline.
    """

    me: str
    effect: str
    now: int
    lease_s: int = LEASE_S
    name = NAMES[MARK_PENDING_EFFECT]

    def apply(self, row: RunRow) -> RunRow | None:
        if row.status is not RunStatus.RUNNING or row.claimed_by != self.me:
            return None
        return _replace(row, pending_effect=self.effect, lease_expires=self.now + self.lease_s, tstamp=self.now)


@fast_init
@dataclass(frozen=True, slots=True)
class ExtendLease(Transition):
    """Proposal ``operation_deadline`` only: as T4, but the lease runs to now + ``lease_s``."""

    me: str
    now: int
    lease_s: int
    name = NAMES[EXTEND_LEASE]

    def apply(self, row: RunRow) -> RunRow | None:
        if row.status is not RunStatus.RUNNING or row.claimed_by != self.me:
            return None
        return _replace(row, lease_expires=self.now + max(self.lease_s, LEASE_S), tstamp=self.now)


@fast_init
@dataclass(frozen=True, slots=True)
class FinishRun(Transition):
    """T7 finishRun (settle).

    WHERE uid AND status non-terminal AND (claimed_by = owned_by, only if owned_by is
    not None). Does not touch pending_effect or requeue_count. ``terminal_guard`` False
    is KB-1: keyed on uid only, so a terminal row can be overwritten.
    """

    status: RunStatus
    reason: TerminationReason
    error_class: str
    iterations: int
    total_tokens: int
    owned_by: str | None
    now: int
    terminal_guard: bool = True
    name = NAMES[FINISH_RUN]

    def apply(self, row: RunRow) -> RunRow | None:
        if self.terminal_guard and row.status not in NON_TERMINAL:
            return None
        if self.owned_by is not None and row.claimed_by != self.owned_by:
            return None
        return _replace(
            row,
            status=self.status,
            termination_reason=self.reason,
            error_class=self.error_class,
            iterations=self.iterations,
            total_tokens=self.total_tokens,
            suspended_state=None,
            queued_request=None,
            claimed_by="",
            lease_expires=0,
            finished_at=self.now,
            tstamp=self.now,
        )


@fast_init
@dataclass(frozen=True, slots=True)
class Cancel(Transition):
    """T8 cancel: as T7 without an owner guard. Keeps the totals it read; clears payloads."""

    now: int
    name = NAMES[CANCEL]

    def apply(self, row: RunRow) -> RunRow | None:
        if row.status not in NON_TERMINAL:
            return None
        return _replace(
            row,
            status=RunStatus.CANCELLED,
            termination_reason=TerminationReason.CANCELLED,
            error_class="",
            suspended_state=None,
            queued_request=None,
            claimed_by="",
            lease_expires=0,
            finished_at=self.now,
            tstamp=self.now,
        )


@fast_init
@dataclass(frozen=True, slots=True)
class Suspend(Transition):
    """T9 suspendRun / suspendRunForInput: WHERE uid AND status=running, NO owner guard.

    ``status_guard`` False is KB-3: keyed on uid only, so a cancelled row is resurrected.
    Never touches queued_request (spec C1).
    """

    state: SuspendedState
    for_input: bool
    now: int
    status_guard: bool = True
    name = NAMES[SUSPEND_RUN]

    def apply(self, row: RunRow) -> RunRow | None:
        if self.status_guard and row.status is not RunStatus.RUNNING:
            return None
        status = RunStatus.WAITING_FOR_INPUT if self.for_input else RunStatus.WAITING_FOR_APPROVAL
        return _replace(row, status=status, suspended_state=self.state, claimed_by="", lease_expires=0, tstamp=self.now)


@fast_init
@dataclass(frozen=True, slots=True)
class ClaimForResume(Transition):
    """T10 claimForResume(FromInput): WHERE uid AND status=the matching waiting status.

    Sets RUNNING under the resume identity with a lease; started_at untouched.
    ``leased`` False is KB-10: the claim wrote claimed_by='' and lease 0.
    """

    identity: str
    for_input: bool
    now: int
    leased: bool = True
    name = NAMES[CLAIM_FOR_RESUME]

    def apply(self, row: RunRow) -> RunRow | None:
        waiting = RunStatus.WAITING_FOR_INPUT if self.for_input else RunStatus.WAITING_FOR_APPROVAL
        if row.status is not waiting:
            return None
        if self.leased:
            return _replace(
                row,
                status=RunStatus.RUNNING,
                claimed_by=self.identity,
                lease_expires=self.now + LEASE_S,
                tstamp=self.now,
            )
        return _replace(row, status=RunStatus.RUNNING, claimed_by="", lease_expires=0, tstamp=self.now)


def _requeued(row: RunRow, now: int, clear_fence: bool) -> RunRow:
    return _replace(
        row,
        status=RunStatus.QUEUED,
        requeue_count=row.requeue_count + 1,
        claimed_by="",
        lease_expires=0,
        pending_effect="" if clear_fence else row.pending_effect,
        tstamp=now,
    )


@fast_init
@dataclass(frozen=True, slots=True)
class Requeue(Transition):
    """T11 requeue (owner retry): WHERE uid AND status=running AND claimed_by=me.

    count+1, claim/lease cleared, payload kept; ``clear_fence`` False is KB-9 (the fence
    survives the requeue). suspended_state is not cleared (spec C1).
    """

    me: str
    now: int
    clear_fence: bool = True
    name = NAMES[REQUEUE]

    def apply(self, row: RunRow) -> RunRow | None:
        if row.status is not RunStatus.RUNNING or row.claimed_by != self.me:
            return None
        return _requeued(row, self.now, self.clear_fence)


def is_stale(row: RunRow, now: int) -> bool:
    """T12/T13/T14 staleness: status=running AND 0 < lease_expires < now."""
    return row.status is RunStatus.RUNNING and 0 < row.lease_expires < now


def find_stale_running(rows: Iterable[RunRow], now: int, limit: int) -> list[RunRow]:
    """T12 findStaleRunning: stale rows, oldest lease first (uid breaks ties), at most ``limit``."""
    running = RunStatus.RUNNING
    stale = [r for r in rows if r.status is running and 0 < r.lease_expires < now]  # = is_stale, inlined
    if len(stale) > 1:
        stale.sort(key=_lease_then_uid)
    return stale[:limit]


def _lease_then_uid(row: RunRow) -> tuple[int, int]:
    return row.lease_expires, row.uid


@fast_init
@dataclass(frozen=True, slots=True)
class RequeueStale(Transition):
    """T13 requeueStale: WHERE uid AND status=running AND 0 < lease_expires < ``now``.

    ``now`` is the reaper's, captured once per invocation. NO owner and NO pending_effect
    predicate. Same SET as T11.
    """

    now: int
    clear_fence: bool = True
    name = NAMES[REQUEUE_STALE]

    def apply(self, row: RunRow) -> RunRow | None:
        if not is_stale(row, self.now):
            return None
        return _requeued(row, self.now, self.clear_fence)


@fast_init
@dataclass(frozen=True, slots=True)
class DeadLetterStale(Transition):
    """T14 deadLetterStale: same predicate as T13 with the captured ``now``.

    FAILED with ``reason``; totals and pending_effect untouched; finished_at/tstamp from
    the reaper's own clock reading at the write (``write_now``, spec C10).
    """

    reason: TerminationReason
    now: int
    write_now: int
    name = NAMES[DEAD_LETTER_STALE]

    def apply(self, row: RunRow) -> RunRow | None:
        if not is_stale(row, self.now):
            return None
        return _replace(
            row,
            status=RunStatus.FAILED,
            termination_reason=self.reason,
            error_class="",
            suspended_state=None,
            queued_request=None,
            claimed_by="",
            lease_expires=0,
            finished_at=self.write_now,
            tstamp=self.write_now,
        )


def max_event_sequence(events: list[EventRow]) -> int:
    """T15 maxEventSequence: the largest sequence of the run's events, -1 when none."""
    return max((e.sequence for e in events), default=-1)


TRANSITIONS: tuple[type[Transition], ...] = (
    ClaimQueued,
    RenewLease,
    MarkPendingEffect,
    ExtendLease,
    FinishRun,
    Cancel,
    Suspend,
    ClaimForResume,
    Requeue,
    RequeueStale,
    DeadLetterStale,
)
