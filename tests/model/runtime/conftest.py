"""Shared builders for the runtime conformance tests (spec sections 3, 5 and 8).

Everything a test needs is reached through the ``kit`` fixture (or ``new_kit`` for a
test that plays one scenario under two policies): a :class:`Kit` owns one
:class:`KitDriver` (a ``SyncDriver`` whose tool calls can also answer with a tool-level
error result) and builds contexts, requests and entry-point calls with short names.
Tests never import this module; pytest hands them the fixtures.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import pytest

from model.entrypoints import cancel, enqueue, run_interactive, run_queued
from model.policy import HEAD, Policy
from model.reaper import ReapReport, reap
from model.records import EventRow, Registry, RunRequest, RunRow, Step, ToolCall, ToolResult, ToolSpec, Turn
from model.requests import InsertEvent, InvokeTool, Request, Update
from model.resume import approve, submit_input
from model.segment import Context
from model.transitions import Transition
from model.vocab import Outcome, StepKind, ToolEffect
from sim.world.sync_driver import SyncDriver

Predicate = Callable[[Request], bool]

UUID = "r1"
WORKER = "worker:h:1"
WORKER_B = "worker:h:2"
INTERACTIVE = "interactive:h:1"
RESUME = "resume:h:1"
RESUME_B = "resume:h:2"

# One registry with one tool of every kind the runtime distinguishes.
TOOLS = (
    ToolSpec("search"),  # undeclared: resolves read_only
    ToolSpec("lookup", ToolEffect.READ_ONLY),
    ToolSpec("create_page_draft", ToolEffect.NON_IDEMPOTENT_WRITE),  # builtin writer: approval-gated (ADR-134)
    ToolSpec("update_page_metadata", ToolEffect.IDEMPOTENT_WRITE),  # builtin writer: approval-gated (ADR-134)
    ToolSpec("mcp_write", ToolEffect.NON_IDEMPOTENT_WRITE, remote=True, server_requires_approval=False),
    ToolSpec("mcp_gated", ToolEffect.NON_IDEMPOTENT_WRITE, remote=True),  # server requires approval (default)
    ToolSpec("confirm", approval_marker=True),  # read-only, explicit requires-approval marker
    ToolSpec("ask_user", needs_input=True),  # read-only, asks the user for input
)
REGISTRY = Registry(TOOLS)
OFFERED = tuple(t.name for t in TOOLS)

_UNSET: Any = object()


def call(name: str, call_id: str = "1.0") -> ToolCall:
    return ToolCall(call_id, name)


def calls(*names: str, round_no: int = 1) -> Turn:
    """A model turn asking for ``names`` in order (call ids ``<round>.<i>``)."""
    return Turn(tuple(ToolCall(f"{round_no}.{i}", n) for i, n in enumerate(names)))


def request(*turns: Turn, offered: tuple[str, ...] = OFFERED, max_iterations: int | None = None) -> RunRequest:
    """A run request answering ``turns`` in rounds 1..n, then a final answer."""
    return RunRequest(script=turns, offered=offered, max_iterations=max_iterations)


@dataclass
class KitDriver(SyncDriver):
    """A SyncDriver whose tool calls with an id in ``error_results`` land but answer an error result
    (a tool-level error reported by a working server)."""

    error_results: set[str] = field(default_factory=set)

    def answer(self, request: Request) -> Any:
        result = super().answer(request)
        if isinstance(request, InvokeTool) and request.call.call_id in self.error_results:
            return ToolResult(execution=result.execution, is_error=True)
        return result


class Paused:
    """A generator driven up to (not including) its first request matching a predicate.

    ``pending`` is that request; :meth:`advance` answers it through the driver (hooks and
    scripted failures apply) and drives on to the next matching request; :meth:`finish`
    drives the generator to its end. Lets a test hold one process mid-call while others act.
    """

    def __init__(self, d: SyncDriver, gen: Generator[Request, Any, Any], predicate: Predicate) -> None:
        self.d = d
        self.gen = gen
        self.pending: Request | None = None
        self.done = False
        self.value: Any = None
        self.advance(predicate)

    def _drive(self, stop: Predicate | None) -> Generator[Request, Any, Any]:
        gen = self.gen
        try:
            request = self.pending if self.pending is not None else gen.send(None)
            self.pending = None
            while True:
                try:
                    value = yield request
                except BaseException as error:
                    request = gen.throw(error)
                else:
                    request = gen.send(value)
                if stop is not None and stop(request):
                    self.pending = request
                    return None
        except StopIteration as stop_iteration:
            self.done, self.value = True, stop_iteration.value
            return stop_iteration.value

    def advance(self, predicate: Predicate) -> Paused:
        """Answer the pending request and drive on to the next request matching ``predicate``."""
        assert not self.done, "the generator has already finished"
        if self.pending is None:  # first call: stop before the very first matching request
            first = self.gen.send(None)
            if predicate(first):
                self.pending = first
                return self
            self.pending = first
        self.d.run(self._drive(predicate))
        return self

    def finish(self) -> Any:
        if not self.done:
            self.d.run(self._drive(None))
        return self.value


class Kit:
    """One in-memory database, one driver, and short builders for every entry point."""

    uuid = UUID
    worker, worker_b, interactive_id = WORKER, WORKER_B, INTERACTIVE
    resume_id, resume_b = RESUME, RESUME_B
    registry = REGISTRY
    offered = OFFERED
    call = staticmethod(call)
    turn = staticmethod(calls)

    def __init__(self, policy: Policy = HEAD) -> None:
        self.policy = policy
        self.d = KitDriver()

    # ---- contexts and entry points --------------------------------------------------------------

    def ctx(
        self,
        identity: str = WORKER,
        *,
        policy: Policy | None = None,
        registry: Registry | None = None,
        observer: bool = False,
        context_manager: bool = False,
    ) -> Context:
        return Context(
            policy or self.policy, registry or REGISTRY, identity, observer=observer, context_manager=context_manager
        )

    def enqueue(
        self,
        *turns: Turn,
        uuid: str = UUID,
        offered: tuple[str, ...] = OFFERED,
        max_iterations: int | None = None,
        has_bus: bool = True,
    ) -> str:
        req = request(*turns, offered=offered, max_iterations=max_iterations)
        return self.d.run(enqueue(self.ctx(), uuid, req, has_bus=has_bus))

    def run_queued(self, uuid: str = UUID, identity: str = WORKER, **ctx_kw: Any) -> Outcome | None:
        return self.d.run(run_queued(self.ctx(identity, **ctx_kw), uuid))

    def queued_gen(self, uuid: str = UUID, identity: str = WORKER, **ctx_kw: Any) -> Generator[Request, Any, Any]:
        return run_queued(self.ctx(identity, **ctx_kw), uuid)

    def interactive(
        self,
        *turns: Turn,
        uuid: str = UUID,
        identity: str = INTERACTIVE,
        offered: tuple[str, ...] = OFFERED,
        max_iterations: int | None = None,
        **ctx_kw: Any,
    ) -> Outcome:
        req = request(*turns, offered=offered, max_iterations=max_iterations)
        return self.d.run(run_interactive(self.ctx(identity, **ctx_kw), uuid, req))

    def interactive_gen(
        self, *turns: Turn, uuid: str = UUID, identity: str = INTERACTIVE, **ctx_kw: Any
    ) -> Generator[Request, Any, Any]:
        return run_interactive(self.ctx(identity, **ctx_kw), uuid, request(*turns))

    def digest(self, uuid: str = UUID) -> str:
        state = self.row(uuid).suspended_state
        assert state is not None, "the run is not suspended"
        return state.turn_digest

    def approve_gen(
        self,
        uuid: str = UUID,
        *,
        approved: bool = True,
        digest: str | None = _UNSET,
        identity: str = RESUME,
        **ctx_kw: Any,
    ) -> Generator[Request, Any, Any]:
        if digest is _UNSET:
            digest = self.digest(uuid)
        return approve(self.ctx(identity, **ctx_kw), uuid, approved=approved, digest=digest)

    def approve(
        self,
        uuid: str = UUID,
        *,
        approved: bool = True,
        digest: str | None = _UNSET,
        identity: str = RESUME,
        **ctx_kw: Any,
    ) -> Outcome | None:
        return self.d.run(self.approve_gen(uuid, approved=approved, digest=digest, identity=identity, **ctx_kw))

    def submit_input(self, uuid: str = UUID, *, valid: bool = True, identity: str = RESUME) -> Outcome | None:
        return self.d.run(submit_input(self.ctx(identity), uuid, input_valid=valid))

    def cancel(self, uuid: str = UUID) -> bool:
        return self.d.run(cancel(self.ctx(), uuid))

    def reap(self, limit: str | float | int = 50, *, has_bus: bool = True, **ctx_kw: Any) -> ReapReport:
        return self.d.run(reap(self.ctx("reaper:h:1", **ctx_kw), limit, has_bus=has_bus))

    def pause(self, gen: Generator[Request, Any, Any], predicate: Predicate) -> Paused:
        return Paused(self.d, gen, predicate)

    # ---- rows and fixtures ----------------------------------------------------------------------

    def row(self, uuid: str = UUID) -> RunRow:
        return self.d.row(uuid)

    def place(self, uuid: str = UUID, **fields: Any) -> RunRow:
        """Put a row as the repository double would hold it (fixture state), keeping its uid."""
        existing = self.d.db.find(uuid)
        uid = existing.uid if existing is not None else len(self.d.db.rows) + 1
        base = existing if existing is not None else RunRow(uid=uid, uuid=uuid)
        row = dataclasses.replace(base, **fields)
        self.d.db.put(row)
        return row

    def add_events(self, count: int, uuid: str = UUID, start: int | None = None) -> None:
        """Append ``count`` request events after the current maximum (fixture state)."""
        first = self.d.db.max_sequence(uuid) + 1 if start is None else start
        for seq in range(first, first + count):
            self.d.db.insert_event(uuid, EventRow(0, seq, Step(StepKind.REQUEST, 0)))

    def expire(self, uuid: str = UUID) -> None:
        """Move the clock past the row's lease."""
        self.d.now = self.row(uuid).lease_expires + 1

    # ---- observations ---------------------------------------------------------------------------

    def events(self, uuid: str = UUID) -> list[EventRow]:
        return list(self.d.db.events.get(uuid, []))

    def kinds(self, uuid: str = UUID) -> list[str]:
        return [e.step.kind.value for e in self.events(uuid)]

    def seqs(self, uuid: str = UUID) -> list[int]:
        return self.d.db.sequences(uuid)

    def tool_events(self, uuid: str = UUID) -> list[EventRow]:
        return [e for e in self.events(uuid) if e.step.kind is StepKind.TOOL]

    def updates(self, kind: type[Transition] | None = None, uuid: str | None = None) -> list[Any]:
        """The transitions the runtime asked for (answered or failed), in order."""
        return [
            r.transition
            for r in self.d.requests
            if isinstance(r, Update)
            and (kind is None or isinstance(r.transition, kind))
            and (uuid is None or r.uuid == uuid)
        ]

    def index(self, predicate: Predicate) -> list[int]:
        return [i for i, r in enumerate(self.d.requests) if predicate(r)]

    # ---- predicates -----------------------------------------------------------------------------

    @staticmethod
    def req(cls: type[Request], /, **attrs: Any) -> Predicate:
        return lambda r: isinstance(r, cls) and all(getattr(r, k) == v for k, v in attrs.items())

    @staticmethod
    def update(cls: type[Transition], /, **attrs: Any) -> Predicate:
        return lambda r: (
            isinstance(r, Update)
            and isinstance(r.transition, cls)
            and all(getattr(r.transition, k) == v for k, v in attrs.items())
        )

    @staticmethod
    def site(prefix: str) -> Predicate:
        return lambda r: str(getattr(r, "site", "")).startswith(prefix)

    @staticmethod
    def event(kind: StepKind, tool: str | None = None) -> Predicate:
        return lambda r: (
            isinstance(r, InsertEvent) and r.event.step.kind is kind and (tool is None or r.event.step.tool == tool)
        )


@pytest.fixture
def kit() -> Kit:
    """A fresh world under HEAD (the spec as written)."""
    return Kit()


@pytest.fixture
def new_kit() -> Callable[[Policy], Kit]:
    """A factory of fresh worlds under a given policy (for on/off comparisons)."""
    return Kit
