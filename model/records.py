"""The run row, the event row, and the payloads they carry, as plain immutable values.

Spec section 1. The row is the state; everything the database would store is here,
nothing else. No behaviour beyond small derived properties.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from model.frozen import fast_init
from model.vocab import RunStatus, StepKind, TerminationReason, ToolEffect


class TurnOutcome(StrEnum):
    """How the provider pipeline ends a scripted turn besides answering normally."""

    NORMAL = "normal"
    GUARDRAIL_DENIED = "guardrail_denied"
    GUARDRAIL_APPROVAL = "guardrail_approval"
    BUDGET_EXHAUSTED = "budget_exhausted"
    CONTEXT_TRUNCATED = "context_truncated"


@fast_init
@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model asks for. ``call_id`` is stable across attempts of a run."""

    call_id: str
    name: str


@fast_init
@dataclass(frozen=True, slots=True)
class Turn:
    """One scripted model answer: the calls it asks for (none = final answer)."""

    calls: tuple[ToolCall, ...] = ()
    outcome: TurnOutcome = TurnOutcome.NORMAL


@fast_init
@dataclass(frozen=True, slots=True)
class RunRequest:
    """`AgentRunRequest`: what a queued row stores to be re-executed from round 1.

    The model's answers are scripted (``script[i]`` is the answer of round i+1; past the
    end the model answers with no calls), so the runtime, not a language model, is
    what the simulation exercises. ``decodable``/``configuration_exists`` let a test
    make rehydration fail.
    """

    script: tuple[Turn, ...]
    offered: tuple[str, ...]
    max_iterations: int | None = None
    decodable: bool = True
    configuration_exists: bool = True

    def turn(self, round_no: int) -> Turn:
        if 1 <= round_no <= len(self.script):
            return self.script[round_no - 1]
        return Turn()


@fast_init
@dataclass(frozen=True, slots=True)
class SuspendedState:
    """The transcript position and pending calls a waiting run keeps (`suspended_state`)."""

    request: RunRequest
    round_no: int
    pending: tuple[ToolCall, ...]
    turn_digest: str
    decodable: bool = True


@fast_init
@dataclass(frozen=True, slots=True)
class RunRow:
    """A `tx_nrllm_agentrun` row. ``queued_request``/``suspended_state`` None = NULL/''."""

    uid: int
    uuid: str
    status: RunStatus = RunStatus.QUEUED
    claimed_by: str = ""
    lease_expires: int = 0
    requeue_count: int = 0
    pending_effect: str = ""
    queued_request: RunRequest | None = None
    suspended_state: SuspendedState | None = None
    termination_reason: TerminationReason = TerminationReason.NONE
    error_class: str = ""
    iterations: int = 0
    total_tokens: int = 0
    started_at: int = 0
    finished_at: int = 0
    tstamp: int = 0
    crdate: int = 0

    def held_by(self, identity: str) -> bool:
        return self.status is RunStatus.RUNNING and self.claimed_by == identity


@fast_init
@dataclass(frozen=True, slots=True)
class Step:
    """A `RunStep` in the in-memory trace, and the payload of its event row."""

    kind: StepKind
    round_no: int
    tool: str = ""
    call_id: str = ""
    is_error: bool = False
    execution: int = 0
    tokens: int = 0
    decision: str = ""


@fast_init
@dataclass(frozen=True, slots=True)
class EventRow:
    """A `tx_nrllm_agentrun_event` row. (run, sequence) is a plain index, not unique."""

    run_uid: int
    sequence: int
    step: Step
    crdate: int = 0


@fast_init
@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A registered tool as the code declares it.

    ``effect`` None means the tool does not implement ToolEffectInterface (undeclared,
    resolved read_only). ``remote`` tools are MCP tools; ``server_requires_approval``
    is their server's flag. ``approval_marker`` is the explicit requires-approval marker.
    ``deadline_s`` is the declared operation deadline the ``operation_deadline`` proposal
    extends the lease to (0 = LEASE_S).
    """

    name: str
    effect: ToolEffect | None = None
    remote: bool = False
    server_requires_approval: bool = True
    approval_marker: bool = False
    needs_input: bool = False
    deadline_s: int = 0

    @property
    def declared_effect(self) -> ToolEffect:
        return self.effect if self.effect is not None else ToolEffect.READ_ONLY


@dataclass(frozen=True, slots=True)
class Registry:
    """`ToolRegistry` as hydrated by one segment: name -> spec. A deploy swaps it."""

    tools: tuple[ToolSpec, ...] = ()
    _by_name: dict[str, ToolSpec] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name.update({t.name: t for t in self.tools})

    def get(self, name: str) -> ToolSpec | None:
        return self._by_name.get(name)


@fast_init
@dataclass(frozen=True, slots=True)
class ToolResult:
    """What `invoke` returns: an error result, or a result of a real execution.

    ``execution`` is the world's id of the execution (0 = nothing executed).
    """

    execution: int = 0
    is_error: bool = False
