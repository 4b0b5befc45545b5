"""Coverage ("sometimes") properties: did one history reach the interesting paths?

Each property is a pure predicate over the shared index of one history (a lease expired
mid-write, the reaper requeued, a fenced run was dead-lettered, ...). A search that never
makes one true has not exercised that path. Knows only the history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from checks.fused import Key, Machine, run_pass
from checks.history import CRASH, DELIVER, EVENT, INDEX, LANDING, PROCESS, RUN, SEGMENT, TYPE, VALUE, Op, OpType
from checks.index import IDEMPOTENT_WRITE, NON_IDEMPOTENT_WRITE, WRITE_EFFECTS, Index, merged, row_of
from checks.own import spans_of_entries
from checks.verdict import Kind
from model.statements import DEAD_LETTER_STALE, FINISH_RUN, REAPER_STATEMENTS, REQUEUE, REQUEUE_STALE

_REAPS = REAPER_STATEMENTS
_APPROVE = frozenset({"approve"})
_REAP_NUMBERS = tuple(sorted(_REAPS))


def _any_transition(ix: Index, number: str) -> bool:
    return bool(ix.rows_of(number))


class _Probe(Machine):
    """A coverage property fed by the single pass: whether the history showed it, answered once the
    pass is over (no probe needs a handler, so none keeps state but its streams)."""

    __slots__ = ()

    def finish(self, ix: Index) -> bool:
        raise NotImplementedError


def run_probe(probe: Machine, ix: Index) -> bool:
    """A fed property as a function of an index: its machine alone over the index's history."""
    fresh, failed = run_pass(ix.history, (probe,))
    if failed:
        raise failed[0]
    return bool(probe.finish(fresh))


class LeaseExpiredMidWrite(_Probe):
    """The reaper requeued or dead-lettered a run while a write invoke of it had no completion: once
    the pass is over, each reap (a matched T13 or T14) against the run's write invokes before it and
    their completions (the index lists both; reaps are few, so no handler runs per tool invoke)."""

    __slots__ = ()

    def finish(self, ix: Index) -> bool:
        reaps = [op for number in _REAP_NUMBERS for op in ix.rows_of(number)]
        if not reaps:
            return False
        writing: dict[str, list[Op]] = {}
        for op in ix.tool_invokes:
            if op[VALUE].get("true_effect") in WRITE_EFFECTS:
                writing.setdefault(op[RUN], []).append(op)
        completions = ix.tool_completions
        for reap in reaps:
            for invoke in writing.get(reap[RUN], ()):
                if invoke[INDEX] < reap[INDEX]:
                    done = completions.get(invoke[INDEX])
                    if done is None or done[INDEX] > reap[INDEX]:
                        return True
        return False


def lease_expired_mid_write(ix: Index) -> bool:
    """The reaper requeued or dead-lettered a run while a write invoke of it had no completion."""
    return run_probe(LeaseExpiredMidWrite(), ix)


def reaper_requeued(ix: Index) -> bool:
    """A stale row was requeued by the reaper (a matched T13)."""
    return _any_transition(ix, REQUEUE_STALE)


def reaper_dead_lettered(ix: Index) -> bool:
    """A stale row was dead-lettered by the reaper (a matched T14)."""
    return _any_transition(ix, DEAD_LETTER_STALE)


def _fenced(op: Op) -> bool:
    return row_of(op).get("pending_effect") == NON_IDEMPOTENT_WRITE


def fenced_run_dead_lettered(ix: Index) -> bool:
    """A run standing under a non-idempotent fence was dead-lettered (T14, or T7 not_retryable)."""
    if any(_fenced(op) for op in ix.rows_of(DEAD_LETTER_STALE)):
        return True
    return any(_fenced(op) and row_of(op).get("termination_reason") == "not_retryable" for op in ix.rows_of(FINISH_RUN))


class AuditFailedAfterWriteLanded(_Probe):
    """An audit insert failed for an execution that had landed."""

    __slots__ = ("failed",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"failed": (EVENT, OpType.FAIL)}
    failed: list[Op]

    def finish(self, ix: Index) -> bool:
        return any((op.run, op.get("execution")) in ix.landed for op in self.failed)


def audit_failed_after_write_landed(ix: Index) -> bool:
    """An audit insert failed for an execution that had landed."""
    return run_probe(AuditFailedAfterWriteLanded(), ix)


class IdempotentWriteRepeated(_Probe):
    """One logical idempotent call (run, call) landed twice."""

    __slots__ = ("landings",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"landings": (LANDING, OpType.OK)}
    landings: list[Op]

    def finish(self, ix: Index) -> bool:
        seen: set[tuple[str, object]] = set()
        for landing in self.landings:
            if landing.get("effect") != IDEMPOTENT_WRITE:
                continue
            key = (landing.run, landing.get("call"))
            if key in seen:
                return True
            seen.add(key)
        return False


def idempotent_write_repeated(ix: Index) -> bool:
    """One logical idempotent call (run, call) landed twice."""
    return run_probe(IdempotentWriteRepeated(), ix)


class DuplicateWakeupDelivered(_Probe):
    """A duplicate wake-up message reached a worker."""

    __slots__ = ("failed", "info", "invoked", "ok")
    STREAMS: ClassVar[Mapping[str, Key]] = {
        "invoked": (DELIVER, OpType.INVOKE),
        "ok": (DELIVER, OpType.OK),
        "failed": (DELIVER, OpType.FAIL),
        "info": (DELIVER, OpType.INFO),
    }
    invoked: list[Op]
    ok: list[Op]
    failed: list[Op]
    info: list[Op]

    def finish(self, ix: Index) -> bool:
        streams = (self.invoked, self.ok, self.failed, self.info)
        return any(op[VALUE].get("duplicate") is True for ops in streams for op in ops)


def duplicate_wakeup_delivered(ix: Index) -> bool:
    """A duplicate wake-up message reached a worker."""
    return run_probe(DuplicateWakeupDelivered(), ix)


class _SegmentOutcome(_Probe):
    """A segment returned ``OUTCOME``."""

    __slots__ = ("done",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"done": (SEGMENT, OpType.OK)}
    OUTCOME: ClassVar[str] = ""
    done: list[Op]

    def finish(self, ix: Index) -> bool:
        outcome = self.OUTCOME
        return any(op[VALUE].get("outcome") == outcome for op in self.done)


class CancelObserved(_SegmentOutcome):
    __slots__ = ()
    OUTCOME = "cancelled"


class LeaseLost(_SegmentOutcome):
    __slots__ = ()
    OUTCOME = "lease_lost"


def cancel_observed(ix: Index) -> bool:
    """A segment returned CANCELLED: a cancel was observed at a step boundary."""
    return run_probe(CancelObserved(), ix)


def lease_lost(ix: Index) -> bool:
    """A segment returned LEASE_LOST."""
    return run_probe(LeaseLost(), ix)


class ApprovalResumed(_Probe):
    """An approve segment ran to an ok completion (the index's segments)."""

    __slots__ = ()

    def finish(self, ix: Index) -> bool:
        for span in spans_of_entries(ix, _APPROVE):
            completion = span.completion
            if completion is not None and completion.type is OpType.OK:
                return True
        return False


def approval_resumed(ix: Index) -> bool:
    """An approve segment ran to an ok completion."""
    return run_probe(ApprovalResumed(), ix)


def requeued_in_process(ix: Index) -> bool:
    """A failing queued run was requeued by its own worker (a matched T11)."""
    return _any_transition(ix, REQUEUE)


class CrashAfterLanding(_Probe):
    """A process crashed after its tool call landed but before the call completed.

    The simulator records the tool's ``info {crashed}`` before the nemesis ``crash`` record, so an
    info completion counts as none. Judged once the pass is over: each crash the pass kept against
    the crashed process's tool invokes before it, their completions and landings before it (the
    index lists all three; crashes are few, so no handler runs per tool invoke)."""

    __slots__ = ("crash_fail", "crash_info", "crash_invoke", "crash_ok")
    STREAMS: ClassVar[Mapping[str, Key]] = {
        "crash_invoke": (CRASH, OpType.INVOKE),
        "crash_ok": (CRASH, OpType.OK),
        "crash_fail": (CRASH, OpType.FAIL),
        "crash_info": (CRASH, OpType.INFO),
    }
    crash_invoke: list[Op]
    crash_ok: list[Op]
    crash_fail: list[Op]
    crash_info: list[Op]

    def finish(self, ix: Index) -> bool:
        crashes = merged(self.crash_invoke, self.crash_ok, self.crash_fail, self.crash_info)  # the world's: info
        invokes: dict[str, list[Op]] | None = None
        completions, landing_of = ix.tool_completions, ix.landing_of
        for crash in crashes:
            process = crash[VALUE].get("process")
            if not isinstance(process, str):
                continue
            if invokes is None:
                invokes = {}
                for op in ix.tool_invokes:
                    invokes.setdefault(op[PROCESS], []).append(op)
            at = crash[INDEX]
            for invoke in invokes.get(process, ()):
                if invoke[INDEX] >= at:
                    break
                done = completions.get(invoke[INDEX])
                landed = landing_of.get(invoke[INDEX])
                if (
                    (done is None or done[INDEX] > at or done[TYPE] is OpType.INFO)
                    and landed is not None
                    and landed[0] < at
                ):
                    return True
        return False


def crash_after_landing(ix: Index) -> bool:
    """A process crashed after its tool call landed but before the call completed."""
    return run_probe(CrashAfterLanding(), ix)


class RunCompleted(_Probe):
    """Some run reached a COMPLETED row (the index's rows)."""

    __slots__ = ()

    def finish(self, ix: Index) -> bool:
        return any(row_of(op).get("status") == "completed" for op in ix.rows)


def run_completed(ix: Index) -> bool:
    """Some run reached a COMPLETED row."""
    return run_probe(RunCompleted(), ix)


@dataclass(frozen=True, slots=True)
class Coverage:
    """One reachability property: a name, its meaning and its predicate; ``machine`` makes the
    property's :class:`~checks.fused.Machine` when the single pass feeds it (a property
    that only looks up the index, like "a T13 was matched", needs none)."""

    name: str
    meaning: str
    holds: Callable[[Index], bool]
    kind: Kind = Kind.SOMETIMES
    machine: Callable[[], Machine] | None = None


def _entry(fn: Callable[[Index], bool], machine: Callable[[], Machine] | None = None) -> Coverage:
    return Coverage(fn.__name__, (fn.__doc__ or "").strip(), fn, machine=machine)


COVERAGE: tuple[Coverage, ...] = (
    _entry(lease_expired_mid_write, LeaseExpiredMidWrite),
    _entry(reaper_requeued),
    _entry(reaper_dead_lettered),
    _entry(fenced_run_dead_lettered),
    _entry(audit_failed_after_write_landed, AuditFailedAfterWriteLanded),
    _entry(idempotent_write_repeated, IdempotentWriteRepeated),
    _entry(duplicate_wakeup_delivered, DuplicateWakeupDelivered),
    _entry(cancel_observed, CancelObserved),
    _entry(approval_resumed, ApprovalResumed),
    _entry(lease_lost, LeaseLost),
    _entry(requeued_in_process),
    _entry(crash_after_landing, CrashAfterLanding),
    _entry(run_completed, RunCompleted),
)


def coverage(history: Iterable[Op] | Index, properties: Sequence[Coverage] = COVERAGE) -> dict[str, bool]:
    """Which coverage properties one history reached, in one pass. A predicate that raises counts as
    not reached."""
    machines = [prop.machine() if prop.machine is not None else None for prop in properties]
    try:
        ix, failed = run_pass(
            history.history if isinstance(history, Index) else history, [m for m in machines if m is not None]
        )
    except Exception:  # an unreadable history reaches nothing
        return {prop.name: False for prop in properties}
    return reached_by(ix, properties, machines, failed)


def reached_by(
    ix: Index, properties: Sequence[Coverage], machines: Sequence[Machine | None], failed: Mapping[int, Exception]
) -> dict[str, bool]:
    """Each property's answer once the pass is over: a fed one from its machine (``failed`` holds the
    positions, among the fed machines, of those that raised), the others from the index."""
    reached: dict[str, bool] = {}
    fed = 0
    for prop, machine in zip(properties, machines, strict=True):
        try:
            if machine is None:
                reached[prop.name] = bool(prop.holds(ix))
            else:
                reached[prop.name] = fed not in failed and bool(machine.finish(ix))
                fed += 1
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
    "reached_by",
    "reaper_dead_lettered",
    "reaper_requeued",
    "requeued_in_process",
    "run_completed",
    "run_probe",
]
