"""The LLM provider: latency, and the failure of every class the ``provider`` family injects.

Answers ``CallProvider``. An injected failure is raised as the exception the real client
throws for it (``_PROVIDER_FAILURES``); its record carries both the class the runtime's
classifier gives it and its true class (:data:`TRUE_CLASS`, from the fault plan's kind), so
that a wrong classifier shows in the history instead of being trusted.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from checks import history as H
from model.constants import LEASE_S
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
    RuntimeThrowable,
    UnsupportedFeatureError,
    classify,
)
from sim.world.faults import Fault
from sim.world.latency import call_duration
from sim.world.recorder import FAIL, INVOKE, OK

if TYPE_CHECKING:
    from sim.world.clocks import Proc
    from sim.world.interpreter import SimGen, World

_PROVIDER_FAILURES: dict[str, Callable[[], RuntimeThrowable]] = {
    "connection": lambda: ProviderConnectionError("connection refused"),
    "rateLimit": lambda: ProviderRateLimitError(429),
    "serverError": lambda: ProviderResponseError(503),
    "circuitOpen": lambda: CircuitOpenError("circuit open"),
    "auth": lambda: ProviderAuthenticationError(401),
    "configuration": lambda: ProviderConfigurationError("bad configuration"),
    "clientError": lambda: ProviderResponseError(400),
    "unknown": lambda: GenericRuntimeError("provider exploded"),
    "fallbackServerError": lambda: FallbackChainExhaustedError(
        [ProviderResponseError(502), ProviderResponseError(503)]
    ),
    **{
        f"status{code}": partial(ProviderResponseError, code)
        for code in (0, 302, 399, 400, 403, 404, 499, 500, 599, 600)
    },
    "status401": lambda: ProviderAuthenticationError(401),
    "status429": lambda: ProviderRateLimitError(429),
    "authStatus500": lambda: ProviderAuthenticationError(500),
    "rateLimitStatus400": lambda: ProviderRateLimitError(400),
    "network": lambda: NetworkError("network unreachable"),
    "unsupportedFeature": lambda: UnsupportedFeatureError("tools not supported"),
    "providerBase": lambda: ProviderError("provider failed"),
    "fallbackEmpty": lambda: FallbackChainExhaustedError([]),
    "fallbackNested": lambda: FallbackChainExhaustedError(
        [
            ProviderResponseError(401),
            FallbackChainExhaustedError([ProviderResponseError(500), ProviderRateLimitError(429)]),
        ]
    ),
    # three providers: two retryable answers, then a 401 that ends the chain (the last attempt decides)
    "fallbackLastAuth": lambda: FallbackChainExhaustedError(
        [ProviderResponseError(503), ProviderRateLimitError(429), ProviderResponseError(401)]
    ),
}


# Ground truth: the ADR-095 class of each injected provider failure, straight from the fault
# plan's kind (spec 4), never from the runtime's classifier: a wrong classify() must show.
TRUE_CLASS: dict[str, str] = {
    "connection": "connection",
    "rateLimit": "rateLimit",
    "serverError": "serverError",
    "circuitOpen": "circuitOpen",
    "auth": "auth",
    "configuration": "configuration",
    "clientError": "clientError",
    "unknown": "unknown",
    "fallbackServerError": "serverError",  # a chain whose last attempt answered 503
    # spec 4 rule 5, by the HTTP status: 401/403 auth, 429 rateLimit, 500-599 serverError, other 4xx
    # clientError, anything else (0, 3xx, 600) unknown; the subclass never overrides the code
    "status0": "unknown",
    "status302": "unknown",
    "status399": "unknown",
    "status400": "clientError",
    "status401": "auth",
    "status403": "auth",
    "status404": "clientError",
    "status429": "rateLimit",
    "status499": "clientError",
    "status500": "serverError",
    "status599": "serverError",
    "status600": "unknown",
    "authStatus500": "serverError",
    "rateLimitStatus400": "clientError",
    "network": "connection",  # rule 3: any PSR-18 network exception
    "unsupportedFeature": "unknown",  # rule 6
    "providerBase": "unknown",  # rule 6: the base ProviderException
    "fallbackEmpty": "unknown",  # rule 2: an empty attempt list
    "fallbackNested": "rateLimit",  # rule 2, recursing: the last attempt's last attempt answered 429
    "fallbackLastAuth": "auth",  # rule 2: the last attempt answered 401
    "hang_then_error": "clientError",  # the slow family's hang ends in a 400
}


class Provider:
    """The provider of one world: its latency range and token count come from the scenario."""

    def __init__(self, world: World) -> None:
        self.env = world.env
        self.rng = world.rng
        self.recorder = world.recorder
        self.model = world.scenario.provider
        self.fallback_chain_is_unknown = world.policy.kb13_fallback_chain_unknown

    def call(self, proc: Proc, request: Any, fault: Fault | None) -> SimGen:
        """``CallProvider``: (tokens, None), or (None, the failure) after the call's latency."""
        rec, env = self.recorder, self.env
        rec.add(
            proc.name, H.PROVIDER, request.uuid, INVOKE, {"round": request.round_no, "synthesis": request.synthesis}
        )
        if fault is not None and fault.family == "slow":
            rec.fault("slow", fault.kind, proc.name, request.uuid, {"duration_s": LEASE_S * fault.value})
        if fault is not None and fault.family == "provider":
            rec.fault("provider", fault.kind, proc.name, request.uuid, {"request": fault.at})
        latency = call_duration(self.rng, self.model.latency_s, fault)
        if not env.advance(latency):
            yield env.timeout(latency)
        failure = None
        if fault is not None and fault.family == "provider":
            failure = _PROVIDER_FAILURES[fault.kind]()
        elif fault is not None and fault.family == "slow" and fault.kind == "hang_then_error":
            failure = ProviderResponseError(400)
        if failure is not None:
            failure_class = classify(failure, fallback_chain_is_unknown=self.fallback_chain_is_unknown)
            true_class = TRUE_CLASS[fault.kind]  # type: ignore[union-attr]  # failure implies a fault
            rec.add(
                proc.name,
                H.PROVIDER,
                request.uuid,
                FAIL,
                {"error": failure.error_class, "failure_class": failure_class.value, "true_class": true_class},
            )
            return None, failure
        tokens = self.model.tokens
        rec.add(proc.name, H.PROVIDER, request.uuid, OK, {"tokens": tokens})
        return tokens, None
