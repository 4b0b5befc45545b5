"""Which invariant judges which promise: every guarantee of spec 7.1 (ADR-081 .. ADR-141) and the spec's
numbers the runtime must keep, each with the always-properties (evaluated in every simulation) that judge
it, or the reason none can.

Data, so that a test can hold it to the catalogue (every name an invariant of :data:`checks.INVARIANTS`)
and to the spec (every ADR of 7.1 present); the promises of ``register/claims.py`` each name their
invariant themselves. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Promise:
    adr: str
    promise: str
    """The spec's words (7.1 unless ``section`` says otherwise), shortened."""
    invariants: tuple[str, ...]
    unjudged: str = ""
    """Why no invariant of a sweep judges it (empty when ``invariants`` does)."""
    section: str = "7.1"


PROMISES: tuple[Promise, ...] = (
    Promise("ADR-081", "a database hiccup never fails a run that was otherwise fine", ("read_only_audit_fail_soft",)),
    Promise("ADR-081", "a stream disconnect never leaves a run RUNNING", ("every_run_terminates",)),
    Promise("ADR-084/101", "of two racing approvals only one gets to run the pending turn",
            ("non_idempotent_at_most_once", "approved_write_turn_recorded")),
    Promise("ADR-084/101", "the resumed segment appends from MAX+1",
            ("unique_event_sequence", "event_sequence_without_gap")),
    Promise("ADR-092", "terminal is terminal: once settled, later settles change nothing", ("terminal_is_terminal",)),
    Promise("ADR-092", "a suspension fails closed (SUSPEND_FAILED)", ("segment_outcome_true",)),
    Promise("ADR-092", "status and reason are separate fields; only provider_failed is retryable",
            ("dead_letter_reason_matches_cause", "terminal_reason_names_cause")),
    Promise("ADR-095", "a single taxonomy; 5xx retries, auth, config and other 4xx do not",
            ("retryable_failure_retried", "dead_letter_reason_matches_cause", "recovery_per_spec",
             "failure_classified_per_spec")),
    Promise("ADR-095", "5xx trips the circuit; an open circuit never trips it again", (),
            "the provider's circuit breaker is not modelled: the world injects circuitOpen as a failure class"),
    Promise("ADR-101", "run() and approve() do not throw to report an outcome", ("entry_points_throw_as_specified",)),
    Promise("ADR-101", "suspension is guarded on RUNNING: a cancelled run cannot come back to life",
            ("terminal_is_terminal",)),
    Promise("ADR-102", "duplicate or stale messages do no harm",
            ("non_idempotent_at_most_once", "terminal_is_terminal", "settles_by_owner")),
    Promise("ADR-102", "cancelling a queued run works", ("enqueue_cancel_result_true", "terminal_is_terminal")),
    Promise("ADR-102", "a failed dispatch at enqueue leaves no orphan QUEUED row",
            ("every_run_terminates", "enqueue_cancel_result_true")),
    Promise("ADR-102", "a rehydration failure settles FAILED",
            ("terminal_reason_names_cause", "segment_outcome_true", "payload_failure_has_cause")),
    Promise("ADR-102", "the handler does not throw for outcomes", ("entry_points_throw_as_specified",)),
    Promise("ADR-102", "queued runs execute at least once", ("every_run_terminates",)),
    Promise("ADR-103", "a cancel is noticed at the next boundary; its step is stored; no new call starts after it",
            ("cancel_observed_at_boundary",)),
    Promise("ADR-104", "the lease is renewed at every step",
            ("lease_is_the_specs", "lease_within_bound", "writes_fenced_under_lease")),
    Promise("ADR-104", "a worker whose lease is gone ends with LEASE_LOST and leaves the row to others",
            ("lost_lease_stops", "lease_lost_means_lost", "settles_by_owner")),
    Promise("ADR-104", "a zombie cannot write an event into the sequence range of the new owner",
            ("unique_event_sequence",)),
    Promise("ADR-104", "the reaper's writes re-check staleness, so a live worker wins", ("settles_by_owner",)),
    Promise("ADR-104", "retries follow the failure class; one budget of 3 requeues",
            ("retryable_failure_retried", "requeue_budget_respected", "requeue_backoff_per_spec",
             "recovery_per_spec")),
    Promise("ADR-104", "a dead letter is FAILED with retries_exhausted or not_retryable",
            ("dead_letter_reason_matches_cause", "reaper_account_true")),
    Promise("ADR-111", "a write whose audit step cannot be stored fails the run; never reported as success",
            ("no_success_over_unrecorded_write", "every_write_accounted")),
    Promise("ADR-111", "that failure is never retried automatically", ("no_retry_after_failed_write_audit",)),
    Promise("ADR-111", "an unknown name gets the strictest effect", ("unknown_name_is_strictest",)),
    Promise("ADR-111", "the effect of a tool cannot be configured by an administrator", (),
            "no administrator exists in the world: a tool's effect is the scenario's definition"),
    Promise("ADR-112", "a non_idempotent_write runs at most once",
            ("non_idempotent_at_most_once", "fence_matches_inflight_write")),
    Promise("ADR-122", "a requeued run begins its next attempt without a fence",
            ("fence_matches_inflight_write", "terminal_row_no_stale_fence")),
    Promise("ADR-132", "when the approval of a write turn cannot be stored, the write is not executed",
            ("approved_write_turn_recorded",)),
    Promise("ADR-141", "no segment executes without a lease; a write is refused without a lease to fence it",
            ("writes_fenced_under_lease",)),
    Promise("ADR-141", "abandoned interactive and resume segments are reaped and dead-lettered; fence rule first",
            ("every_run_terminates", "dead_letter_reason_matches_cause")),
    Promise("spec", "LEASE_SECONDS = 900", ("lease_is_the_specs",), section="1.3"),
    Promise("spec", "requeue backoff min(30 s x 2^c, 600 s); none on the reaper's re-dispatch",
            ("requeue_backoff_per_spec",), section="1.3"),
    Promise("spec", "event sequence numbers have no gaps", ("event_sequence_without_gap",), section="1.2"),
    Promise("spec", "the loop: rounds 1..5 (or the cap, at most 20), then one synthesis; a turn without tool "
            "calls completes; a pipeline stop ends it before the provider call", ("rounds_per_spec",),
            section="1.3, 3.2"),
    Promise("spec", "runQueued claims after its pre-check (queued, with a request); a resume claims a row "
            "waiting for its decision", ("claim_follows_precheck",), section="2 T3, T10, 3.1"),
    Promise("spec", "startRun and enqueueRun insert the columns the spec lists, the rest at their defaults",
            ("inserted_row_per_spec",), section="2 T1, T2"),
    Promise("spec", "settleCompleted writes the loop's totals; a FAILED settle zero totals",
            ("settled_totals_per_spec",), section="2 T7"),
    Promise("spec", "a resume with the user's input runs its pending calls (no approval gates such a turn)",
            ("input_resume_runs_its_calls",), section="3.2"),
    Promise("spec", "invoke refuses an unknown tool name and a tool the run was not offered (error result, "
            "never run)", ("invoked_tool_known_and_offered",), section="3.2"),
    Promise("spec", "a won claim re-resolves the event position from a fresh read (MAX+1 after the claim)",
            ("position_reresolved_after_claim",), section="1.2, 3.1"),
    Promise("spec", "the reaper selects running leased rows, oldest lease first", ("stale_selection_per_spec",),
            section="2 T12"),
    Promise("spec", "recovery: not retryable ⇒ dead-letter not_retryable; an unreadable row ⇒ retries_exhausted",
            ("recovery_per_spec", "dead_letter_reason_matches_cause"), section="5.2"),
    Promise("spec", "a requeue leaves the row QUEUED, count+1, claim and lease cleared",
            ("requeued_row_per_spec", "requeue_budget_respected"), section="2.1 T11, T13"),
    Promise("spec", "a read-only call stamps no fence; a stamp holds the call's write effect, a clear ''",
            ("fence_stamps_a_write",), section="3.4, 3.3"),
    Promise("spec", "a tool step records its invocation's result; no other step records a tool execution",
            ("audit_step_execution_true",), section="3.2"),
    Promise("spec", "an approval of the current turn is recorded and runs exactly the calls the approver approved; "
            "only a stale approval is handed back", ("approval_runs_as_decided",), section="3.2, T10"),
    Promise("spec", "a provider failure is classified by its exception family, then its status code: 401/403 auth, "
            "429 rateLimit, 5xx serverError, other 4xx clientError, else unknown", ("failure_classified_per_spec",),
            section="4"),
)  # fmt: skip


__all__ = ["PROMISES", "Promise"]
