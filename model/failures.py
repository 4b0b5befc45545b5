"""The throwables of the runtime, and the ADR-095 FailureClassifier.

Three families, kept apart as h11 does: *injected faults* the world throws into a
generator (store errors, provider failures, dispatch errors), *control flow* the
runtime raises for itself (lease lost, approval required...), and *harness bugs*
(:class:`ContractError`), which are never a fault and always a crash.
Each runtime throwable carries ``error_class``: the short PHP class name the row's
``error_class`` column would store.
"""

from __future__ import annotations

from collections.abc import Sequence

from model.vocab import FailureClass


class ContractError(Exception):
    """A driver broke the request/response contract. A harness bug, never a simulated fault."""


class RuntimeThrowable(Exception):
    """Base of every throwable the simulated PHP runtime can see."""

    error_class = "RuntimeException"


# ---- injected by the world -------------------------------------------------------------------


class StoreError(RuntimeThrowable):
    """A database statement failed (connection drop, deadlock, timeout)."""

    error_class = "DBALException"


class DispatchError(RuntimeThrowable):
    """The message bus refused the wake-up."""

    error_class = "TransportException"


class ProviderError(RuntimeThrowable):
    """Base provider exception; classified unknown."""

    error_class = "ProviderException"


class ProviderConnectionError(ProviderError):
    error_class = "ProviderConnectionException"


class ProviderConfigurationError(ProviderError):
    error_class = "ProviderConfigurationException"


class ProviderResponseError(ProviderError):
    """A provider answered with an HTTP status; ``code`` drives the classification."""

    error_class = "ProviderResponseException"

    def __init__(self, code: int) -> None:
        super().__init__(f"provider answered {code}")
        self.code = code


class ProviderAuthenticationError(ProviderResponseError):
    error_class = "ProviderAuthenticationException"


class ProviderRateLimitError(ProviderResponseError):
    error_class = "ProviderRateLimitException"


class CircuitOpenError(ProviderError):
    error_class = "CircuitOpenException"


class UnsupportedFeatureError(ProviderError):
    error_class = "UnsupportedFeatureException"


class FallbackChainExhaustedError(ProviderError):
    """Every provider of a fallback chain failed; classified by its last attempt."""

    error_class = "FallbackChainExhaustedException"

    def __init__(self, attempts: Sequence[BaseException]) -> None:
        super().__init__(f"{len(attempts)} attempts failed")
        self.attempts = tuple(attempts)


class NetworkError(RuntimeThrowable):
    """A PSR-18 NetworkExceptionInterface."""

    error_class = "NetworkException"


class ToolFailure(RuntimeThrowable):
    """A tool threw; `ToolLoopService::invoke` turns it into an error result.

    ``execution`` is the world's id of the execution that threw (0 = it never started),
    so a partially applied write is still tied to its error step.
    """

    error_class = "ToolException"

    def __init__(self, message: str = "tool failed", execution: int = 0) -> None:
        super().__init__(message)
        self.execution = execution


class ObserverError(RuntimeThrowable):
    """The live step observer threw (emit-before-persist, spec 3.3 step 1)."""

    error_class = "ObserverException"


class GenericRuntimeError(RuntimeThrowable):
    error_class = "RuntimeException"


# ---- raised by the runtime for its own control flow ------------------------------------------


class RunLeaseLost(RuntimeThrowable):
    error_class = "RunLeaseLostException"


class RunCancellationRequested(RuntimeThrowable):
    error_class = "RunCancellationRequestedException"


class AuditPersistenceFailed(RuntimeThrowable):
    error_class = "AuditPersistenceFailedException"


class WriteWithoutDurableExecution(RuntimeThrowable):
    error_class = "WriteWithoutDurableExecutionException"


class RunEnqueueFailed(RuntimeThrowable):
    error_class = "RunEnqueueFailedException"


class RunAlreadyResuming(RuntimeThrowable):
    error_class = "RunAlreadyResumingException"


class GuardrailViolation(RuntimeThrowable):
    error_class = "GuardrailViolationException"


class GuardrailApprovalRequired(RuntimeThrowable):
    error_class = "GuardrailApprovalRequiredException"


class BudgetExceeded(RuntimeThrowable):
    error_class = "BudgetExceededException"


class ContextTruncated(RuntimeThrowable):
    error_class = "ContextTruncatedException"


class RehydrationFailed(RuntimeThrowable):
    error_class = "RunRehydrationException"


class DidNotComplete(RuntimeThrowable):
    error_class = "RunDidNotCompleteException"


def classify(error: BaseException, *, fallback_chain_is_unknown: bool = False) -> FailureClass:
    """`FailureClassifier::classify`, first match wins (spec section 4).

    ``fallback_chain_is_unknown`` switches KB-13 back on: an exhausted fallback chain
    classified ``unknown`` instead of by its last attempt.
    """
    if isinstance(error, CircuitOpenError):
        return FailureClass.CIRCUIT_OPEN
    if isinstance(error, FallbackChainExhaustedError):
        if fallback_chain_is_unknown or not error.attempts:
            return FailureClass.UNKNOWN
        return classify(error.attempts[-1], fallback_chain_is_unknown=fallback_chain_is_unknown)
    if isinstance(error, ProviderConnectionError | NetworkError):
        return FailureClass.CONNECTION
    if isinstance(error, ProviderConfigurationError):
        return FailureClass.CONFIGURATION
    if isinstance(error, ProviderResponseError):
        return _classify_status(error.code)
    return FailureClass.UNKNOWN


def _classify_status(code: int) -> FailureClass:
    if code in (401, 403):
        return FailureClass.AUTH
    if code == 429:
        return FailureClass.RATE_LIMIT
    if 500 <= code <= 599:
        return FailureClass.SERVER_ERROR
    if 400 <= code <= 499:
        return FailureClass.CLIENT_ERROR
    return FailureClass.UNKNOWN
