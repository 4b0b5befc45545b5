"""Closed vocabularies of the runtime: statuses, reasons, outcomes, effects, event kinds.

Mirrors the PHP enums of spec sections 1 and 6. Pure data; knows nothing of time or I/O.
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    """`AgentRunStatus`: the row's lifecycle state."""

    QUEUED = "queued"
    RUNNING = "running"
    WAITING_FOR_APPROVAL = "waiting_for_approval"
    WAITING_FOR_INPUT = "waiting_for_input"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def is_terminal(self) -> bool:
        return self in _TERMINAL

    @property
    def is_awaiting(self) -> bool:
        return self in _AWAITING


_TERMINAL = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})
_AWAITING = (RunStatus.WAITING_FOR_APPROVAL, RunStatus.WAITING_FOR_INPUT)
NON_TERMINAL = (
    RunStatus.QUEUED,
    RunStatus.RUNNING,
    RunStatus.WAITING_FOR_APPROVAL,
    RunStatus.WAITING_FOR_INPUT,
)


class TerminationReason(StrEnum):
    """`AgentRunTerminationReason`; '' (NONE) means still going."""

    NONE = ""
    COMPLETED = "completed"
    MAX_ITERATIONS = "max_iterations"
    BUDGET_EXHAUSTED = "budget_exhausted"
    POLICY_DENIED = "policy_denied"
    APPROVAL_DENIED = "approval_denied"
    PROVIDER_FAILED = "provider_failed"
    CANCELLED = "cancelled"
    RETRIES_EXHAUSTED = "retries_exhausted"
    NOT_RETRYABLE = "not_retryable"
    CONTEXT_TRUNCATED = "context_truncated"

    @property
    def is_retryable(self) -> bool:
        """Only a provider failure is retryable (ADR-092)."""
        return self is TerminationReason.PROVIDER_FAILED


class Outcome(StrEnum):
    """`AgentRunOutcome`: what one segment call returns."""

    COMPLETED = "completed"
    AWAITING_APPROVAL = "awaiting_approval"
    AWAITING_INPUT = "awaiting_input"
    SUSPEND_FAILED = "suspend_failed"
    GUARDRAIL_BLOCKED = "guardrail_blocked"
    GUARDRAIL_APPROVAL_REQUIRED = "guardrail_approval_required"
    FAILED = "failed"
    CANCELLED = "cancelled"
    REQUEUED = "requeued"
    LEASE_LOST = "lease_lost"


class ToolEffect(StrEnum):
    """ADR-111 `ToolEffect`: the side-effect class a tool declares in code."""

    READ_ONLY = "read_only"
    IDEMPOTENT_WRITE = "idempotent_write"
    NON_IDEMPOTENT_WRITE = "non_idempotent_write"

    @property
    def is_write(self) -> bool:
        return self is not _READ_ONLY

    @property
    def is_safe_to_retry(self) -> bool:
        return self is not _NON_IDEMPOTENT_WRITE


_READ_ONLY = ToolEffect.READ_ONLY
_NON_IDEMPOTENT_WRITE = ToolEffect.NON_IDEMPOTENT_WRITE
"""Members as module constants for the properties above: looking a member up on its class goes
through ``EnumType.__getattr__``'s slow path (~60 ns), and ``is_write`` runs twice per step."""


class StepKind(StrEnum):
    """`RunStep` kinds plus the two resume-only event kinds (`AgentEventKind`)."""

    REQUEST = "request"
    LLM = "llm"
    TOOL = "tool"
    ASSEMBLED = "assembled"
    CONTEXT = "context"
    DROPPED = "dropped"
    APPROVAL = "approval"
    INPUT = "input"


class FailureClass(StrEnum):
    """ADR-095 failure taxonomy with its retry / circuit-trip table (spec section 4)."""

    CONNECTION = "connection"
    RATE_LIMIT = "rateLimit"
    SERVER_ERROR = "serverError"
    CIRCUIT_OPEN = "circuitOpen"
    AUTH = "auth"
    CONFIGURATION = "configuration"
    CLIENT_ERROR = "clientError"
    UNKNOWN = "unknown"

    @property
    def is_retryable(self) -> bool:
        return self in _RETRYABLE

    @property
    def trips_circuit(self) -> bool:
        return self in _TRIPPING


_RETRYABLE = frozenset(
    {FailureClass.CONNECTION, FailureClass.RATE_LIMIT, FailureClass.SERVER_ERROR, FailureClass.CIRCUIT_OPEN}
)
_TRIPPING = frozenset({FailureClass.CONNECTION, FailureClass.RATE_LIMIT, FailureClass.SERVER_ERROR})


class EntryPoint(StrEnum):
    """The runtime's entry points; each is one generator in :mod:`model.entrypoints`."""

    ENQUEUE = "enqueue"
    RUN_QUEUED = "run_queued"
    RUN_INTERACTIVE = "run_interactive"
    APPROVE = "approve"
    SUBMIT_INPUT = "submit_input"
    CANCEL = "cancel"
    REAP = "reap"
