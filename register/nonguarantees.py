"""The recorded non-guarantees: violations the spec records as not promised (spec 1.3, 7.2).

A non-guarantee is no finding: the head sweep accepts such a violation only when its recogniser
(:mod:`register.recognisers`) matches, so a new mechanism with the same symptom stays unexplained.
"""

from __future__ import annotations

from dataclasses import dataclass

from register import recognisers
from register.recognisers import Recogniser


@dataclass(frozen=True)
class NonGuarantee:
    """A violation the spec records as not promised: never a finding."""

    id: str
    invariants: tuple[str, ...]
    source: str
    sentence: str
    recognise: Recogniser


NON_GUARANTEES: tuple[NonGuarantee, ...] = (
    NonGuarantee(
        "NG-identity",
        (
            "settles_by_owner",
            "writes_fenced_under_lease",
            "unique_event_sequence",
            "non_idempotent_at_most_once",
            "every_write_accounted",
            "terminal_is_terminal",
            "fence_matches_inflight_write",
            "terminal_row_no_stale_fence",
            "requeue_budget_respected",
        ),
        "spec 1.3 (ExecutionIdentity.php)",
        "Lease identities: '<kind>:<hostname>:<pid>' truncated to 64 chars. Uniqueness is assumed from the "
        "process, not enforced.",
        recognisers.identity_not_unique,
    ),
    NonGuarantee(
        "NG-queued-orphan",
        ("every_run_terminates",),
        "spec 7.2 (ADR-104 consequences, PurgePrivacyDataCommand.php)",
        "Reaper covers only leased RUNNING rows; QUEUED orphans are only removed by retention purge.",
        recognisers.queued_orphan,
    ),
    NonGuarantee(
        "NG-clear-not-persisted",
        ("terminal_row_no_stale_fence",),
        "spec 7.2 (ADR-112, ADR-141)",
        "Not exactly-once (ADR-112, ADR-141). A completed non-idempotent write whose clear failed ⇒ run "
        "FAILED, not retried.",
        recognisers.clear_not_persisted,
    ),
    NonGuarantee(
        "NG-cancel-keeps-fence",
        ("terminal_row_no_stale_fence",),
        "spec 3.3 step 3 and 2 T8 (AgentRunExecutor::trace, AgentRunPersister::cancel)",
        "Cancellation probe: if status is CANCELLED, persist the step with the write-fail-closed rule (no "
        "ownership check, no renewal) and throw; T8 sets status, reason, totals and clears payloads, claim "
        "and lease, not the fence. Specified behaviour of head, not an ADR promise: a cancelled row keeps "
        "the fence of a write that already returned.",
        recognisers.cancel_keeps_fence,
    ),
    NonGuarantee(
        "NG-unchecked-settle",
        ("segment_outcome_matches_row", "segment_outcome_true"),
        "spec 3.1 and 2 (ResumeCoordinator.php, QueuedRunCoordinator.php, AgentRunPersister.php)",
        "The ResumeCoordinator's own pre-execution settleFailed calls (position/decode failure after the "
        "claim, failed release) and runQueued's position/rehydration failures are unguarded (ownedBy null); "
        "persister wrappers never throw (exception => logged, returns false). Specified behaviour of head: the "
        "segment reports FAILED whether or not that settle took effect.",
        recognisers.unchecked_settle_outcome,
    ),
    NonGuarantee(
        "NG-claim-restamps-started",
        ("row_timestamps_kept",),
        "spec 2 T3 (AgentRunRepository::claimQueued)",
        "claimQueued SET status=running, claimed_by=worker id, lease_expires=now+900, started_at=now "
        "(claimForResume: started_at untouched). Specified behaviour of head, not an ADR promise: every "
        "claim of a requeued run overwrites when the run started.",
        recognisers.claim_restamps_started,
    ),
    NonGuarantee(
        "NG-store-error-lease-lost",
        ("lease_lost_means_lost",),
        "spec 2 T4, T5 and the section's header; 3.5; 5.2 (AgentRunPersister.php, AgentRunExecutor.php, "
        "QueuedRunFailureRecovery.php)",
        "renewLease: 'Persister: store error ⇒ false (treated as lease lost)'; markPendingEffect: 'Store error ⇒ "
        "false ⇒ lease lost'; 'persister wrappers in AgentRunPersister.php never throw (exception ⇒ logged, "
        "returns false/null)', and a guarded settle refused ⇒ LEASE_LOST; recover() 'never throws; every branch "
        "settles or refuses'. Specified behaviour of head: a transient store error on a row the segment still "
        "holds is reported as a lost lease, the segment stops, and the row waits for the reaper.",
        recognisers.store_error_lease_lost,
    ),
    NonGuarantee(
        "NG-sync-outer-requeued",
        ("segment_outcome_true",),
        "spec 5.2 step 5 (AgentRunQueuedHandler.php, ADR-104)",
        "'On the default Sync transport the dispatch in step 5 runs the next attempt inline, nested inside this "
        "call (delay ignored); the outer call still returns REQUEUED.' Specified behaviour of head: the caller of "
        "the outer attempt is told REQUEUED after the nested attempt has already completed, failed or cancelled "
        "the run.",
        recognisers.sync_outer_requeued,
    ),
    NonGuarantee(
        "NG-cancel-probe-fail-closed",
        ("cancel_observed_at_boundary",),
        "spec 3.3 step 3 and 5, 3.6 (AgentRunExecutor::trace)",
        "'If status is CANCELLED: persist the step with the write-fail-closed rule (step 5 semantics, no ownership "
        "check, no renewal) and throw RunCancellationRequestedException'; step 5: 'If it returned false and the "
        "step's effect is a write ⇒ throw AuditPersistenceFailedException' (3.6: 'including a denied or refused "
        "write call that never executed'). Specified behaviour of head: when the cancelled boundary's write step "
        "cannot be stored, the audit failure wins, the settle it leads to cannot move the CANCELLED row, and the "
        "caller is told LEASE_LOST (or FAILED), not CANCELLED.",
        recognisers.cancel_probe_fail_closed,
    ),
    NonGuarantee(
        "NG-reaper-dispatch-dead-letter",
        ("reaper_account_true",),
        "spec 5.1 3e and 9 C6 (ReapStaleAgentRunsCommand.php 159-170)",
        "'Dispatch throws ⇒ build a handle at MAX+1 and T7 settleFailed without owner guard (row is QUEUED, so the "
        "non-terminal guard matches) ⇒ FAILED with reason provider_failed; counted as dead-lettered.' C6: 'the "
        "dead-letter counter is incremented even when nothing was settled (including when reading MAX(sequence) "
        "failed)'. Specified behaviour of head: the reaper reports a dead-letter while the row records the "
        "retryable reason provider_failed, or nothing at all.",
        recognisers.reaper_dispatch_dead_letter,
    ),
)


__all__ = ["NON_GUARANTEES", "NonGuarantee"]
