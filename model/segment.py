"""The state one executing segment carries: its context, handle, trace and control-flow signals.

Pure data shared by the loop, the hooks and the outcome ladder. No I/O.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from model.constants import LEASE_S
from model.failures import RuntimeThrowable
from model.frozen import fast_init
from model.policy import Policy
from model.records import Registry, RunRequest, Step, SuspendedState, ToolCall
from model.requests import Request
from model.vocab import TerminationReason

T = TypeVar("T")
Gen = Generator[Request, Any, T]
"""A runtime coroutine: yields requests, receives their results, returns ``T``."""


@fast_init
@dataclass(frozen=True, slots=True)
class Context:
    """What a process hands the runtime for one entry-point call.

    ``identity`` is the process's `ExecutionIdentity` (``kind:host:pid``); ``registry`` the
    tool registry as hydrated for this call (a deploy swaps it between calls);
    ``observer`` whether a live step observer is wired; ``context_manager`` whether a
    context-window manager records `context` steps.
    """

    policy: Policy
    registry: Registry
    identity: str
    observer: bool = False
    context_manager: bool = False
    provider_deadline_s: int = LEASE_S


@dataclass(slots=True)
class Handle:
    """`AgentRunHandle`: the persisted run and the next event sequence it will write."""

    uuid: str
    sequence: int


@fast_init
@dataclass(frozen=True, slots=True)
class ResumeSeed:
    """How a resume segment starts: the suspended state and the decision on its pending calls."""

    state: SuspendedState
    approved: bool
    for_input: bool = False
    input_valid: bool = True


@dataclass(slots=True)
class Trace:
    """`RunTrace`: every step of this segment in order, persisted or not."""

    steps: list[Step] = field(default_factory=list)
    tokens: int = 0
    rounds: int = 0


@fast_init
@dataclass(frozen=True, slots=True)
class LoopResult:
    """What `runLoop` returns normally."""

    reason: TerminationReason
    truncated: bool = False


class ToolApprovalRequired(RuntimeThrowable):
    """Raised by the approval scan; carries what the suspension must persist."""

    error_class = "ToolApprovalRequiredException"

    def __init__(self, state: SuspendedState) -> None:
        super().__init__("approval required")
        self.state = state


class ToolInputRequired(RuntimeThrowable):
    error_class = "ToolInputRequiredException"

    def __init__(self, state: SuspendedState) -> None:
        super().__init__("input required")
        self.state = state


def turn_digest(uuid: str, round_no: int, calls: tuple[ToolCall, ...]) -> str:
    """ADR-132: the digest a decision must name; identifies the reviewed turn."""
    return f"{uuid}/r{round_no}/" + ",".join(c.call_id for c in calls)


def suspended_state(request: RunRequest, uuid: str, round_no: int, calls: tuple[ToolCall, ...]) -> SuspendedState:
    return SuspendedState(
        request=request, round_no=round_no, pending=calls, turn_digest=turn_digest(uuid, round_no, calls)
    )
