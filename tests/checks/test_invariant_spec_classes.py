"""Spec 4's classifier against the failure the world injected (checks/spec_classes.py), on hand-built
histories with near misses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from invariant_histories import History, judge

from checks import Validity
from checks.spec_rules import SPEC_CLASSES
from model.failures import classify
from sim.world.provider import _PROVIDER_FAILURES, TRUE_CLASS

CLASSIFIED = "failure_classified_per_spec"
CLASSES = sorted(SPEC_CLASSES)


def _spec_class(code: int) -> str:
    """Spec 4 rule 5, written out here (not the runtime's classifier): the class of an HTTP status."""
    if code in (401, 403):
        return "auth"
    if code == 429:
        return "rateLimit"
    if 500 <= code <= 599:
        return "serverError"
    if 400 <= code <= 499:
        return "clientError"
    return "unknown"


@pytest.mark.parametrize("truth", CLASSES)
def test_a_failure_classified_as_the_world_injected_it_holds(truth: str) -> None:
    b = History()
    b.start()
    b.provider()
    b.provider_fail(truth)
    verdict = judge(CLASSIFIED, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


@pytest.mark.parametrize(
    ("truth", "given_class"),
    [
        ("clientError", "auth"),  # HTTP 400 filed with 401/403
        ("clientError", "unknown"),  # 400-498 falling through to the last rule
        ("auth", "clientError"),  # 401 or 403 missed
        ("serverError", "unknown"),  # KB-13: an exhausted chain of 5xx
        ("rateLimit", "serverError"),  # two retryable classes: the outcome is alike, the class is not
    ],
)
def test_a_failure_given_another_class_is_a_violation(truth: str, given_class: str) -> None:
    b = History()
    b.start()
    b.provider()
    fail = b.provider_fail(truth, given_class)
    verdict = judge(CLASSIFIED, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (fail,)
    assert f"classified {given_class!r}" in verdict.explanation and repr(truth) in verdict.explanation


def test_only_the_misclassified_failure_is_the_witness() -> None:
    b = History()
    b.start()
    b.provider()
    b.provider_fail("serverError")
    b.provider()
    wrong = b.provider_fail("clientError", "auth")
    b.provider()
    b.provider_fail("auth")
    verdict = judge(CLASSIFIED, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (wrong,) and verdict.judged == 3


def test_a_failure_without_a_true_class_is_not_judged() -> None:
    b = History()
    b.start()
    b.provider()
    b.provider_fail(None, "auth")
    verdict = judge(CLASSIFIED, b)
    assert verdict.valid is not Validity.INVALID and verdict.judged == 0


def test_a_missing_classification_is_a_violation() -> None:
    b = History()
    b.start()
    b.provider()
    fail = b.provider_fail("clientError")
    b.ops[fail].value["failure_class"] = None
    verdict = judge(CLASSIFIED, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (fail,)


@given(st.integers(min_value=0, max_value=700), st.sampled_from(CLASSES))
def test_a_status_code_is_judged_by_spec_4_alone(code: int, given_class: str) -> None:
    b = History()
    b.start()
    b.provider()
    b.provider_fail(_spec_class(code), given_class)
    verdict = judge(CLASSIFIED, b)
    assert (verdict.valid is Validity.VALID) == (given_class == _spec_class(code))


@pytest.mark.parametrize("kind", sorted(_PROVIDER_FAILURES))
def test_the_runtimes_classifier_agrees_with_the_worlds_truth_for_every_injected_failure(kind: str) -> None:
    """The head's classifier gives every failure the world can inject its true class: no violation on head."""
    b = History()
    b.start()
    b.provider()
    b.provider_fail(TRUE_CLASS[kind], classify(_PROVIDER_FAILURES[kind]()).value)
    assert judge(CLASSIFIED, b).valid is Validity.VALID


def test_the_kb13_flags_classification_of_an_exhausted_5xx_chain_is_a_violation() -> None:
    b = History()
    b.start()
    b.provider()
    given_class = classify(_PROVIDER_FAILURES["fallbackServerError"](), fallback_chain_is_unknown=True).value
    fail = b.provider_fail(TRUE_CLASS["fallbackServerError"], given_class)
    verdict = judge(CLASSIFIED, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (fail,)
