"""The invariant catalogue: named properties with their kind, meaning and checker.

The order, names, kinds and one-line meanings of the first twelve are fixed by
ARCHITECTURE.md ("The history and the invariants"); the next four were added so that every
historic defect of the spec (7.3) has an invariant that finds it (KB-12: an approved write
turn ran without its approval recorded; KB-13: a retryable failure dead-lettered), the
next four judge what a row says once a segment is done with it (issue 10), and the last eight judge
what the runtime tells its callers and the ADR promises that had none (issue 18). The
checkers live in the themed modules beside this one, each as a machine the single pass
feeds (:mod:`checks.fused`) and as a function of an index (its machine fed alone);
a checker written as a function of an index only still runs, after the pass. Knows only the history:
``judge`` walks it once, building the shared index and feeding every checker and coverage
property; ``check_all`` is its verdicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from checks import accounts, audit, fencing, ground, lifecycle, outcomes, promises, reasons, rows, spec_promises, writes
from checks.coverage import COVERAGE, Coverage, reached_by
from checks.fused import run_pass
from checks.history import Op
from checks.index import Index
from checks.judgement import Invariant
from checks.verdict import Kind, Verdict

_ALWAYS = Kind.ALWAYS

INVARIANTS: tuple[Invariant, ...] = (
    Invariant(
        "every_write_accounted",
        _ALWAYS,
        "every write execution that landed has its own tool event, or its run ended FAILED in a way that "
        "records that a write may be unaudited (audit failure, or dead-lettered while fenced) "
        '— "no write runs unrecorded"',
        audit.every_write_accounted,
        audit.EveryWriteAccounted,
    ),
    Invariant(
        "no_success_over_unrecorded_write",
        _ALWAYS,
        "no run settles COMPLETED after one of its write executions failed its audit (ADR-111)",
        audit.no_success_over_unrecorded_write,
        audit.NoSuccessOverUnrecordedWrite,
    ),
    Invariant(
        "no_retry_after_failed_write_audit",
        _ALWAYS,
        "a non-idempotent call whose audit failed never executes again "
        '— "no non-idempotent write executes twice after a failed audit"',
        writes.no_retry_after_failed_write_audit,
        writes.NoRetryAfterFailedWriteAudit,
    ),
    Invariant(
        "non_idempotent_at_most_once",
        _ALWAYS,
        "each logical non-idempotent call lands at most once (ADR-112)",
        writes.non_idempotent_at_most_once,
        writes.NonIdempotentAtMostOnce,
    ),
    Invariant(
        "terminal_is_terminal",
        _ALWAYS,
        "a terminal row never changes status or totals again (ADR-092)",
        lifecycle.terminal_is_terminal,
        lifecycle.TerminalIsTerminal,
    ),
    Invariant(
        "settles_by_owner",
        _ALWAYS,
        "a running row is settled only by the segment that holds it, or by a path the spec marks unguarded",
        ground.settles_by_owner,
        ground.SettlesByOwner,
    ),
    Invariant(
        "unique_event_sequence",
        _ALWAYS,
        "no two events of one run share a sequence number (ADR-104)",
        audit.unique_event_sequence,
        audit.UniqueEventSequence,
    ),
    Invariant(
        "requeue_budget_respected",
        _ALWAYS,
        "no row is requeued more than MAX_REQUEUES times",
        lifecycle.requeue_budget_respected,
        lifecycle.RequeueBudgetRespected,
    ),
    Invariant(
        "writes_fenced_under_lease",
        _ALWAYS,
        "every write executes while its segment holds the lease and the fence is stamped (ADR-141)",
        fencing.writes_fenced_under_lease,
        fencing.WritesFencedUnderLease,
    ),
    Invariant(
        "fence_matches_inflight_write",
        _ALWAYS,
        "a decider that reads a write fence sees a write stamped in the current attempt (ADR-122)",
        ground.fence_matches_inflight_write,
        ground.FenceMatchesInflightWrite,
    ),
    Invariant(
        "read_only_audit_fail_soft",
        _ALWAYS,
        "an audit failure of a read-only or non-tool step never fails a run (ADR-111)",
        ground.read_only_audit_fail_soft,
        ground.ReadOnlyAuditFailSoft,
    ),
    Invariant(
        "every_run_terminates",
        Kind.EVENTUALLY,
        "after the quiet phase no run is QUEUED or RUNNING (nothing stranded)",
        lifecycle.every_run_terminates,
        lifecycle.EveryRunTerminates,
    ),
    Invariant(
        "approved_write_turn_recorded",
        _ALWAYS,
        "a write turn executes on a resume only after its approval decision was recorded (ADR-132)",
        audit.approved_write_turn_recorded,
        audit.ApprovedWriteTurnRecorded,
    ),
    Invariant(
        "builtin_write_approved",
        _ALWAYS,
        "a builtin tool that declares a write executes only on a resume an approver started (ADR-134)",
        audit.builtin_write_approved,
        audit.BuiltinWriteApproved,
    ),
    Invariant(
        "unknown_name_is_strictest",
        _ALWAYS,
        "a tool step for a name the running code does not know is treated as non_idempotent_write (ADR-111)",
        ground.unknown_name_is_strictest,
        ground.UnknownNameIsStrictest,
    ),
    Invariant(
        "retryable_failure_retried",
        _ALWAYS,
        "a retryable provider failure is retried while budget remains, never dead-lettered not_retryable (ADR-095)",
        lifecycle.retryable_failure_retried,
        lifecycle.RetryableFailureRetried,
    ),
    Invariant(
        "dead_letter_reason_matches_cause",
        _ALWAYS,
        "a dead-letter's reason matches the failure that caused it: not_retryable only for a cause that is "
        "not retryable, retries_exhausted only when the budget is spent or the retry could not be set up",
        rows.dead_letter_reason_matches_cause,
        rows.DeadLetterReasonMatchesCause,
    ),
    Invariant(
        "segment_outcome_matches_row",
        _ALWAYS,
        "a segment that reports a settled outcome leaves its run's row in that state",
        rows.segment_outcome_matches_row,
        rows.SegmentOutcomeMatchesRow,
    ),
    Invariant(
        "terminal_row_no_stale_fence",
        _ALWAYS,
        "a terminal row keeps a write fence only while that write may still be in flight",
        rows.terminal_row_no_stale_fence,
        rows.TerminalRowNoStaleFence,
    ),
    Invariant(
        "row_timestamps_kept",
        _ALWAYS,
        "a row's started_at and finished_at, once set, are never overwritten by a later statement",
        rows.row_timestamps_kept,
        rows.RowTimestampsKept,
    ),
    Invariant(
        "segment_outcome_true",
        _ALWAYS,
        "every outcome a segment call returns (and the refusal it throws) is true of its own statements: "
        "the outcome table of checks/outcomes.py",
        outcomes.segment_outcome_true,
        outcomes.SegmentOutcomeTrue,
    ),
    Invariant(
        "lease_lost_means_lost",
        _ALWAYS,
        "a segment that reports LEASE_LOST had lost it: its last statement failed or matched nothing on a row "
        "it no longer held",
        outcomes.lease_lost_means_lost,
        outcomes.LeaseLostMeansLost,
    ),
    Invariant(
        "reaper_account_true",
        _ALWAYS,
        "the reaper counts a row requeued, dead-lettered (with a dead-letter reason) or skipped only as its "
        "statements on it did, and prints the sums of those counts",
        accounts.reaper_account_true,
        accounts.ReaperAccountTrue,
    ),
    Invariant(
        "enqueue_cancel_result_true",
        _ALWAYS,
        "enqueue succeeds only when its row was stored and its wake-up dispatched; cancel says true exactly "
        "when its cancel took effect",
        accounts.enqueue_cancel_result_true,
        accounts.EnqueueCancelResultTrue,
    ),
    Invariant(
        "terminal_reason_names_cause",
        _ALWAYS,
        "every reason and error class a settle writes names a cause the settling segment really met",
        reasons.terminal_reason_names_cause,
        reasons.TerminalReasonNamesCause,
    ),
    Invariant(
        "lost_lease_stops",
        _ALWAYS,
        "after a failed or refused renewal or fence statement a segment makes no further request on the run (ADR-104)",
        promises.lost_lease_stops,
        promises.LostLeaseStops,
    ),
    Invariant(
        "cancel_observed_at_boundary",
        _ALWAYS,
        "a boundary that reads its run cancelled still persists its step, starts no call and reports "
        "CANCELLED (ADR-103)",
        promises.cancel_observed_at_boundary,
        promises.CancelObservedAtBoundary,
    ),
    Invariant(
        "lease_within_bound",
        _ALWAYS,
        "no statement sets a lease past its process's clock reading plus LEASE_S (or a declared deadline)",
        promises.lease_within_bound,
        promises.LeaseWithinBound,
    ),
)
NEW_IN_ISSUE_18: frozenset[str] = frozenset(inv.name for inv in INVARIANTS[20:])
"""The invariants issue 18 added (outcome oracles and ADR promises): ``leaselab mutants`` reports which
code mutants the head sweep alone flags through one of them."""

# Promises of the spec that automatic mutants showed no invariant judged (checks/spec_promises.py).
INVARIANTS = (
    *INVARIANTS,
    Invariant(
        "lease_is_the_specs",
        _ALWAYS,
        "every claim, renewal or fence statement that leaves a lease leaves its clock reading plus the spec's "
        "900 s (spec 1.3, 2)",
        spec_promises.lease_is_the_specs,
    ),
    Invariant(
        "requeue_backoff_per_spec",
        _ALWAYS,
        "a wake-up after an owner requeue carries min(30 s x 2^c, 600 s); after a reaper requeue or an insert "
        "none (spec 1.3)",
        spec_promises.requeue_backoff_per_spec,
    ),
    Invariant(
        "entry_points_throw_as_specified",
        _ALWAYS,
        "no segment lets escape an exception the spec does not let escape its entry point (spec 3.1, T2, T3, T10, C4)",
        spec_promises.entry_points_throw_as_specified,
    ),
    Invariant(
        "event_sequence_without_gap",
        _ALWAYS,
        "no stored event's sequence skips past one more than the highest its run's stream held (spec 1.2)",
        spec_promises.event_sequence_without_gap,
    ),
)


@dataclass(frozen=True, slots=True)
class Judgement:
    """One history judged: its index (None when even that failed), every verdict and coverage."""

    index: Index | None
    verdicts: dict[str, Verdict]
    coverage: dict[str, bool]


def judge(
    history: Iterable[Op] | Index,
    invariants: Sequence[Invariant] = INVARIANTS,
    properties: Sequence[Coverage] = COVERAGE,
) -> Judgement:
    """Every invariant's verdict and every coverage property of one history, from one pass that
    builds the index and feeds every ported checker (:mod:`checks.fused`); a checker
    written against the index runs after it, over that index. Never raises: if the index cannot
    be built, every verdict is UNKNOWN and nothing is reached."""
    checkers = [inv.machine() if inv.machine is not None else None for inv in invariants]
    probes = [prop.machine() if prop.machine is not None else None for prop in properties]
    fed = [m for m in checkers if m is not None]
    try:
        ix, failed = run_pass(
            history.history if isinstance(history, Index) else history, [*fed, *[p for p in probes if p is not None]]
        )
    except Exception as exc:  # an unreadable history must still yield verdicts
        return Judgement(
            None, {inv.name: inv.unknown(exc) for inv in invariants}, {prop.name: False for prop in properties}
        )
    verdicts: dict[str, Verdict] = {}
    position = 0
    for inv, machine in zip(invariants, checkers, strict=True):
        if machine is None:
            verdicts[inv.name] = inv.check(ix)
            continue
        error = failed.get(position)
        position += 1
        if error is not None:
            verdicts[inv.name] = inv.unknown(error)
            continue
        try:
            verdicts[inv.name] = inv.verdict(machine.finish(ix))
        except Exception as exc:  # a checker bug must never lose the history's verdicts
            verdicts[inv.name] = inv.unknown(exc)
    probe_failures = {i - len(fed): error for i, error in failed.items() if i >= len(fed)}
    return Judgement(ix, verdicts, reached_by(ix, properties, probes, probe_failures))


def check_all(history: Iterable[Op] | Index, invariants: Sequence[Invariant] = INVARIANTS) -> dict[str, Verdict]:
    """Every invariant's verdict over one history, in catalogue order; never raises (see :func:`judge`)."""
    return judge(history, invariants, ()).verdicts


__all__ = ["INVARIANTS", "NEW_IN_ISSUE_18", "Judgement", "check_all", "judge"]
