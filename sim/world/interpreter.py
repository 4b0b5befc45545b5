"""The world's interpreter: it steps a runtime generator and answers every request it yields.

:class:`World` owns what one simulation shares (the simpy kernel, the recorder, the fault plan,
the random stream) and the parts that answer requests, each grouped by what it touches:
:mod:`~sim.world.rows` (run rows and the event stream), :mod:`~sim.world.bus` (the message
bus), :mod:`~sim.world.tools` (the tool server and the external ledger),
:mod:`~sim.world.provider` (the LLM provider) and :mod:`~sim.world.clocks` (processes, their
identities and clocks). ``drive`` asks the plan for a fault at each request, lets the nemesis
act, spends the request's simulated time, and sends the answer (or throws the failure) back.
Zero-latency requests are answered inline without a simpy event, and a wait that simpy would
run next anyway is taken at once (:meth:`Kernel.advance`); that is what keeps a simulation
cheap. The processes that call ``drive`` live in :mod:`sim.world.processes`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from math import floor
from typing import Any

import simpy

from checks import history as H
from model.failures import StoreError
from model.policy import Policy
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
from scenarios.schema import Scenario
from sim.world.bus import Bus
from sim.world.clocks import EPOCH_S, Proc, ProcessTable
from sim.world.faults import Fault, FaultPlan
from sim.world.kernel import Kernel, TieControl
from sim.world.provider import Provider
from sim.world.recorder import OK, Recorder
from sim.world.rows import RowStore
from sim.world.store import Database
from sim.world.tools import ToolServer

SimGen = Generator[simpy.Event, Any, Any]
Answer = tuple[Any, StoreError | None]


class Crashed(Exception):
    """The driven process died at a request boundary (a nemesis act, never a runtime error)."""


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
        self.db = Database(self.scenario.world.identity_collation)
        self.recorder = Recorder(self.env)
        self.plan = FaultPlan.build(self.scenario.faults, self.rng, self.script, self.scenario.script, self.anchored)
        self._decide = self.plan.decider()
        self.world_cfg = self.scenario.world
        self.request_types: list[type[Request]] = []
        """The type of each request so far, by its global index (what the fault plan numbers)."""
        self.busy = 0
        self.open_creators = 0
        self.deciding: set[str] = set()
        self.decisions = 0
        self.done = self.env.event()
        self.ended = False
        """``done`` has succeeded (its ``triggered``, without simpy's property: asked after every segment)."""
        self.tools = ToolServer(self)
        self.procs = ProcessTable(self)
        self.rows = RowStore(self, self.db)
        self.bus = Bus(self)
        self.provider = Provider(self)
        rows = self.rows
        self._reads: dict[type[Request], Callable[[Proc, Any, Fault | None], Answer]] = {
            FindRun: rows.find_run,
            MaxSequence: rows.max_sequence,
            CountEvents: rows.count_events,
            SelectStale: rows.select_stale,
        }
        self._instants: dict[type[Request], Callable[[Proc, Any, Fault | None], Answer]] = {
            InsertEvent: rows.insert_event,
            EmitStep: rows.emit,
        }
        self._handlers: dict[type[Request], Callable[[Proc, Any, Fault | None], SimGen]] = {
            CallProvider: self.provider.call,
            InvokeTool: self.tools.invoke,
            Dispatch: self.bus.dispatch,
        }
        self._parts = (
            self.plan,
            self._handlers,
            self._reads,
            self._instants,
            self.env,
            self.request_types,
            rows,
            rows.store_latency_s,
            rows.store_delay,
        )
        """What every ``drive`` reads, fixed for the world's life: one attribute read per segment."""

    @property
    def requests(self) -> int:
        """Requests so far (every request but the clock reads and notes)."""
        return len(self.request_types)

    def drive(self, proc: Proc, gen: Generator[Request, Any, Any]) -> SimGen:
        """Run a runtime generator to completion inside a simpy process; raises Crashed.

        Store statements (reads and writes) are answered after their latency, audit inserts
        and observer emits at once (``_reads``, ``write_*``, ``_instants``: plain functions);
        every other request goes to its handler generator. The clock and notes cost no time.
        """
        value: Any = None
        error: BaseException | None = None
        plan, handlers, reads, instants, env, request_types, rows, store_latency_s, store_delay = self._parts
        send, decide, kind = gen.send, self._decide, proc.kind  # _decide is replaced by conditioned runs
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
                # proc.clock(now), inlined: the commonest request; read_s is the statement records' clock_s
                value = proc.read_s = EPOCH_S + floor(env._now + proc.skew_s)
                continue
            if rtype is Note:
                assert isinstance(request, Note)
                op = H.ACCOUNT if request.what == H.ACCOUNT else H.DECIDE
                self.recorder.add(proc.name, op, request.uuid, OK, dict(request.detail))
                value = None
                continue
            index = len(request_types)  # this request's global index
            request_types.append(rtype)
            fault = None if plan.healed else decide(index, request, kind)
            if fault is not None:
                fault = self._nemesis(proc, request, fault)
                if fault is not None and fault.family == "crash" and fault.kind == "before":
                    gen.close()
                    raise Crashed
            read = reads.get(rtype)
            if read is not None:
                delay = store_latency_s if fault is None else store_delay(proc, getattr(request, "uuid", ""), fault)
                if delay and not env.advance(delay):
                    yield env.timeout(delay)
                value, error = read(proc, request, fault)
            elif rtype is Update or rtype is InsertRun:
                uuid, base = rows.write_invoke(proc, request)
                delay = store_latency_s if fault is None else store_delay(proc, uuid, fault)
                if delay and not env.advance(delay):
                    yield env.timeout(delay)
                value, error = rows.write_apply(proc, request, fault, uuid, base)
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
                self.rows.cancel_now(uuid)
            return None
        if family == "deploy":
            self.tools.deploy(fault)
            return None
        if family == "clock_skew":
            self.procs.skew(proc, fault, uuid)
            return None
        if family == "identity":
            self.procs.steal_identity(proc, fault)
            return None
        return fault

    def maybe_done(self) -> None:
        """Succeed ``done`` once nothing can happen any more: every run terminal, nobody busy."""
        if self.ended or self.open_creators or self.busy or self.bus.pending_deliveries:
            return
        if len(self.rows.terminal) == len(self.db.rows):
            self.ended = True
            self.done.succeed()
