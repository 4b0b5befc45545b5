"""Coverage ("sometimes") properties: did one history reach the interesting paths?

Each property is a pure predicate over the shared index of one history (a lease expired
mid-write, the reaper requeued, a fenced run was dead-lettered, ...). A search that never
makes one true has not exercised that path. Knows only the history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from model.history import CRASH, DELIVER, EVENT, LANDING, SEGMENT, TOOL, Op, OpType
from model.invariants.index import (
    IDEMPOTENT_WRITE,
    NON_IDEMPOTENT_WRITE,
    WRITE_EFFECTS,
    Index,
    as_index,
    merged,
    row_of,
)
from model.invariants.verdict import Kind

_REAPS = frozenset({"T13", "T14"})
_REAP_NUMBERS = tuple(sorted(_REAPS))


def _any_transition(ix: Index, number: str) -> bool:
    return bool(ix.rows_of(number))


def _outstanding_at(ix: Index, invoke: Op, index: int) -> bool:
    """The invoke has no completion before history index ``index``."""
    completion = ix.tool_completions.get(invoke.index)
    return completion is None or completion.index > index


def lease_expired_mid_write(ix: Index) -> bool:
    """The reaper requeued or dead-lettered a run while a write invoke of it had no completion."""
    writing: dict[str, list[Op]] = {}
    reaps = [ix.rows_of(number) for number in _REAP_NUMBERS]
    if not any(reaps):
        return False
    for op in merged(*reaps, ix.of_type(TOOL, OpType.INVOKE)):
        if op.op == TOOL:
            if op.value.get("true_effect") in WRITE_EFFECTS:
                writing.setdefault(op.run, []).append(op)
        elif op.run in writing:
            still = [inv for inv in writing[op.run] if _outstanding_at(ix, inv, op.index)]
            if still:
                return True
            writing[op.run] = still
    return False


def reaper_requeued(ix: Index) -> bool:
    """A stale row was requeued by the reaper (a matched T13)."""
    return _any_transition(ix, "T13")


def reaper_dead_lettered(ix: Index) -> bool:
    """A stale row was dead-lettered by the reaper (a matched T14)."""
    return _any_transition(ix, "T14")


def _fenced(op: Op) -> bool:
    return row_of(op).get("pending_effect") == NON_IDEMPOTENT_WRITE


def fenced_run_dead_lettered(ix: Index) -> bool:
    """A run standing under a non-idempotent fence was dead-lettered (T14, or T7 not_retryable)."""
    if any(_fenced(op) for op in ix.rows_of("T14")):
        return True
    return any(_fenced(op) and row_of(op).get("termination_reason") == "not_retryable" for op in ix.rows_of("T7"))


def audit_failed_after_write_landed(ix: Index) -> bool:
    """An audit insert failed for an execution that had landed."""
    return any((op.run, op.get("execution")) in ix.landed for op in ix.of_type(EVENT, OpType.FAIL))


def idempotent_write_repeated(ix: Index) -> bool:
    """One logical idempotent call (run, call) landed twice."""
    seen: set[tuple[str, object]] = set()
    for landing in ix.of_type(LANDING, OpType.OK):
        if landing.get("effect") != IDEMPOTENT_WRITE:
            continue
        key = (landing.run, landing.get("call"))
        if key in seen:
            return True
        seen.add(key)
    return False


def duplicate_wakeup_delivered(ix: Index) -> bool:
    """A duplicate wake-up message reached a worker."""
    return any(op.value.get("duplicate") is True for type_ in OpType for op in ix.of_type(DELIVER, type_))


def _segment_outcome(ix: Index, outcome: str) -> bool:
    return any(op[6].get("outcome") == outcome for op in ix.of_type(SEGMENT, OpType.OK))


def cancel_observed(ix: Index) -> bool:
    """A segment returned CANCELLED: a cancel was observed at a step boundary."""
    return _segment_outcome(ix, "cancelled")


def lease_lost(ix: Index) -> bool:
    """A segment returned LEASE_LOST."""
    return _segment_outcome(ix, "lease_lost")


def approval_resumed(ix: Index) -> bool:
    """An approve segment ran to an ok completion."""
    for span in ix.spans:
        if span.entry != "approve":
            continue
        completion = span.completion
        if completion is not None and completion.type is OpType.OK:
            return True
    return False


def requeued_in_process(ix: Index) -> bool:
    """A failing queued run was requeued by its own worker (a matched T11)."""
    return _any_transition(ix, "T11")


def crash_after_landing(ix: Index) -> bool:
    """A process crashed after its tool call landed but before the call completed."""
    invokes: dict[str, list[Op]] = {}
    if not ix.landing_of:
        return False  # only a landed call can hold
    for op in merged(ix.of_type(TOOL, OpType.INVOKE), ix.all(CRASH)):
        if op.op == TOOL:
            invokes.setdefault(op.process, []).append(op)
            continue
        process = op.get("process")
        if not isinstance(process, str):
            continue
        live = [inv for inv in invokes.get(process, ()) if _unfinished_at(ix, inv, op.index)]
        if any(_landed_before(ix, inv, op.index) for inv in live):
            return True
        invokes[process] = live
    return False


def _unfinished_at(ix: Index, invoke: Op, index: int) -> bool:
    """No ok/fail completion before ``index``; an info completion (the caller crashed) is none.

    The simulator records the tool's ``info {crashed}`` before the nemesis ``crash`` record.
    """
    completion = ix.tool_completions.get(invoke.index)
    return completion is None or completion.type is OpType.INFO or completion.index > index


def _landed_before(ix: Index, invoke: Op, index: int) -> bool:
    landing = ix.landing_of.get(invoke.index)
    return landing is not None and landing.index < index


def run_completed(ix: Index) -> bool:
    """Some run reached a COMPLETED row."""
    return any(row_of(op).get("status") == "completed" for op in ix.rows)


@dataclass(frozen=True, slots=True)
class Coverage:
    """One reachability property: a name, its meaning and its predicate."""

    name: str
    meaning: str
    holds: Callable[[Index], bool]
    kind: Kind = Kind.SOMETIMES


def _entry(fn: Callable[[Index], bool]) -> Coverage:
    return Coverage(fn.__name__, (fn.__doc__ or "").strip(), fn)


COVERAGE: tuple[Coverage, ...] = tuple(
    _entry(fn)
    for fn in (
        lease_expired_mid_write,
        reaper_requeued,
        reaper_dead_lettered,
        fenced_run_dead_lettered,
        audit_failed_after_write_landed,
        idempotent_write_repeated,
        duplicate_wakeup_delivered,
        cancel_observed,
        approval_resumed,
        lease_lost,
        requeued_in_process,
        crash_after_landing,
        run_completed,
    )
)


def coverage(history: Iterable[Op] | Index, properties: Sequence[Coverage] = COVERAGE) -> dict[str, bool]:
    """Which coverage properties one history reached. A predicate that raises counts as not reached."""
    try:
        ix = as_index(history)
    except Exception:  # an unreadable history reaches nothing
        return {prop.name: False for prop in properties}
    reached: dict[str, bool] = {}
    for prop in properties:
        try:
            reached[prop.name] = bool(prop.holds(ix))
        except Exception:  # a broken predicate must not lose the other properties
            reached[prop.name] = False
    return reached


__all__ = [
    "COVERAGE",
    "Coverage",
    "approval_resumed",
    "audit_failed_after_write_landed",
    "cancel_observed",
    "coverage",
    "crash_after_landing",
    "duplicate_wakeup_delivered",
    "fenced_run_dead_lettered",
    "idempotent_write_repeated",
    "lease_expired_mid_write",
    "lease_lost",
    "reaper_dead_lettered",
    "reaper_requeued",
    "requeued_in_process",
    "run_completed",
]
