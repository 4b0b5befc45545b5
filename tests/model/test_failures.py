"""The ADR-095 FailureClassifier and the retry / circuit-trip table (spec section 4).

Restates the peer's ``FailureClassifierTest`` and ``FailureClassTest``, plus the KB-13 flag.
"""

from __future__ import annotations

import pytest

from model.failures import (
    AuditPersistenceFailed,
    CircuitOpenError,
    FallbackChainExhaustedError,
    GenericRuntimeError,
    NetworkError,
    ProviderAuthenticationError,
    ProviderConfigurationError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
    ProviderResponseError,
    RehydrationFailed,
    RunEnqueueFailed,
    StoreError,
    UnsupportedFeatureError,
    WriteWithoutDurableExecution,
    classify,
)
from model.vocab import FailureClass

FC = FailureClass

# ---- FailureClassifierTest ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ProviderConnectionError(), FC.CONNECTION),
        (ProviderConfigurationError(), FC.CONFIGURATION),
        (CircuitOpenError(), FC.CIRCUIT_OPEN),
        (ProviderAuthenticationError(401), FC.AUTH),
        (ProviderRateLimitError(429), FC.RATE_LIMIT),
        (ProviderError(), FC.UNKNOWN),
        (UnsupportedFeatureError(), FC.UNKNOWN),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_classifies_the_provider_exception_family(error: BaseException, expected: FailureClass) -> None:
    assert classify(error) is expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (401, FC.AUTH),
        (403, FC.AUTH),
        (429, FC.RATE_LIMIT),
        (400, FC.CLIENT_ERROR),
        (404, FC.CLIENT_ERROR),
        (499, FC.CLIENT_ERROR),
        (500, FC.SERVER_ERROR),
        (503, FC.SERVER_ERROR),
        (599, FC.SERVER_ERROR),
        (0, FC.UNKNOWN),
        (302, FC.UNKNOWN),
        (600, FC.UNKNOWN),
    ],
)
def test_classifies_a_response_exception_by_its_status_code(code: int, expected: FailureClass) -> None:
    assert classify(ProviderResponseError(code)) is expected


def test_a_response_subclass_is_classified_by_its_code_not_its_type() -> None:
    assert classify(ProviderRateLimitError(503)) is FC.SERVER_ERROR
    assert classify(ProviderAuthenticationError(500)) is FC.SERVER_ERROR


def test_treats_a_psr18_network_exception_as_a_connection_failure() -> None:
    assert classify(NetworkError()) is FC.CONNECTION


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("boom"),
        GenericRuntimeError(),
        StoreError(),
        AuditPersistenceFailed(),
        RunEnqueueFailed(),
        WriteWithoutDurableExecution(),
        RehydrationFailed(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_an_unrecognised_throwable_is_unknown_and_conservatively_handled(error: BaseException) -> None:
    assert classify(error) is FC.UNKNOWN
    assert not classify(error).is_retryable


def test_classifies_a_fallback_chain_by_its_most_recent_attempt() -> None:
    chain = FallbackChainExhaustedError([ProviderAuthenticationError(403), ProviderResponseError(503)])
    assert classify(chain) is FC.SERVER_ERROR


def test_a_fallback_chain_whose_last_attempt_is_not_retryable_is_not_retryable() -> None:
    chain = FallbackChainExhaustedError([ProviderResponseError(503), ProviderConfigurationError()])
    assert classify(chain) is FC.CONFIGURATION


def test_a_nested_fallback_chain_is_classified_by_its_innermost_last_attempt() -> None:
    inner = FallbackChainExhaustedError([ProviderResponseError(400), ProviderConnectionError()])
    outer = FallbackChainExhaustedError([ProviderResponseError(403), inner])
    assert classify(outer) is FC.CONNECTION


def test_an_empty_fallback_chain_is_conservatively_unknown() -> None:
    assert classify(FallbackChainExhaustedError([])) is FC.UNKNOWN


def test_a_nested_empty_fallback_chain_is_unknown() -> None:
    outer = FallbackChainExhaustedError([ProviderResponseError(503), FallbackChainExhaustedError([])])
    assert classify(outer) is FC.UNKNOWN


def test_an_open_circuit_is_classified_before_anything_else() -> None:
    assert classify(CircuitOpenError()) is FC.CIRCUIT_OPEN


def test_kb13_flag_classifies_an_exhausted_fallback_chain_as_unknown() -> None:
    chain = FallbackChainExhaustedError([ProviderResponseError(500), ProviderResponseError(503)])
    assert classify(chain, fallback_chain_is_unknown=True) is FC.UNKNOWN


def test_kb13_flag_leaves_every_error_outside_a_fallback_chain_alone() -> None:
    for error in (ProviderResponseError(503), ProviderConnectionError(), CircuitOpenError()):
        assert classify(error, fallback_chain_is_unknown=True) is classify(error)


# ---- FailureClassTest --------------------------------------------------------------------------

TABLE = {
    FC.CONNECTION: (True, True),
    FC.RATE_LIMIT: (True, True),
    FC.SERVER_ERROR: (True, True),
    FC.CIRCUIT_OPEN: (True, False),
    FC.AUTH: (False, False),
    FC.CONFIGURATION: (False, False),
    FC.CLIENT_ERROR: (False, False),
    FC.UNKNOWN: (False, False),
}


def test_the_retry_and_trip_table_covers_every_failure_class() -> None:
    assert set(TABLE) == set(FailureClass)


@pytest.mark.parametrize("failure_class", list(FailureClass))
def test_each_failure_class_retries_and_trips_as_the_spec_table_says(failure_class: FailureClass) -> None:
    assert (failure_class.is_retryable, failure_class.trips_circuit) == TABLE[failure_class]


def test_retryable_covers_provider_side_faults_and_an_open_circuit() -> None:
    assert {c for c in FailureClass if c.is_retryable} == {
        FC.CONNECTION,
        FC.RATE_LIMIT,
        FC.SERVER_ERROR,
        FC.CIRCUIT_OPEN,
    }


def test_our_side_faults_are_not_retryable() -> None:
    assert not any(c.is_retryable for c in (FC.AUTH, FC.CONFIGURATION, FC.CLIENT_ERROR, FC.UNKNOWN))


def test_tripping_covers_provider_side_faults_but_not_an_already_open_circuit() -> None:
    assert {c for c in FailureClass if c.trips_circuit} == {FC.CONNECTION, FC.RATE_LIMIT, FC.SERVER_ERROR}


def test_failure_class_values_are_the_php_enum_values() -> None:
    assert [c.value for c in FailureClass] == [
        "connection",
        "rateLimit",
        "serverError",
        "circuitOpen",
        "auth",
        "configuration",
        "clientError",
        "unknown",
    ]
