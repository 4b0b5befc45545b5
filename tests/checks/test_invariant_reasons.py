"""Every reason and error class a settle writes names a cause that occurred (terminal_reason_names_cause),
and a dead-letter's fence is judged from the true effect of its stamped call (dead_letter_reason_matches_cause),
on hand-built histories that pass and that fail."""

from __future__ import annotations

from invariant_histories import FAIL, INFO, INVOKE, OK, OTHER, History, judge

from checks import Validity
from checks.history import PROVIDER
from model.statements import DEAD_LETTER_STALE, NAMES

REASON = "terminal_reason_names_cause"
DEAD = "dead_letter_reason_matches_cause"
NON_IDEM = "non_idempotent_write"


def _segment(b: History, *, entry: str = "run_interactive") -> None:
    b.plan({})
    b.segment(entry)
    b.start()
    b.event(INVOKE, kind="request")


def _provider(b: History, *, ok: bool = True, synthesis: bool = False) -> None:
    b.add(PROVIDER, INVOKE, round=1, synthesis=synthesis)
    if ok:
        b.add(PROVIDER, OK, tokens=1)
    else:
        b.add(PROVIDER, FAIL, error="ProviderConnectionException", failure_class="connection",
              true_class="connection")  # fmt: skip


def test_completed_after_an_ordinary_call_that_returned_holds() -> None:
    b = History()
    _segment(b)
    _provider(b)
    b.settle("completed", termination_reason="completed")
    verdict = judge(REASON, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_max_iterations_needs_the_synthesis_round() -> None:
    good, bad = History(), History()
    for b, synthesis in ((good, True), (bad, False)):
        _segment(b)
        _provider(b, synthesis=synthesis)
        b.settle("completed", termination_reason="max_iterations")
    assert judge(REASON, good).valid is Validity.VALID
    assert judge(REASON, bad).valid is Validity.INVALID


def test_a_truncation_or_policy_reason_needs_the_scripts_stop_at_a_reached_round() -> None:
    cases = [
        ("completed", "budget_exhausted", "budget_exhausted", True),
        ("completed", "context_truncated", "budget_exhausted", False),
        ("failed", "policy_denied", "guardrail_denied", True),
        ("failed", "approval_denied", "guardrail_denied", False),
    ]
    for status, reason, stop, valid in cases:
        b = History()
        b.plan({1: stop})
        b.segment("run_interactive")
        b.start()
        b.event(INVOKE, kind="request")
        b.settle(status, termination_reason=reason)
        assert (judge(REASON, b).valid is Validity.VALID) is valid, (reason, stop)


def test_a_provider_failure_class_must_be_one_the_segment_met() -> None:
    good, bad = History(), History()
    for b, error in ((good, "ProviderConnectionException"), (bad, "ProviderAuthenticationException")):
        _segment(b)
        _provider(b, ok=False)
        b.settle("failed", termination_reason="provider_failed", error_class=error)
    assert judge(REASON, good).valid is Validity.VALID
    verdict = judge(REASON, bad)
    assert verdict.valid is Validity.INVALID and "ProviderAuthenticationException" in verdict.explanation


def test_an_audit_failure_class_needs_a_failed_audit_of_a_write_step() -> None:
    write, read_only = History(), History()
    for b, effect in ((write, NON_IDEM), (read_only, "read_only")):
        _segment(b)
        b.event(FAIL, call="c1", execution=1, true_effect=effect)
        b.settle("failed", termination_reason="provider_failed", error_class="AuditPersistenceFailedException")
    assert judge(REASON, write).valid is Validity.VALID
    assert judge(REASON, read_only).valid is Validity.INVALID


def test_a_reaper_dead_letter_writes_no_error_class() -> None:
    good, bad = History(), History()
    for b, error in ((good, ""), (bad, "ProviderException")):
        b.enqueue()
        b.claim(identity=OTHER)
        b.segment("reap", run="", process="reaper")
        b.store(NAMES[DEAD_LETTER_STALE], identity="reaper", process="reaper", status="failed",
                termination_reason="not_retryable", error_class=error)  # fmt: skip
    assert judge(REASON, good).valid is Validity.VALID
    assert judge(REASON, bad).valid is Validity.INVALID


def test_a_failed_row_with_a_completion_reason_is_a_violation() -> None:
    b = History()
    _segment(b)
    _provider(b)
    b.settle("failed", termination_reason="completed")
    assert "no such reason" in judge(REASON, b).explanation


# -- the fence behind a reaper's dead-letter is its stamped call's true effect ---------------------------


def _reaped_fenced(b: History, true_effect: str) -> int:
    b.enqueue()
    b.segment("run_queued")
    b.claim()
    b.stamp(NON_IDEM)
    b.tool("c1", true_effect)
    b.segment_done(INFO)
    return b.store(NAMES[DEAD_LETTER_STALE], identity="reaper", process="reaper", status="failed",
                   termination_reason="not_retryable")  # fmt: skip


def test_a_fence_stamped_for_a_truly_non_idempotent_call_justifies_not_retryable() -> None:
    b = History()
    _reaped_fenced(b, NON_IDEM)
    verdict = judge(DEAD, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_a_fence_whose_stamped_call_is_truly_idempotent_does_not_justify_not_retryable() -> None:
    """A resolver that files an idempotent tool as non-idempotent stamps the same value; the reason
    must follow what the call really was."""
    b = History()
    settle = _reaped_fenced(b, "idempotent_write")
    verdict = judge(DEAD, b)
    assert verdict.valid is Validity.INVALID and settle in verdict.witness


def test_a_fence_stamped_for_an_unknown_name_justifies_not_retryable() -> None:
    """ADR-111: a name no loaded code has resolves to the strictest effect."""
    b = History()
    _reaped_fenced(b, "unknown")
    assert judge(DEAD, b).valid is Validity.VALID
