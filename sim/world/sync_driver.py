"""A synchronous driver for the runtime's generators: no simpy, no time passing by itself.

Tests script what the world does: a failure for the n-th request matching a predicate,
or a hook that runs just before a request is answered (to interleave another process,
move the clock, or cancel a run). Every request and every answer is kept for asserts.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from model.failures import ContractError, ToolFailure
from model.records import RunRow, ToolResult
from model.requests import (
    CallProvider,
    CountEvents,
    Dispatch,
    EmitStep,
    FindRun,
    InsertEvent,
    InsertRun,
    InvokeTool,
    MaxSequence,
    Note,
    ReadClock,
    Request,
    SelectStale,
    Update,
)
from sim.world.store import Database

T = TypeVar("T")
Predicate = Callable[[Request], bool]


@dataclass(slots=True)
class _Scripted:
    predicate: Predicate
    action: Callable[[Request], Any]
    remaining: int
    skip: int = 0


@dataclass(slots=True)
class Landing:
    """A tool execution that really happened (the ground truth)."""

    uuid: str
    call_id: str
    tool: str
    execution: int


@dataclass
class SyncDriver:
    """Answers requests from an in-memory :class:`Database` and a hand-moved clock."""

    db: Database = field(default_factory=Database)
    now: int = 1_000
    tokens_per_call: int = 10
    requests: list[Request] = field(default_factory=list)
    dispatched: list[Dispatch] = field(default_factory=list)
    landings: list[Landing] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    _failures: list[_Scripted] = field(default_factory=list)
    _hooks: list[_Scripted] = field(default_factory=list)
    _executions: int = 0
    _results: dict[str, ToolResult] = field(default_factory=dict)

    # ---- scripting ---------------------------------------------------------------------------

    def fail(self, predicate: Predicate, error: BaseException, *, times: int = 1, skip: int = 0) -> None:
        """Throw ``error`` into the generator for matching requests (after ``skip`` matches)."""
        self._failures.append(_Scripted(predicate, lambda _r: error, times, skip))

    def before(self, predicate: Predicate, hook: Callable[[Request], Any], *, times: int = 1, skip: int = 0) -> None:
        """Run ``hook(request)`` just before answering a matching request (an interleaving)."""
        self._hooks.append(_Scripted(predicate, hook, times, skip))

    # ---- driving -----------------------------------------------------------------------------

    def run(self, gen: Generator[Request, Any, T]) -> T:
        """Drive ``gen`` to completion and return its value (exceptions propagate)."""
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                request = gen.throw(error) if error is not None else gen.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            value, error = None, None
            self.requests.append(request)
            self._fire(self._hooks, request)
            scripted = self._fire(self._failures, request)
            if scripted is not None:
                error = scripted
                continue
            value = self.answer(request)

    def _fire(self, scripted: list[_Scripted], request: Request) -> Any:
        for entry in scripted:
            if entry.remaining and entry.predicate(request):
                if entry.skip:
                    entry.skip -= 1
                    continue
                entry.remaining -= 1
                return entry.action(request)
        return None

    def answer(self, request: Request) -> Any:
        match request:
            case ReadClock():
                return self.now
            case FindRun(uuid=uuid):
                return self.db.find(uuid)
            case InsertRun(row=row):
                return self.db.insert(row)
            case Update(uuid=uuid, transition=transition):
                return self.db.update(uuid, transition)[0]
            case SelectStale(now=now, limit=limit):
                return self.db.select_stale(now, limit)
            case InsertEvent(uuid=uuid, event=event):
                self.db.insert_event(uuid, event)
                return None
            case MaxSequence(uuid=uuid):
                return self.db.max_sequence(uuid)
            case CountEvents(uuid=uuid):
                return self.db.count_events(uuid)
            case CallProvider():
                return self.tokens_per_call
            case InvokeTool():
                return self._invoke(request)
            case Dispatch():
                self.dispatched.append(request)
                return None
            case EmitStep():
                return None
            case Note():
                self.notes.append(request)
                return None
        raise ContractError(f"unknown request {request!r}")

    def _invoke(self, request: InvokeTool) -> ToolResult:
        if request.idempotency_key and request.idempotency_key in self._results:
            return self._results[request.idempotency_key]
        self._executions += 1
        self.landings.append(Landing(request.uuid, request.call.call_id, request.call.name, self._executions))
        result = ToolResult(execution=self._executions)
        if request.idempotency_key:
            self._results[request.idempotency_key] = result
        return result

    # ---- conveniences for asserts ------------------------------------------------------------

    def row(self, uuid: str) -> RunRow:
        row = self.db.find(uuid)
        if row is None:
            raise AssertionError(f"no row {uuid}")
        return row

    def of(self, kind: type[Request]) -> list[Any]:
        return [r for r in self.requests if isinstance(r, kind)]


def throws_tool_failure(execution: int = 0) -> ToolFailure:
    return ToolFailure("tool failed", execution)
