"""Recovery invariant: retryable_failure_retried (ADR-095/104; KB-13 is its historic defect)."""

from __future__ import annotations

import pytest
from invariant_histories import INFO, OTHER, WORKER, History, judge

from checks import Validity
from checks.lifecycle import RETRYABLE_CLASSES
from model.statements import FINISH_RUN, NAMES, REQUEUE

NAME = "retryable_failure_retried"
NON_IDEM = "non_idempotent_write"


def _worker(b: History, *, process: str = WORKER) -> int:
    """A worker segment that claimed the queued run and called the provider."""
    segment = b.segment("run_queued", process=process)
    b.claim(identity=process)
    b.event(seq=0, kind="request", identity=process)
    b.provider(process=process)
    return segment


def _dead_letter(b: History, reason: str, *, identity: str = WORKER) -> int:
    return b.settle(
        "failed", identity=identity, site="recovery.dead_letter", termination_reason=reason, error_class="E"
    )


def _requeue(b: History, *, identity: str = WORKER) -> int:
    return b.store(
        NAMES[REQUEUE],
        identity=identity,
        site="recovery.requeue",
        status="queued",
        claimed_by="",
        lease_expires=0,
        pending_effect="",
        requeue_count=1,
    )


def test_a_retryable_failure_dead_lettered_not_retryable_is_a_violation() -> None:
    """KB-13: an exhausted fallback chain of 5xx is classified unknown and dead-lettered."""
    b = History()
    b.enqueue()
    _worker(b)
    failure = b.provider_fail("serverError", "unknown")
    settle = _dead_letter(b, "not_retryable")
    b.segment_done(outcome="failed")
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (failure, settle)
    assert "serverError" in verdict.explanation


def test_a_retryable_failure_that_is_requeued_is_valid() -> None:
    b = History()
    b.enqueue()
    _worker(b)
    b.provider_fail("connection")
    b.decide("", decider="recovery", process=WORKER, decision="retry")
    _requeue(b)
    b.segment_done(outcome="requeued")
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("1 ")


def test_a_retryable_failure_out_of_budget_is_dead_lettered_retries_exhausted() -> None:
    b = History()
    b.enqueue()
    _worker(b)
    b.provider_fail("rateLimit")
    b.decide("", decider="recovery", process=WORKER, decision="retry")
    _dead_letter(b, "retries_exhausted")
    assert judge(NAME, b).valid is Validity.VALID


def test_the_fence_rule_may_dead_letter_a_retryable_failure() -> None:
    """Spec 5.2 step 2: a standing non-idempotent fence refuses the retry (ADR-112). The recovery's read
    returned the fence, and the call it was stamped for truly is a non-idempotent write."""
    b = History()
    b.enqueue()
    _worker(b)
    b.stamp(NON_IDEM)
    b.tool("c1", NON_IDEM)
    b.provider_fail("serverError")
    b.find()
    _dead_letter(b, "not_retryable")
    assert judge(NAME, b).valid is Validity.VALID


def test_a_fence_whose_stamped_call_is_truly_idempotent_does_not_excuse_a_dead_letter() -> None:
    """The fence is judged from the true effect of the call it was stamped for, never from its
    value (a resolver that files an idempotent tool as non-idempotent writes the same value)."""
    b = History()
    b.enqueue()
    _worker(b)
    b.stamp(NON_IDEM)
    b.tool("c1", "idempotent_write")
    failure = b.provider_fail("serverError")
    b.find()
    settle = _dead_letter(b, "not_retryable")
    assert judge(NAME, b).witness == (failure, settle)


def test_a_deciders_note_is_not_the_fence() -> None:
    """The recovery's own note says it read a non-idempotent fence; the store's read returned none."""
    b = History()
    b.enqueue()
    _worker(b)
    failure = b.provider_fail("serverError")
    b.find()
    b.decide(NON_IDEM, decider="recovery", process=WORKER)
    settle = _dead_letter(b, "not_retryable")
    assert judge(NAME, b).witness == (failure, settle)


def test_an_idempotent_fence_does_not_excuse_a_dead_letter() -> None:
    b = History()
    b.enqueue()
    _worker(b)
    b.stamp("idempotent_write")
    b.tool("c1", "idempotent_write")
    failure = b.provider_fail("circuitOpen")
    b.find()
    settle = _dead_letter(b, "not_retryable")
    assert judge(NAME, b).witness == (failure, settle)


def test_a_reaper_decision_is_not_the_segments_recovery() -> None:
    b = History()
    b.enqueue()
    _worker(b)
    failure = b.provider_fail("serverError", "unknown")
    b.decide(NON_IDEM, decider="reaper", process="reaper")
    settle = _dead_letter(b, "not_retryable")
    assert judge(NAME, b).witness == (failure, settle)


@pytest.mark.parametrize("true_class", ["auth", "configuration", "clientError", "unknown"])
def test_a_non_retryable_failure_may_be_dead_lettered_not_retryable(true_class: str) -> None:
    b = History()
    b.enqueue()
    _worker(b)
    b.provider_fail(true_class)
    _dead_letter(b, "not_retryable")
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("0 ")


def test_the_retryable_set_is_the_adr_095_one() -> None:
    assert {"connection", "rateLimit", "serverError", "circuitOpen"} == RETRYABLE_CLASSES


def test_a_failure_without_a_true_class_is_not_judged() -> None:
    b = History()
    b.enqueue()
    _worker(b)
    b.provider_fail(None, "serverError")
    _dead_letter(b, "not_retryable")
    assert judge(NAME, b).explanation.startswith("0 ")


def test_failures_off_the_worker_path_are_not_judged() -> None:
    """An interactive segment has no recovery: it settles FAILED provider_failed."""
    b = History()
    b.segment("run_interactive")
    b.start()
    b.provider()
    b.provider_fail("serverError")
    _dead_letter(b, "not_retryable")
    assert judge(NAME, b).explanation.startswith("0 ")


def test_a_settle_by_another_identity_does_not_resolve_the_failure() -> None:
    """A settle recorded by the segment's process under another identity is not the segment's own."""
    b = History()
    b.enqueue()
    _worker(b)
    b.provider_fail("serverError", "unknown")
    _dead_letter(b, "not_retryable", identity=OTHER)  # process WORKER, identity OTHER: not this segment's
    b.segment_done(outcome="lease_lost")
    assert judge(NAME, b).explanation.startswith("0 ")


def test_a_refused_dead_letter_is_not_judged() -> None:
    b = History()
    b.enqueue()
    _worker(b)
    b.provider_fail("serverError", "unknown")
    b.store(NAMES[FINISH_RUN], site="recovery.dead_letter", matched=False)
    b.segment_done(outcome="lease_lost")
    assert judge(NAME, b).explanation.startswith("0 ")


def test_a_crashed_worker_leaves_its_failure_unjudged() -> None:
    b = History()
    b.enqueue()
    _worker(b)
    b.provider_fail("serverError", "unknown")
    b.segment_done(INFO)
    b.crash()
    b.claim(identity=OTHER)  # another worker, after the reaper requeued it
    assert judge(NAME, b).explanation.startswith("0 ")


def test_a_requeue_then_a_nested_attempt_dead_lettered_for_its_own_reason_is_valid() -> None:
    """Sync transport: the requeue's wake-up runs the next attempt inline, nested in the same
    process and under the same identity; its non-retryable failure is its own."""
    b = History()
    b.enqueue()
    _worker(b)
    b.provider_fail("serverError")
    b.decide("", decider="recovery", process=WORKER, decision="retry")
    _requeue(b)
    _worker(b)
    b.provider_fail("auth")
    _dead_letter(b, "not_retryable")
    b.segment_done(outcome="failed")
    b.segment_done(outcome="requeued")
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("1 ")


def test_a_nested_attempts_retryable_failure_is_judged_in_its_own_segment() -> None:
    b = History()
    b.enqueue()
    _worker(b)
    b.provider_fail("connection")
    _requeue(b)
    _worker(b)
    failure = b.provider_fail("serverError", "unknown")
    settle = _dead_letter(b, "not_retryable")
    b.segment_done(outcome="failed")
    b.segment_done(outcome="requeued")
    assert judge(NAME, b).witness == (failure, settle)


def test_an_outer_failure_is_not_resolved_by_a_nested_segments_settle() -> None:
    """Only the segment's own T7/T11 resolves its failure, never one of a segment nested in it."""
    b = History()
    b.enqueue()
    _worker(b)
    b.provider_fail("serverError")
    _worker(b)  # (not realistic without a requeue, but it pins the attribution)
    b.provider_fail("auth")
    _dead_letter(b, "not_retryable")
    b.segment_done(outcome="failed")
    b.segment_done(outcome="lease_lost")
    assert judge(NAME, b).explanation.startswith("0 ")
