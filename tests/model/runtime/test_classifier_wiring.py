"""What the failure taxonomy and the enums mean for a run (spec 4, 5.2, 6; ADR-092/095/112).

Peer: FailureClassifierTest, FailureClassTest, AgentRunStatusTest, ToolEffectTest —
restated only where the classification decides something about the run (requeue vs
dead-letter, which writes are fenced, which rows accept a write). The pure tables are
tested elsewhere; FailureClassTest::trippingCovers… (circuit breaker) and
AgentRunTerminationReasonTest::onlyProviderFailureIsRetryable decide nothing in the run's
lifecycle and are not restated.
"""

from __future__ import annotations

import pytest

from model.failures import (
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
    UnsupportedFeatureError,
)
from model.records import Registry, ToolSpec
from model.requests import CallProvider
from model.transitions import MarkPendingEffect
from model.vocab import Outcome, RunStatus, TerminationReason, ToolEffect

RETRIED = (Outcome.REQUEUED, RunStatus.QUEUED, TerminationReason.NONE)
DEAD = (Outcome.FAILED, RunStatus.FAILED, TerminationReason.NOT_RETRYABLE)


def _queued_run_failing_with(kit, error):
    kit.enqueue()
    kit.d.fail(kit.req(CallProvider), error)
    outcome = kit.run_queued()
    return outcome, kit.row().status, kit.row().termination_reason


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ProviderConnectionError(), RETRIED),
        (CircuitOpenError(), RETRIED),
        (ProviderConfigurationError(), DEAD),
        (ProviderError(), DEAD),
        (UnsupportedFeatureError(), DEAD),
    ],
    ids=["connection", "circuit_open", "configuration", "base_provider", "unsupported_feature"],
)
def test_the_provider_exception_family_decides_retry_or_dead_letter(kit, error, expected):
    """Peer: FailureClassifierTest::classifiesTheProviderExceptionFamily (+ FailureClassTest::
    retryableCoversProviderSideFaultsAndAnOpenCircuit / ourSideFaultsAreNotRetryable), at run level."""
    assert _queued_run_failing_with(kit, error) == expected


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ProviderAuthenticationError(401), DEAD),
        (ProviderAuthenticationError(403), DEAD),
        (ProviderRateLimitError(429), RETRIED),
        (ProviderResponseError(400), DEAD),
        (ProviderResponseError(500), RETRIED),
        (ProviderResponseError(503), RETRIED),
        (ProviderResponseError(302), DEAD),
    ],
    ids=["401", "403", "429", "400", "500", "503", "302"],
)
def test_a_response_exception_decides_by_its_status_code(kit, error, expected):
    """Peer: FailureClassifierTest::classifiesAResponseExceptionByItsStatusCode, at run level."""
    assert _queued_run_failing_with(kit, error) == expected


def test_a_psr18_network_exception_is_retried_like_a_connection_failure(kit):
    """Peer: FailureClassifierTest::treatsAPsr18NetworkExceptionAsAConnectionFailure, at run level."""
    assert _queued_run_failing_with(kit, NetworkError()) == RETRIED


def test_an_unrecognised_throwable_is_dead_lettered_conservatively(kit):
    """Peer: FailureClassifierTest::anUnrecognisedThrowableIsUnknownAndConservativelyHandled."""
    assert _queued_run_failing_with(kit, GenericRuntimeError("?")) == DEAD


@pytest.mark.parametrize(
    ("attempts", "expected"),
    [
        ((ProviderAuthenticationError(401), ProviderResponseError(503)), RETRIED),
        ((ProviderResponseError(503), ProviderAuthenticationError(401)), DEAD),
        ((ProviderResponseError(400), FallbackChainExhaustedError((ProviderConnectionError(),))), RETRIED),
    ],
    ids=["last_503", "last_401", "nested_last_connection"],
)
def test_a_fallback_chain_decides_by_its_most_recent_attempt(kit, attempts, expected):
    """Peer: FailureClassifierTest::classifiesAFallbackChainByItsMostRecentAttempt, at run level."""
    assert _queued_run_failing_with(kit, FallbackChainExhaustedError(attempts)) == expected


def test_an_empty_fallback_chain_is_dead_lettered_conservatively(kit):
    """Peer: FailureClassifierTest::anEmptyFallbackChainIsConservativelyUnknown, at run level."""
    assert _queued_run_failing_with(kit, FallbackChainExhaustedError(())) == DEAD


@pytest.mark.parametrize(
    ("fence", "expected"),
    [
        ("", RETRIED),
        ("read_only", RETRIED),
        ("idempotent_write", RETRIED),
        ("non_idempotent_write", DEAD),
        ("not_an_effect", RETRIED),
    ],
)
def test_only_a_standing_non_idempotent_fence_refuses_the_retry(kit, fence, expected):
    """Peer: ToolEffectTest::onlyTheNonIdempotentWriteIsUnsafeToRetry, at run level: recovery's
    mayRetryAfterFence on the re-read row (unparseable values allow the retry). The fence value is
    placed on the running row as the repository double would hold it."""
    kit.enqueue()
    kit.d.before(kit.req(CallProvider), lambda _r: kit.place(pending_effect=fence))
    kit.d.fail(kit.req(CallProvider), ProviderConnectionError())

    outcome = kit.run_queued()

    assert (outcome, kit.row().status, kit.row().termination_reason) == expected


@pytest.mark.parametrize("effect", [None, *ToolEffect])
def test_a_tool_is_fenced_exactly_when_its_effect_is_a_write(kit, effect):
    """Peer: ToolEffectTest::classifiesWriteAndRetrySafety, at run level: a write effect is stamped
    with its own value; read-only and undeclared tools are not fenced."""
    registry = Registry((ToolSpec("t", effect, remote=True, server_requires_approval=False),))

    kit.interactive(kit.turn("t"), offered=("t",), registry=registry)

    stamps = [t.effect for t in kit.updates(MarkPendingEffect)]
    assert stamps == ([effect.value, ""] if effect is not None and effect.is_write else [])


@pytest.mark.parametrize("status", list(RunStatus))
def test_only_a_non_terminal_run_accepts_a_write(kit, status):
    """Peer: AgentRunStatusTest::terminalStatesAreCompletedFailedCancelled and
    ::nonTerminalStatesAreQueuedRunningAndWaiting, at run level: cancel (T8) moves exactly the
    non-terminal rows; a terminal row is left as it is."""
    kit.enqueue()
    before = kit.place(status=status)

    moved = kit.cancel()

    assert moved is (not status.is_terminal)
    assert (kit.row() == before) is status.is_terminal
