"""What the register's entries are on the real runtime: reproduced on its PHP, or why not.

A finding or non-guarantee is found on the model; its mechanism is only known to be the
runtime's when the real PHP, on a real database, does the same. One record per finding
(:mod:`register.findings`) and per non-guarantee (:mod:`register.nonguarantees`): either it
was reproduced (the engine, and how: the statements and deciders replayed, which process did
what), or why it cannot be here (its mechanism lies in code the check does not run). The
replay steps live in ``sim/conform/reproductions.toml`` and are re-run by
``tests/conformance/test_reproductions.py``; the report and the README show this table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RealCode:
    """One entry's record on the real code."""

    id: str
    reproduced_on: str | None
    """The engine it was reproduced on (``mariadb``), or None when it cannot be."""
    how: str
    """How it was reproduced, or why it cannot be."""

    @property
    def reproduced(self) -> bool:
        return self.reproduced_on is not None


_EXECUTOR = "not reproduced: the mechanism lies in AgentRunExecutor ({}), which the check does not run"

RECORDS: tuple[RealCode, ...] = (
    RealCode("F-01", None, _EXECUTOR.format("a completed write re-run from round 1 after a requeue")),
    RealCode("F-02", None, _EXECUTOR.format("a landed write its stopped segment never audits")),
    RealCode("F-03", None, _EXECUTOR.format("the cancellation probe's fail-closed append by a zombie")),
    RealCode("F-04", None, _EXECUTOR.format("no boundary between the fence stamp and the call")),
    RealCode(
        "F-05",
        "mariadb",
        "QueuedRunFailureRecovery::recover with a bus that throws: the owner requeue (T11) lands, the "
        "owner-guarded dead-letter matches nothing; the row stays QUEUED with no wake-up; its route over a "
        "new owner's requeue (the dead-letter stalled) is the same refused guard, not replayed apart",
    ),
    RealCode("F-06", None, _EXECUTOR.format("the fail-closed audit arm and its lost settle")),
    RealCode("F-07", None, _EXECUTOR.format("the cancel path's failed write audit")),
    RealCode(
        "F-08",
        None,
        "not reproduced: the mechanism lies in QueuedRunCoordinator::enqueue, whose request codec "
        "(configuration entities) the check does not run",
    ),
    RealCode(
        "F-09",
        "mariadb",
        "two connections: a lagging worker's claim (T3) is stale at the reaper's now; T12 lists it, T13 "
        "requeues it and the worker's renewal (T4) is refused",
    ),
    RealCode(
        "F-10",
        None,
        "not reproduced: the mechanism lies in ResumeCoordinator (its post-claim read and approval "
        "event), which the check does not run",
    ),
    RealCode(
        "F-11",
        "mariadb",
        "the fence stamp (T5) stalls 1,246 s past the lease it computed and still matches (no lease "
        "predicate); while the write runs, the real reaper finds the fenced row stale and dead-letters it",
    ),
    RealCode(
        "F-12",
        "mariadb",
        "two connections, the real QueuedRunCoordinator::runQueued: the post-claim MAX(sequence) read "
        "fails, its unguarded settle stalls while the reaper requeues (T13) and another worker claims "
        "(T3); the settle fails the new owner's row",
    ),
    RealCode(
        "F-13",
        "mariadb",
        "two connections: a stalled suspend (T9) commits over a resume's fenced RUNNING row (no owner "
        "guard); a second approval's claim (T10) takes the run with the old fence standing",
    ),
    RealCode(
        "F-14",
        "mariadb",
        "two connections: a live lease (T3) is stale at a reaper clock ahead; T13 requeues it and the "
        "worker's renewal (T4) is refused",
    ),
    RealCode(
        "F-15",
        "mariadb",
        "two connections, the real runQueued: its post-claim read stalls while the reaper requeues and "
        "another worker claims; the MAX(sequence) read fails and the unguarded settle fails that row",
    ),
    RealCode(
        "F-16",
        "mariadb",
        "two connections, the real reaper command: it selects a lagging worker's fenced row; before its "
        "dead-letter (T14) commits the worker clears the fence into the past; T14 still matches",
    ),
    RealCode(
        "F-17",
        "mariadb",
        "two connections, the real reaper command: a worker claims (T3) the requeued run while the "
        "reaper's dispatch fails; its unguarded settleFailed (T7) fails the new owner's row",
    ),
    RealCode(
        "F-18",
        "mariadb",
        "two connections, the real reaper command: it decides requeue on a snapshot without the fence; "
        "the stamp (T5) commits during its stalled T13, which then erases it; the next attempt claims",
    ),
    RealCode(
        "F-19",
        "mariadb",
        "two connections, the real reaper command with a clock ahead: during an earlier row's inline "
        "wake-up the run is requeued by its recovery (T11) and claimed; T13 on the snapshot makes count 4",
    ),
    RealCode(
        "F-20",
        "mariadb",
        "two connections, the real reaper command with a clock ahead: during an earlier row's inline "
        "wake-up the worker clears its fence and renews; T14 dead-letters not_retryable on the snapshot",
    ),
    RealCode(
        "F-21",
        "mariadb",
        "two connections, the real reaper command, true clocks: a resume's fence clear stalls past its "
        "lease and commits during the reaper's stalled T14, which dead-letters not_retryable",
    ),
    RealCode(
        "F-22",
        "mariadb",
        "two connections, the real reaper command with a clock ahead: it decides retries_exhausted on a "
        "snapshot without the fence; the stamp (T5) commits during its stalled T14, which still matches",
    ),
    RealCode(
        "NG-identity",
        "mariadb",
        "two connections with one identity string: after a reclaim, the first process's owner-guarded "
        "renewal (T4) matches the second's row",
    ),
    RealCode(
        "NG-queued-orphan",
        "mariadb",
        "the real reaper command a day later leaves a QUEUED row whose wake-up was lost untouched",
    ),
    RealCode(
        "NG-clear-not-persisted",
        "mariadb",
        "the fence clear (T5) throws after the write; the real reaper dead-letters not_retryable and the "
        "terminal row keeps the fence",
    ),
    RealCode(
        "NG-cancel-keeps-fence",
        "mariadb",
        "two connections: AgentRunPersister::cancel (T8) on a fenced row; the worker's clear is refused "
        "and the CANCELLED row keeps the fence",
    ),
    RealCode(
        "NG-unchecked-settle",
        "mariadb",
        "two connections, the real runQueued: its position read fails, a cancel lands before its "
        "unguarded settle, which matches nothing; runQueued still reports failed",
    ),
    RealCode(
        "NG-claim-restamps-started",
        "mariadb",
        "claimQueued (T3) after an owner requeue (T11) overwrites started_at",
    ),
    RealCode(
        "NG-store-error-lease-lost",
        "mariadb",
        "AgentRunPersister::renewLease with a store error returns false on a held row; the segment "
        "stops and the real reaper requeues the row",
    ),
    RealCode(
        "NG-sync-outer-requeued",
        "mariadb",
        "QueuedRunFailureRecovery::recover with an inline (Sync) bus: the nested attempt claims and "
        "dead-letters the run, the outer recover returns requeued",
    ),
    RealCode(
        "NG-cancel-probe-fail-closed",
        None,
        _EXECUTOR.format("the cancellation probe's fail-closed write audit"),
    ),
    RealCode(
        "NG-reaper-dispatch-dead-letter",
        "mariadb",
        "the real reaper command with a bus that throws: counted dead-lettered, the row records provider_failed",
    ),
)


def record(entry_id: str) -> RealCode:
    """The record of one finding or non-guarantee."""
    for rec in RECORDS:
        if rec.id == entry_id:
            return rec
    raise KeyError(entry_id)


def table_rows() -> list[tuple[str, str, str]]:
    """The table the report and the README show: entry, reproduced on, how / why not."""
    return [(r.id, r.reproduced_on or "-", r.how) for r in RECORDS]


__all__ = ["RECORDS", "RealCode", "record", "table_rows"]
