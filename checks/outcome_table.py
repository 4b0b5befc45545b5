"""The outcome table: for every entry point and everything it can report, the condition on what
physically happened under which the report is true (spec 3.1, 3.3, 3.5, 5.1, 5.2, T2, T8).

Data, so that the report's glossary can render it and a test can hold the checkers' docstrings to
it. ``checker`` names the invariant that judges the row; ``spec`` the section the condition is taken
from. "Its statements" are the guarded statements the call itself issued (a call nested in it on
the Sync transport is a call of its own); "matched" means the store applied it; "held" means the
row the store held just before was RUNNING under the call's identity with a lease not yet past in
true time. Standard library only; knows nothing but these words.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.statements import CANCEL, CLAIM_FOR_RESUME, ENQUEUE_RUN


@dataclass(frozen=True, slots=True)
class OutcomeRule:
    """One row of the table: entry point x what it reports -> when that report is true."""

    entry: str
    outcome: str
    truth: str
    spec: str
    checker: str


_SEGMENT = "segment_outcome_true"
_LOST = "lease_lost_means_lost"
_REAPER = "reaper_account_true"
_CLIENT = "enqueue_cancel_result_true"
_REASON = "terminal_reason_names_cause"
_DEAD = "dead_letter_reason_matches_cause"
_SEGMENTS = "every segment call: run_queued (both transports), run_interactive, approve, submit_input"

OUTCOME_TABLE: tuple[OutcomeRule, ...] = (
    OutcomeRule(_SEGMENTS, "completed", "its last statement is its own settle (T7), which matched and left the "
                "row COMPLETED; or (run_interactive) its begin (T1) failed and none of its statements matched",
                "3.5; 3.1 'No handle ⇒ no settles'", _SEGMENT),
    OutcomeRule(_SEGMENTS, "failed", "its last statement is its own settle (T7), which matched and left the row "
                "FAILED; or (run_interactive) the run is unpersisted as above", "3.1, 3.5, 5.2", _SEGMENT),
    OutcomeRule(_SEGMENTS, "guardrail_blocked / guardrail_approval_required", "its last statement is its own "
                "settle, which matched and left the row FAILED policy_denied / approval_denied (or unpersisted)",
                "3.5", _SEGMENT),
    OutcomeRule(_SEGMENTS, "awaiting_approval / awaiting_input", "its last statement is its own suspend or "
                "release (T9), which matched and left the row waiting for approval / for input", "3.5, T9", _SEGMENT),
    OutcomeRule(_SEGMENTS, "suspend_failed", "no suspend (T9) of the call matched", "3.5, C5", _SEGMENT),
    OutcomeRule(_SEGMENTS, "cancelled", "a read of the call returned the row CANCELLED and none of its later "
                "statements matched", "3.3 step 3, 3.5", _SEGMENT),
    OutcomeRule("run_queued", "requeued", "its own requeue (T11) matched and its wake-up dispatch returned; when "
                "the call returns (the Sync transport's nested retry included) the row it left is not terminal",
                "5.2 steps 4-5", _SEGMENT),
    OutcomeRule(_SEGMENTS, "lease_lost", "its last statement failed or matched nothing, and the row the store "
                "held just before it was not held by the call", "3.3 step 4, 3.5, 3.6, 5.2", _LOST),
    OutcomeRule("run_queued, approve, submit_input", "nothing (null: no claim / refused before claiming)",
                "none of its statements matched", "3.1, T3, T10", _SEGMENT),
    OutcomeRule("approve, submit_input", "RunAlreadyResumingException", "its claim (T10) failed or matched "
                "nothing", CLAIM_FOR_RESUME, _SEGMENT),
    OutcomeRule("reap (per row)", "requeued", "its requeue (T13) of the row matched and the wake-up dispatch "
                "returned", "5.1 3d-e", _REAPER),
    OutcomeRule("reap (per row)", "dead_lettered, reason R", "a statement of the tick on the row matched and left "
                "it FAILED with reason R, a dead-letter reason (not_retryable or retries_exhausted)",
                "5.1 3a-c, ADR-104 'dead-letter = FAILED + retries_exhausted/not_retryable'", _REAPER),
    OutcomeRule("reap (per row)", "skipped", "no statement of the tick on the row matched", "5.1 3a, 3d", _REAPER),
    OutcomeRule("reap", "the printed counts", "equal the ticks' per-row accounts", "5.1 step 4", _REAPER),
    OutcomeRule("enqueue", "the run's uuid", "its insert (T2) matched and its wake-up dispatch returned", ENQUEUE_RUN,
                _CLIENT),
    OutcomeRule("enqueue", "RunEnqueueFailedException", "its insert never matched (not issued, or failed), or "
                "its wake-up dispatch threw", ENQUEUE_RUN, _CLIENT),
    OutcomeRule("cancel", "true / false", "true exactly when its cancel (T8) matched", f"{CANCEL}, C8", _CLIENT),
    OutcomeRule("every settle", "reason completed / max_iterations", "the settling segment's last provider call "
                "(an ordinary one / the synthesis round) returned", "3.2", _REASON),
    OutcomeRule("every settle", "reason budget_exhausted / context_truncated / policy_denied / approval_denied",
                "the run's script stops through that pipeline stage at a round the settling segment reached",
                "3.2, 3.5, C2", _REASON),
    OutcomeRule("every FAILED settle (T7)", "error class", "names a failure that occurred in the settling "
                "segment before it: a provider failure of that class, a failed audit of a write step, a dispatch "
                "that threw, a read that failed after the claim, a suspend or release that failed or was refused, "
                "a budget stop in the no-tools branch", "3.1, 3.5, 3.6, 5.1 3e, C2, T2", _REASON),
    OutcomeRule("every dead-letter", "not_retryable / retries_exhausted", "not_retryable: a failure whose true "
                "class is not retryable, a failed write audit, a fence whose stamped call truly is a non-idempotent "
                "write (or an unknown name), or no stored request; retries_exhausted: the budget is spent or the "
                "retry could not be set up", "5.1, 5.2, ADR-095, ADR-112", _DEAD),
)  # fmt: skip
"""Entry point x outcome -> truth condition, in the order the report shows them."""


def table_rows() -> list[dict[str, str]]:
    """The table as plain rows (entry, outcome, truth, spec, checker) for a report to render."""
    return [
        {"entry": r.entry, "outcome": r.outcome, "truth": r.truth, "spec": r.spec, "checker": r.checker}
        for r in OUTCOME_TABLE
    ]


__all__ = ["OUTCOME_TABLE", "OutcomeRule", "table_rows"]
