"""The world: a simpy simulation that interprets every request the runtime yields.

It owns the run store and audit store (one :class:`Database`), the message bus, the
external ledger of side effects, the process table (workers, clients, approvers, the
reaper, users) and the fault plan. ``drive`` is the interpreter: it steps a runtime
generator, asks the plan for a fault at each request, spends simulated time, applies
the request, records it, and sends the answer (or throws the failure) back.
Zero-latency requests are answered inline without a simpy event, and a wait that simpy
would run next anyway is taken at once (:meth:`Kernel.advance`); that is what keeps a
simulation cheap.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import simpy

from model import history as H
from model.constants import LEASE_S, execution_identity
from model.entrypoints import run_queued
from model.failures import (
    CircuitOpenError,
    DispatchError,
    FallbackChainExhaustedError,
    GenericRuntimeError,
    ProviderAuthenticationError,
    ProviderConfigurationError,
    ProviderConnectionError,
    ProviderRateLimitError,
    ProviderResponseError,
    RuntimeThrowable,
    StoreError,
    classify,
)
from model.policy import Policy
from model.records import Registry, ToolResult, ToolSpec
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
    UpdateResult,
)
from model.segment import Context
from model.transitions import Cancel, Transition
from model.vocab import NON_TERMINAL, RunStatus
from scenarios.schema import Scenario, ToolModel
from sim.faults import Fault, FaultPlan
from sim.kernel import Kernel, TieControl
from sim.recorder import FAIL, INFO, INVOKE, OK, Recorder
from sim.store import Database
from sim.workload import registry

SimGen = Generator[simpy.Event, Any, Any]


class Crashed(Exception):
    """The driven process died at a request boundary (a nemesis act, never a runtime error)."""


@dataclass(slots=True)
class Proc:
    """One incarnation of a process: a unique name, its identity and its clock offset."""

    name: str
    kind: str
    identity: str
    host: str
    skew_s: float = 0.0
    registry: Registry | None = None
    own_identity: str = ""
    tools: dict[str, ToolModel] | None = None
    """Ground truth: the tool code this process loaded at hydration (the world's deployed set)."""
    ctx: Context | None = None
    """The last runtime context handed to this process: reused while it would be identical."""

    def __post_init__(self) -> None:
        self.own_identity = self.own_identity or self.identity

    def clock(self, now: float) -> int:
        return int(now + self.skew_s)


@dataclass(frozen=True, slots=True)
class Message:
    uuid: str
    duplicate: bool = False


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
    "hang_then_error": "clientError",  # the slow family's hang ends in a 400
}


def physical_effect(tool: ToolModel | None) -> str:
    """What a tool really does, from its definition in the scenario: an undeclared tool is
    read-only (spec 6); a name no loaded tool has is 'unknown' (nothing can run)."""
    if tool is None:
        return "unknown"
    return "read_only" if tool.effect == "undeclared" else tool.effect


@dataclass
class World:
    scenario: Scenario
    policy: Policy
    rng: random.Random
    script: list[Fault] | None = None
    ties: TieControl | None = None
    anchored: list[Fault] | None = None
    env: Kernel = field(init=False)
    db: Database = field(init=False)
    recorder: Recorder = field(init=False)
    plan: FaultPlan = field(init=False)

    def __post_init__(self) -> None:
        self.env = Kernel(self.ties)
        self.db = Database()
        self.recorder = Recorder(self.env)
        self.plan = FaultPlan.build(self.scenario.faults, self.rng, self.script, self.scenario.script, self.anchored)
        self._decide = self.plan.decider()
        self.queue: simpy.Store = simpy.Store(self.env)
        self.registry = registry(self.scenario)
        self.requests = 0
        self.request_types: list[type[Request]] = []
        self.executions = 0
        self.results: dict[str, ToolResult] = {}
        self.procs_alive: dict[str, Proc] = {}
        self._pid = 100
        self.pending_deliveries = 0
        self.busy = 0
        self.open_creators = 0
        self.terminal: set[str] = set()
        self.deciding: set[str] = set()
        self.decisions = 0
        self.done = self.env.event()
        self.waiting_signal = self.env.event()
        self.world_cfg = self.scenario.world
        self.tools_by_name = {t.name: t for t in self.scenario.tools}
        self.deployed: dict[str, ToolModel] = dict(self.tools_by_name)
        """Ground truth: the tools physically deployed now (deploys rename or remove entries)."""
        self._provider = self.scenario.provider
        self._provider_deadline_s = self._provider.deadline_s or LEASE_S
        self._outages = self.scenario.faults.audit.outages
        self._chaos_s = self.world_cfg.chaos_s
        self._store_latency_s = self.world_cfg.store_latency_s
        self._reads: dict[type[Request], Callable[[Proc, Any, Fault | None], tuple[Any, StoreError | None]]] = {
            FindRun: self._find_run,
            MaxSequence: self._max_sequence,
            CountEvents: self._count_events,
            SelectStale: self._select_stale,
        }
        self.handlers: dict[type[Request], Callable[[Proc, Any, Fault | None], SimGen]] = {
            CallProvider: self._provider_call,
            InvokeTool: self._tool,
            Dispatch: self._dispatch,
        }
        self._instants: dict[type[Request], Callable[[Proc, Any, Fault | None], tuple[Any, StoreError | None]]] = {
            InsertEvent: self._event,
            EmitStep: self._emit,
        }

    # ---- processes and identities ------------------------------------------------------------

    def new_proc(self, kind: str, name: str, host_no: int) -> Proc:
        self._pid += 1
        host = f"h{host_no}"
        proc = Proc(name, kind, execution_identity(kind, host, self._pid), host)
        self.procs_alive[name] = proc
        return proc

    def context(self, proc: Proc, *, observer: bool = False) -> Context:
        """A runtime context for one entry-point call; the registry is hydrated now.

        Contexts are frozen values: the process's previous one is handed out again while
        registry, identity and observer are unchanged (a reaper asks for one every tick)."""
        registry = proc.registry = self.registry
        proc.tools = self.deployed
        ctx = proc.ctx
        if ctx is None or ctx.registry is not registry or ctx.identity != proc.identity or ctx.observer != observer:
            ctx = proc.ctx = Context(
                self.policy,
                registry,
                proc.identity,
                observer=observer,
                provider_deadline_s=self._provider_deadline_s,
            )
        return ctx

    def retire(self, proc: Proc) -> None:
        self.procs_alive.pop(proc.name, None)

    # ---- the interpreter ---------------------------------------------------------------------

    def drive(self, proc: Proc, gen: Generator[Request, Any, Any]) -> SimGen:
        """Run a runtime generator to completion inside a simpy process; raises Crashed.

        Store statements (reads and writes) are answered here after their latency, audit
        inserts and observer emits at once (``_reads``, ``_write_*``, ``_instants``: plain
        functions); every other request goes to its handler generator. The clock and notes
        cost no time.
        """
        value: Any = None
        error: BaseException | None = None
        plan, handlers, reads, instants, env = self.plan, self.handlers, self._reads, self._instants, self.env
        send, request_types, decide = gen.send, self.request_types, self._decide
        while True:
            try:
                if error is None:
                    request = send(value)
                else:
                    request = gen.throw(error)
                    error = None
            except StopIteration as stop:
                return stop.value
            rtype = type(request)
            if rtype is ReadClock:
                value = int(env._now + proc.skew_s)  # proc.clock(now), inlined: the commonest request
                continue
            value = None
            if rtype is Note:
                assert isinstance(request, Note)
                self.recorder.add(proc.name, H.DECIDE, request.uuid, OK, dict(request.detail))
                continue
            index = self.requests
            self.requests = index + 1
            request_types.append(rtype)
            fault = None
            if not plan.healed:
                fault = decide(index, request, proc.kind)
                if fault is not None:
                    fault = self._nemesis(proc, request, fault)
                    if fault is not None and fault.family == "crash" and fault.kind == "before":
                        gen.close()
                        raise Crashed
            read = reads.get(rtype)
            if read is not None:
                if fault is None:
                    delay = self._store_latency_s
                else:
                    delay = self._store_delay(proc, getattr(request, "uuid", ""), fault)
                if delay and not env.advance(delay):
                    yield env.timeout(delay)
                value, error = read(proc, request, fault)
            elif rtype is Update or rtype is InsertRun:
                uuid, base = self._write_invoke(proc, request)
                delay = self._store_latency_s if fault is None else self._store_delay(proc, uuid, fault)
                if delay and not env.advance(delay):
                    yield env.timeout(delay)
                value, error = self._write_apply(proc, request, fault, uuid, base)
            else:
                instant = instants.get(rtype)
                if instant is not None:
                    value, error = instant(proc, request, fault)
                else:
                    value, error = yield from handlers[rtype](proc, request, fault)
            if fault is not None and fault.family == "crash":
                gen.close()
                raise Crashed

    def _nemesis(self, proc: Proc, request: Request, fault: Fault) -> Fault | None:
        """Apply faults that act on the world rather than on this request; return the rest."""
        family = fault.family
        uuid = getattr(request, "uuid", "")
        if family == "crash":
            self.recorder.fault("crash", fault.kind, proc.name, uuid, {"request": fault.at})
            return fault
        if family == "cancel":
            if uuid:
                self.recorder.fault("cancel", fault.kind, "user", uuid, {"request": fault.at})
                self._cancel_now(uuid)
            return None
        if family == "deploy":
            self._deploy(fault)
            return None
        if family == "clock_skew":
            proc.skew_s = fault.value
            self.recorder.fault("clock_skew", fault.kind, proc.name, uuid, {"offset_s": fault.value})
            return None
        if family == "identity":
            self._steal_identity(proc, fault)
            return None
        return fault

    # ---- handlers: each returns (value, error) ----------------------------------------------

    def _store_delay(self, proc: Proc, uuid: str, fault: Fault | None) -> float:
        """Statement latency; a store fault is recorded here, when it strikes (before any wait)."""
        delay = self.world_cfg.store_latency_s
        if fault is not None and fault.family == "store":
            self.recorder.fault("store", fault.kind, proc.name, uuid, {"request": fault.at, "slow_s": fault.value})
            if fault.kind == "slow":
                delay += fault.value
        return delay

    # Reads: called by ``drive`` once the statement's latency has passed.

    def _read_failed(self, proc: Proc, what: str, site: str, uuid: str) -> tuple[None, StoreError]:
        self.recorder.add(proc.name, H.READ, uuid, FAIL, {"what": what, "site": site, "error": "StoreError"})
        return None, StoreError("read failed")

    def _find_run(self, proc: Proc, request: Any, fault: Fault | None) -> tuple[Any, StoreError | None]:
        uuid = request.uuid
        if fault is not None and fault.family == "store" and fault.kind == "fail":
            return self._read_failed(proc, "FindRun", request.site, uuid)
        row = self.db.rows.get(uuid)
        if row is None:
            value = {"what": "FindRun", "site": request.site, "result": None}
        else:
            value = {"what": "FindRun", "site": request.site, "result": row.status._value_, "fence": row.pending_effect}
        self.recorder.add(proc.name, H.READ, uuid, OK, value)
        return row, None

    def _max_sequence(self, proc: Proc, request: Any, fault: Fault | None) -> tuple[Any, StoreError | None]:
        uuid = request.uuid
        if fault is not None and fault.family == "store" and fault.kind == "fail":
            return self._read_failed(proc, "MaxSequence", request.site, uuid)
        result = self.db.max_sequence(uuid)
        self.recorder.add(proc.name, H.READ, uuid, OK, {"what": "MaxSequence", "site": request.site, "result": result})
        return result, None

    def _count_events(self, proc: Proc, request: Any, fault: Fault | None) -> tuple[Any, StoreError | None]:
        uuid = request.uuid
        if fault is not None and fault.family == "store" and fault.kind == "fail":
            return self._read_failed(proc, "CountEvents", "", uuid)
        result = self.db.count_events(uuid)
        self.recorder.add(proc.name, H.READ, uuid, OK, {"what": "CountEvents", "site": "", "result": result})
        return result, None

    def _select_stale(self, proc: Proc, request: Any, fault: Fault | None) -> tuple[Any, StoreError | None]:
        if fault is not None and fault.family == "store" and fault.kind == "fail":
            return self._read_failed(proc, "SelectStale", "", "")
        rows = self.db.select_stale(request.now, request.limit)
        if rows:
            uuids, fences = [r.uuid for r in rows], [r.pending_effect for r in rows]
        else:  # most reaper ticks find nothing
            uuids, fences = [], []
        value = {"what": "SelectStale", "site": "", "result": uuids, "fences": fences}
        self.recorder.add(proc.name, H.READ, "", OK, value)
        return rows, None

    # Writes: ``drive`` records the statement, waits its latency, then applies it.

    def _write_invoke(self, proc: Proc, request: Any) -> tuple[str, dict[str, Any]]:
        if type(request) is InsertRun:
            uuid = request.row.uuid
            name = "T1 startRun" if request.row.status is RunStatus.RUNNING else "T2 enqueueRun"
        else:
            uuid, name = request.uuid, request.transition.name
        base = {"transition": name, "site": request.site, "identity": proc.identity, "actor": proc.kind}
        self.recorder.add(proc.name, H.STORE, uuid, INVOKE, base)
        return uuid, base

    def _write_apply(
        self, proc: Proc, request: Any, fault: Fault | None, uuid: str, base: dict[str, Any]
    ) -> tuple[Any, StoreError | None]:
        rec = self.recorder
        if fault is not None and fault.family == "store" and fault.kind == "fail":
            rec.add(proc.name, H.STORE, uuid, FAIL, {**base, "error": "StoreError"})
            return None, StoreError("statement failed")
        if type(request) is InsertRun:
            row = self.db.insert(request.row)
            rec.add(proc.name, H.STORE, uuid, OK, {**base, "matched": True, "changed": True, "row": H.row_value(row)})
            self._note_status(uuid, row.status)
            return row, None
        return self._update(proc.name, uuid, request.transition, base), None

    def _update(self, process: str, uuid: str, transition: Transition, base: dict[str, Any]) -> UpdateResult:
        """Apply one guarded UPDATE and record its outcome (the row after it when it matched)."""
        result, after = self.db.update(uuid, transition)
        settled = after if result.matched else None
        row = H.row_value(settled) if settled is not None else None
        self.recorder.add(
            process, H.STORE, uuid, OK, {**base, "matched": result.matched, "changed": result.changed, "row": row}
        )
        if settled is not None:
            self._note_status(uuid, settled.status)
        return result

    def _note_status(self, uuid: str, status: RunStatus) -> None:
        if status in _AWAITING:
            if not self.waiting_signal.triggered:
                self.waiting_signal.succeed()
        elif status in _TERMINAL:
            self.terminal.add(uuid)
            return
        if status in NON_TERMINAL:
            self.terminal.discard(uuid)

    def true_effect(self, proc: Proc, tool: str) -> str:
        """The real effect of ``tool`` in ``proc``: the scenario's definition of the code the
        process loaded, independent of the runtime's registry and resolver."""
        tools = proc.tools if proc.tools is not None else self.deployed
        return physical_effect(tools.get(tool))

    def _is_remote(self, proc: Proc, tool: str) -> bool:
        spec = (proc.registry or self.registry).get(tool)
        return spec is not None and spec.remote

    def _event(self, proc: Proc, request: Any, fault: Fault | None) -> tuple[None, StoreError | None]:
        rec = self.recorder
        event = request.event
        step = event.step
        kind = step.kind._value_
        value = {
            "seq": event.sequence,
            "kind": kind,
            "round": step.round_no,
            "tool": step.tool,
            "call": step.call_id,
            "execution": step.execution,
            "effect": request.effect,
            "true_effect": self.true_effect(proc, step.tool) if kind == "tool" else "",
            "identity": proc.identity,
        }
        uuid = request.uuid
        rec.add(proc.name, H.EVENT, uuid, INVOKE, value)
        outage = False
        now = self.env._now
        if now < self._chaos_s:  # outage windows hold in the chaos phase only
            for lo, hi in self._outages:
                if lo <= now < hi:
                    outage = True
                    break
        if outage or (fault is not None and fault.family == "audit"):
            rec.fault("audit", "outage" if outage else "fail", proc.name, uuid, {"request": self.requests - 1})
            rec.add(proc.name, H.EVENT, uuid, FAIL, {**value, "error": "StoreError"})
            return None, StoreError("event insert failed")
        self.db.insert_event(uuid, event)
        rec.add(proc.name, H.EVENT, uuid, OK, value)
        return None, None

    def _duration(self, span: tuple[float, float], fault: Fault | None) -> float:
        if fault is not None and fault.family == "slow":
            return LEASE_S * fault.value
        lo, hi = span
        return lo if hi == lo else lo + (hi - lo) * self.rng.random()

    def _provider_call(self, proc: Proc, request: Any, fault: Fault | None) -> SimGen:
        rec = self.recorder
        rec.add(
            proc.name, H.PROVIDER, request.uuid, INVOKE, {"round": request.round_no, "synthesis": request.synthesis}
        )
        if fault is not None and fault.family == "slow":
            rec.fault("slow", fault.kind, proc.name, request.uuid, {"duration_s": LEASE_S * fault.value})
        if fault is not None and fault.family == "provider":
            rec.fault("provider", fault.kind, proc.name, request.uuid, {"request": fault.at})
        latency = self._duration(self._provider.latency_s, fault)
        if not self.env.advance(latency):
            yield self.env.timeout(latency)
        failure = None
        if fault is not None and fault.family == "provider":
            failure = _PROVIDER_FAILURES[fault.kind]()
        elif fault is not None and fault.family == "slow" and fault.kind == "hang_then_error":
            failure = ProviderResponseError(400)
        if failure is not None:
            error = failure
            failure_class = classify(error, fallback_chain_is_unknown=self.policy.kb13_fallback_chain_unknown)
            true_class = TRUE_CLASS[fault.kind]  # type: ignore[union-attr]  # failure implies a fault
            rec.add(
                proc.name,
                H.PROVIDER,
                request.uuid,
                FAIL,
                {"error": error.error_class, "failure_class": failure_class.value, "true_class": true_class},
            )
            return None, error
        tokens = self._provider.tokens
        rec.add(proc.name, H.PROVIDER, request.uuid, OK, {"tokens": tokens})
        return tokens, None

    def _tool(self, proc: Proc, request: Any, fault: Fault | None) -> SimGen:
        rec = self.recorder
        call, uuid = request.call, request.uuid
        true_effect = self.true_effect(proc, call.name)
        rec.add(
            proc.name,
            H.TOOL,
            uuid,
            INVOKE,
            {
                "call": call.call_id,
                "tool": call.name,
                "effect": request.effect,
                "true_effect": true_effect,
                "identity": proc.identity,
                "key": request.idempotency_key,
                "remote": self._is_remote(proc, call.name),
            },
        )
        key = request.idempotency_key
        if key and key in self.results:
            result = self.results[key]
            rec.add(proc.name, H.TOOL, uuid, OK, {"execution": result.execution, "landed": False, "replayed": True})
            return result, None
        model = (proc.tools if proc.tools is not None else self.deployed).get(call.name) or self.tools_by_name.get(
            call.name
        )
        duration = self._duration(model.latency_s if model is not None else (0.0, 0.0), fault)
        if fault is not None and fault.family == "slow":
            rec.fault("slow", fault.kind, proc.name, uuid, {"duration_s": duration})
        self.executions += 1
        execution = self.executions
        landed = true_effect not in ("read_only", "unknown")
        land_at = model.land_at if model is not None else 0.5
        if landed:
            until_landing = duration * land_at
            if not self.env.advance(until_landing):
                yield self.env.timeout(until_landing)
            rec.add(
                H.WORLD,
                H.LANDING,
                uuid,
                OK,
                {
                    "call": call.call_id,
                    "tool": call.name,
                    "effect": true_effect,
                    "execution": execution,
                    "identity": proc.identity,
                    "process": proc.name,
                    "own_identity": proc.own_identity,
                },
            )
            result = ToolResult(execution=execution)
            if key:
                self.results[key] = result
            if fault is not None and fault.family == "crash":
                rec.add(proc.name, H.TOOL, uuid, INFO, {"crashed": True, "execution": execution})
                return result, None
            rest = duration * (1 - land_at)
            if not self.env.advance(rest):
                yield self.env.timeout(rest)
        else:
            if not self.env.advance(duration):
                yield self.env.timeout(duration)
            result = ToolResult(execution=execution)
        rec.add(proc.name, H.TOOL, uuid, OK, {"execution": execution, "landed": landed, "replayed": False})
        return result, None

    def _dispatch(self, proc: Proc, request: Any, fault: Fault | None) -> SimGen:
        rec = self.recorder
        rec.add(proc.name, H.DISPATCH, request.uuid, INVOKE, {"delay_ms": request.delay_ms, "site": request.site})
        if fault is not None and fault.family == "dispatch":
            rec.fault("dispatch", fault.kind, proc.name, request.uuid, {"request": fault.at})
            rec.add(proc.name, H.DISPATCH, request.uuid, FAIL, {"error": "TransportException"})
            return None, DispatchError("transport refused")
        rec.add(proc.name, H.DISPATCH, request.uuid, OK, {})
        if self.world_cfg.transport == "sync":
            yield from self.handle_inline(proc, request.uuid)
            return None, None
        self.deliver(Message(request.uuid), request.delay_ms / 1000.0)
        if fault is not None and fault.family == "duplicate":
            rec.fault("duplicate", fault.kind, proc.name, request.uuid, {"late_s": fault.value})
            self.deliver(Message(request.uuid, duplicate=True), request.delay_ms / 1000.0 + fault.value)
        return None, None

    def _emit(self, proc: Proc, request: Any, fault: Fault | None) -> tuple[None, None]:
        self.recorder.add(proc.name, H.EMIT, request.uuid, OK, {"round": request.round_no, "kind": request.kind})
        return None, None

    # ---- the bus -----------------------------------------------------------------------------

    def deliver(self, message: Message, delay_s: float) -> None:
        self.pending_deliveries += 1
        if delay_s <= 0:
            self.queue.put(message)
            return
        timer = self.env.timeout(delay_s)
        timer.callbacks.append(lambda _event: self._put(message))

    def _put(self, message: Message) -> None:
        self.queue.put(message)

    # ---- nemesis acts ------------------------------------------------------------------------

    def handle_inline(self, proc: Proc, uuid: str) -> SimGen:
        """Sync transport: the dispatching process handles the wake-up itself, nested."""
        worker = Proc(proc.name, "worker", "worker:" + proc.identity.split(":", 1)[-1], proc.host, proc.skew_s)
        ctx = self.context(worker)
        self.recorder.add(proc.name, H.DELIVER, uuid, OK, {"duplicate": False, "inline": True})
        self.recorder.add(proc.name, H.SEGMENT, uuid, INVOKE, {"entry": "run_queued", "identity": worker.identity})
        outcome = yield from self.drive(worker, run_queued(ctx, uuid))
        self.recorder.add(proc.name, H.SEGMENT, uuid, OK, {"outcome": outcome_value(outcome)})

    def _cancel_now(self, uuid: str) -> None:
        """A user cancels, instantly and without faults (T8 through the store)."""
        row = self.db.find(uuid)
        if row is None:
            return
        base = {"transition": "T8 cancel", "site": "cancel", "identity": "user", "actor": "user"}
        self.recorder.add("user", H.STORE, uuid, INVOKE, base)
        self._update("user", uuid, Cancel(int(self.env.now)), base)

    def _deploy(self, fault: Fault) -> None:
        tools = list(self.registry.tools)
        if not tools:
            return
        victim = tools[min(int(fault.value * len(tools)), len(tools) - 1)]
        if fault.kind == "rename":
            renamed = ToolSpec(
                f"{victim.name}_v2",
                victim.effect,
                victim.remote,
                victim.server_requires_approval,
                victim.approval_marker,
                victim.needs_input,
                victim.deadline_s,
            )
            tools[tools.index(victim)] = renamed
            model = self.tools_by_name.get(victim.name)
            if model is not None:
                self.tools_by_name[renamed.name] = model
        else:
            tools.remove(victim)
        self._redeploy(victim.name, f"{victim.name}_v2" if fault.kind == "rename" else "")
        self.registry = Registry(tuple(tools))
        self.recorder.fault("deploy", fault.kind, H.WORLD, "", {"tool": victim.name})

    def _redeploy(self, name: str, new_name: str) -> None:
        """Ground truth of a deploy: a new table (processes keep the code they loaded)."""
        deployed = dict(self.deployed)
        model = deployed.pop(name, None)
        if model is not None and new_name:
            deployed[new_name] = model.model_copy(update={"name": new_name})
        self.deployed = deployed

    def _steal_identity(self, proc: Proc, fault: Fault) -> None:
        others = [p for p in self.procs_alive.values() if p.kind == proc.kind and p.name != proc.name]
        if not others:
            return
        victim = others[min(int(fault.value * len(others)), len(others) - 1)]
        proc.identity = victim.identity
        self.recorder.fault("identity", fault.kind, proc.name, "", {"identity": victim.identity})

    # ---- ending ------------------------------------------------------------------------------

    def maybe_done(self) -> None:
        if self.done.triggered or self.open_creators or self.busy or self.pending_deliveries:
            return
        if len(self.terminal) == len(self.db.rows):
            self.done.succeed()


_AWAITING = (RunStatus.WAITING_FOR_APPROVAL, RunStatus.WAITING_FOR_INPUT)
_TERMINAL = (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED)
"""``RunStatus.is_awaiting`` / ``is_terminal`` as tuples: a membership test by identity, without
the enum property and hash (``_note_status`` runs for every matched store statement)."""


def outcome_value(outcome: Any) -> Any:
    """A history-friendly form of what an entry point returned (an enum's value, a report's fields)."""
    flatten = _FLATTEN.get(type(outcome))
    if flatten is not None:
        flat = flatten(outcome)
        if _ATOMS.issuperset(map(type, flat.values())):  # only atoms: what asdict returns, without its deep copy
            return flat
    elif isinstance(outcome, Enum):
        return outcome._value_
    if dataclasses.is_dataclass(outcome) and not isinstance(outcome, type):
        _FLATTEN.setdefault(type(outcome), _flattener(tuple(f.name for f in dataclasses.fields(outcome))))
        return dataclasses.asdict(outcome)
    return outcome


def _flattener(names: tuple[str, ...]) -> Callable[[Any], dict[str, Any]]:
    """``lambda o: {name: o.name, ...}`` for these field names, generated once per dataclass."""
    source = "def flat(o):\n    return {" + ", ".join(f"{n!r}: o.{n}" for n in names) + "}\n"
    scope: dict[str, Any] = {}
    exec(source, scope)
    flat: Callable[[Any], dict[str, Any]] = scope["flat"]
    return flat


_ATOMS = frozenset({int, str, float, bool, type(None)})
_FLATTEN: dict[type, Callable[[Any], dict[str, Any]]] = {}
"""A flat-dict builder per dataclass outcome seen so far: most (the reaper's report, every tick)
hold only atoms, whose ``asdict`` is exactly that dict; ``asdict``'s recursion and deep copy cost
more than the rest of a reaper tick."""
