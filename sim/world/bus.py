"""The message bus: wake-ups dispatched by the runtime and delivered, at least once, to workers.

Answers ``Dispatch``: a ``dispatch`` fault makes it throw (the transport refused); otherwise the
wake-up is delivered after its delay on the async transport (a ``duplicate`` fault delivers it
a second time, late), or handled at once by the dispatching process itself on the sync
transport (a nested ``run_queued`` segment). Counts deliveries still in flight, so the world
knows when nothing more can happen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import simpy

from checks import history as H
from model.entrypoints import run_queued
from model.failures import DispatchError
from sim.world.clocks import Proc
from sim.world.faults import Fault
from sim.world.outcomes import outcome_value
from sim.world.recorder import FAIL, INVOKE, OK

if TYPE_CHECKING:
    from sim.world.interpreter import SimGen, World


@dataclass(frozen=True, slots=True)
class Message:
    uuid: str
    duplicate: bool = False


class Bus:
    """The queue workers take wake-ups from, and the deliveries on their way to it."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.env = world.env
        self.recorder = world.recorder
        self.queue: simpy.Store = simpy.Store(world.env)
        self.pending_deliveries = 0
        self.sync = world.scenario.world.transport == "sync"

    def dispatch(self, proc: Proc, request: Any, fault: Fault | None) -> SimGen:
        """``Dispatch``: (None, None), or (None, DispatchError) when the transport refuses."""
        rec = self.recorder
        rec.add(proc.name, H.DISPATCH, request.uuid, INVOKE, {"delay_ms": request.delay_ms, "site": request.site})
        if fault is not None and fault.family == "dispatch":
            rec.fault("dispatch", fault.kind, proc.name, request.uuid, {"request": fault.at})
            rec.add(proc.name, H.DISPATCH, request.uuid, FAIL, {"error": "TransportException"})
            return None, DispatchError("transport refused")
        rec.add(proc.name, H.DISPATCH, request.uuid, OK, {})
        if self.sync:
            yield from self.handle_inline(proc, request.uuid)
            return None, None
        self.deliver(Message(request.uuid), request.delay_ms / 1000.0)
        if fault is not None and fault.family == "duplicate":
            rec.fault("duplicate", fault.kind, proc.name, request.uuid, {"late_s": fault.value})
            self.deliver(Message(request.uuid, duplicate=True), request.delay_ms / 1000.0 + fault.value)
        return None, None

    def deliver(self, message: Message, delay_s: float) -> None:
        self.pending_deliveries += 1
        if delay_s <= 0:
            self.queue.put(message)
            return
        timer = self.env.timeout(delay_s)
        timer.callbacks.append(lambda _event: self._put(message))

    def _put(self, message: Message) -> None:
        self.queue.put(message)

    def handle_inline(self, proc: Proc, uuid: str) -> SimGen:
        """Sync transport: the dispatching process handles the wake-up itself, nested."""
        world = self.world
        worker = Proc(proc.name, "worker", "worker:" + proc.identity.split(":", 1)[-1], proc.host, proc.skew_s)
        ctx = world.procs.context(worker)
        self.recorder.add(proc.name, H.DELIVER, uuid, OK, {"duplicate": False, "inline": True})
        self.recorder.add(proc.name, H.SEGMENT, uuid, INVOKE, {"entry": "run_queued", "identity": worker.identity})
        world.procs.nested.append(worker)  # healed with its process if the quiet phase begins meanwhile
        try:
            outcome = yield from world.drive(worker, run_queued(ctx, uuid))
        finally:
            world.procs.nested.remove(worker)
            proc.skew_s = worker.skew_s  # one process, one clock: a clock fault struck during the nested call stays
        self.recorder.add(proc.name, H.SEGMENT, uuid, OK, {"outcome": outcome_value(outcome)})
