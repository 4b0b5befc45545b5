"""The frozen request objects the runtime's generators yield, and what each returns.

This is the whole contract between the reference runtime and whoever drives it (the
synchronous test driver, the simpy world, the exhaustive explorer). A driver answers
each request with a value via ``send`` or fails it by throwing an exception from
:mod:`model.failures` into the generator. Every request names the ``site`` (the spec
call site) so a history can say which code path acted.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.frozen import fast_init
from model.records import EventRow, RunRequest, RunRow, ToolCall, Turn
from model.transitions import Transition


@fast_init
@dataclass(frozen=True, slots=True)
class UpdateResult:
    """What a guarded UPDATE reports. ``changed`` is MySQL's *changed* rows (KB-6)."""

    matched: bool
    changed: bool


class Request:
    """Base class of everything the runtime yields."""

    __slots__ = ()


@fast_init
@dataclass(frozen=True, slots=True)
class ReadClock(Request):
    """`time()` of the calling process (its clock may be skewed). Returns int seconds."""


READ_CLOCK = ReadClock()
"""The clock request the runtime yields: it has no fields, so one value serves every read."""


@fast_init
@dataclass(frozen=True, slots=True)
class FindRun(Request):
    """`findRun(uuid)`: the row or None. May throw StoreError."""

    uuid: str
    site: str = ""


@fast_init
@dataclass(frozen=True, slots=True)
class InsertRun(Request):
    """The INSERT (T1/T2) of a fully formed row (uid assigned by the store). Returns the stored row."""

    row: RunRow
    site: str = ""


@fast_init
@dataclass(frozen=True, slots=True)
class Update(Request):
    """A guarded UPDATE: apply ``transition`` to the row of ``uuid`` atomically. Returns UpdateResult."""

    uuid: str
    transition: Transition
    site: str = ""


@fast_init
@dataclass(frozen=True, slots=True)
class SelectStale(Request):
    """Statement T12 findStaleRunning, with the reaper's captured ``now``. Returns tuple[RunRow, ...]."""

    now: int
    limit: int


@fast_init
@dataclass(frozen=True, slots=True)
class InsertEvent(Request):
    """Statement T6 recordEvent, into the audit store; no guard on the run row. Returns None.

    ``effect`` is the effect the runtime resolved for the step (for the history only).
    """

    uuid: str
    event: EventRow
    effect: str = ""
    site: str = ""


@fast_init
@dataclass(frozen=True, slots=True)
class MaxSequence(Request):
    """Statement T15 maxEventSequence: int, -1 for none. May throw StoreError."""

    uuid: str
    site: str = ""


@fast_init
@dataclass(frozen=True, slots=True)
class CountEvents(Request):
    """COUNT(events) of a run: the pre-ADR-101 resume position (KB-2). May throw StoreError."""

    uuid: str


@fast_init
@dataclass(frozen=True, slots=True)
class CallProvider(Request):
    """A provider call through the middleware pipeline. Returns the tokens used (int).

    Throws a ProviderError family member, GuardrailViolation/GuardrailApprovalRequired,
    BudgetExceeded or ContextTruncated.
    """

    uuid: str
    round_no: int
    turn: Turn
    synthesis: bool = False


@fast_init
@dataclass(frozen=True, slots=True)
class InvokeTool(Request):
    """Execute a tool. Returns a ToolResult; a ToolFailure thrown in becomes an error result.

    ``idempotency_key`` is set only under the ``idempotency_keys`` proposal: the world
    then replays a recorded result instead of executing again.
    """

    uuid: str
    call: ToolCall
    effect: str
    idempotency_key: str = ""


@fast_init
@dataclass(frozen=True, slots=True)
class Dispatch(Request):
    """Dispatch `AgentRunQueuedMessage(uuid)` with a DelayStamp. Returns None or throws DispatchError."""

    uuid: str
    delay_ms: int
    site: str = ""


@fast_init
@dataclass(frozen=True, slots=True)
class EmitStep(Request):
    """The live observer's `onStep` (emit-before-persist). Only yielded when an observer is wired."""

    uuid: str
    round_no: int
    kind: str


@fast_init
@dataclass(frozen=True, slots=True)
class Note(Request):
    """Informational: the runtime states a decision (e.g. the reaper's verdict on a row).

    Drivers record it and answer None immediately; it costs no simulated time.
    """

    uuid: str
    what: str
    detail: tuple[tuple[str, object], ...] = ()


# ---- the request kinds: declared once, read by the world, the fault plan and the explorers ------

STORE_READS: tuple[type[Request], ...] = (FindRun, MaxSequence, CountEvents, SelectStale)
"""The run store's reads (FindRun, MAX(sequence), COUNT(events), the reaper's T12 SELECT)."""
STORE_WRITES: tuple[type[Request], ...] = (InsertRun, Update)
"""The run store's INSERTs and guarded UPDATEs (T1-T5, T7-T11, T13, T14)."""
STORE_REQUESTS: tuple[type[Request], ...] = STORE_READS + STORE_WRITES
"""Every request the run store answers."""
REQUEST_KINDS: dict[str, tuple[type[Request], ...]] = {
    "read": STORE_READS,
    "store": STORE_WRITES,
    "event": (InsertEvent,),
    "provider": (CallProvider,),
    "tool": (InvokeTool,),
    "dispatch": (Dispatch,),
}
"""The requests a fault can strike, by the name a scripted fault uses for them (``on = "read"``)."""

__all__ = [
    "READ_CLOCK",
    "REQUEST_KINDS",
    "STORE_READS",
    "STORE_REQUESTS",
    "STORE_WRITES",
    "CallProvider",
    "CountEvents",
    "Dispatch",
    "EmitStep",
    "FindRun",
    "InsertEvent",
    "InsertRun",
    "InvokeTool",
    "MaxSequence",
    "Note",
    "ReadClock",
    "Request",
    "RunRequest",
    "SelectStale",
    "Update",
    "UpdateResult",
]
