"""The processes of the world: workers, clients, approvers, the reaper and the phase nemesis.

Each is a simpy generator. A process that crashes (``Crashed`` out of ``drive``) is
recorded, retired, and — for long-lived roles — restarted after a downtime as a new
incarnation with a fresh identity. A worker that dies holding a wake-up gets it
redelivered later (the queue is at-least-once).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from checks import history as H
from model import entrypoints
from model.constants import LEASE_S
from model.entrypoints import run_interactive, run_queued
from model.failures import RuntimeThrowable
from model.reaper import reap
from model.requests import Request
from model.resume import approve, submit_input
from sim.world.bus import Message
from sim.world.clocks import EPOCH_S, Proc
from sim.world.interpreter import Crashed, SimGen, World
from sim.world.outcomes import outcome_value
from sim.world.recorder import FAIL, INFO, INVOKE, OK
from sim.world.workload import PlannedRun


def run_segment(
    world: World,
    proc: Proc,
    entry: str,
    uuid: str,
    gen: Generator[Request, Any, Any],
    truth: dict[str, Any] | None = None,
) -> SimGen:
    """Drive one entry-point call, recording it as a `segment` operation (a reaper tick that finds
    nothing as one ``idle`` record: :meth:`Recorder.open_tick`). ``truth``: what the world knows of the
    call that the runtime's records cannot tell (an approver's decision), added to the invoke record."""
    rec = world.recorder
    tick = entry == "reap"
    if tick:
        rec.open_tick(proc.name, proc.identity)
    else:
        value = {"entry": entry, "identity": proc.identity}
        if truth:
            value.update(truth)
        rec.add(proc.name, H.SEGMENT, uuid, INVOKE, value)
    world.busy += 1
    try:
        outcome = yield from world.drive(proc, gen)
    except Crashed:
        rec.add(proc.name, H.SEGMENT, uuid, INFO, {"crashed": True})
        world.busy -= 1
        raise
    except RuntimeThrowable as error:
        rec.add(proc.name, H.SEGMENT, uuid, FAIL, {"error": error.error_class})
        world.busy -= 1
        return None
    value = {"outcome": outcome_value(outcome)}
    if not (tick and rec.close_tick(proc.name, value)):
        rec.add(proc.name, H.SEGMENT, uuid, OK, value)
    world.busy -= 1
    return outcome


def _crashed(world: World, proc: Proc) -> None:
    world.recorder.add(H.NEMESIS, H.CRASH, "", INFO, {"process": proc.name, "identity": proc.identity})
    world.procs.retire(proc)


def _restart_delay(world: World) -> float:
    lo, hi = world.world_cfg.restart_delay_s
    return lo + (hi - lo) * world.rng.random()


def worker(world: World, slot: int) -> SimGen:
    env, cfg = world.env, world.world_cfg
    incarnation = 1
    host = (slot - 1) % cfg.hosts + 1
    while True:
        proc = world.procs.new("worker", f"worker{slot}#{incarnation}", host)
        message: Message | None = None
        try:
            while True:
                message = yield world.bus.queue.get()
                assert message is not None
                world.bus.pending_deliveries -= 1
                world.recorder.add(proc.name, H.DELIVER, message.uuid, OK, {"duplicate": message.duplicate})
                ctx = world.procs.context(proc)
                yield from run_segment(world, proc, "run_queued", message.uuid, run_queued(ctx, message.uuid))
                message = None
                world.maybe_done()
        except Crashed:
            _crashed(world, proc)
            if message is not None:
                world.bus.deliver(message, cfg.redeliver_s)
            downtime = _restart_delay(world)
            if not env.advance(downtime):
                yield env.timeout(downtime)
            incarnation += 1
            world.recorder.add(H.NEMESIS, H.RESTART, "", INFO, {"process": f"worker{slot}#{incarnation}"})


def creator(world: World, planned: PlannedRun, host: int) -> SimGen:
    """The client that enqueues a run or runs it interactively, once."""
    yield world.env.timeout(planned.arrival_s)
    script = planned.request.script
    ends = [(i + 1, turn.outcome._value_) for i, turn in enumerate(script) if turn.outcome._value_ != "normal"]
    plan: dict[str, Any] = {"kind": planned.kind, "stops": [r for r, _ in ends], "stop_kinds": [k for _, k in ends]}
    offered = planned.request.offered
    if len(offered) != len(world.scenario.tools):  # a run offered a subset of the scenario's tools: which
        plan["offered"] = list(offered)
    if ends or planned.request.max_iterations is not None:  # a run the pipeline or a cap ends: its rounds
        plan["cap"] = planned.request.max_iterations
        plan["calls"] = [len(turn.calls) for turn in script]
        plan["tools"] = sum(1 for name in planned.request.offered if name in world.tools.tools_by_name)
    world.recorder.add(H.WORLD, H.PLAN, planned.uuid, OK, plan)
    gen: Generator[Request, Any, Any]
    if planned.kind == "interactive":
        proc = world.procs.new("interactive", f"client-{planned.uuid}", host)
        ctx = world.procs.context(proc, observer=planned.observer)
        gen = run_interactive(ctx, planned.uuid, planned.request)
        entry = "run_interactive"
    else:
        proc = world.procs.new("client", f"client-{planned.uuid}", host)
        gen = entrypoints.enqueue(world.procs.context(proc), planned.uuid, planned.request)  # looked up per call
        entry = "enqueue"
    try:
        yield from run_segment(world, proc, entry, planned.uuid, gen)
    except Crashed:
        _crashed(world, proc)
    world.procs.retire(proc)
    world.open_creators -= 1
    world.maybe_done()


def approver(world: World, slot: int) -> SimGen:
    """Waits for runs to wait, looks after a polling delay, decides each after a human delay."""
    env, cfg = world.env, world.world_cfg
    while True:
        yield world.rows.waiting_signal
        world.rows.waiting_signal = env.event()
        if not env.advance(cfg.approver_poll_s):
            yield env.timeout(cfg.approver_poll_s)
        for row in list(world.db.rows.values()):
            state = row.suspended_state
            if not row.status.is_awaiting or state is None:
                continue
            key = f"{row.uuid}/{state.turn_digest}/{row.status._value_}"
            if key in world.deciding:
                continue
            world.deciding.add(key)
            lo, hi = cfg.approval_delay_s
            delay = lo + (hi - lo) * world.rng.random()
            approved = world.rng.random() < cfg.approve_probability
            for_input = row.status._value_ == "waiting_for_input"
            env.process(_decision(world, slot, key, row.uuid, state.turn_digest, approved, for_input, delay))


def _decision(
    world: World, slot: int, key: str, uuid: str, digest: str, approved: bool, for_input: bool, delay: float
) -> SimGen:
    if not world.env.advance(delay):
        yield world.env.timeout(delay)
    world.decisions += 1
    proc = world.procs.new("resume", f"approver{slot}-{world.decisions}", slot)
    ctx = world.procs.context(proc)
    truth: dict[str, Any] = {}
    if for_input:
        gen = submit_input(ctx, uuid, input_valid=True)
        entry = "submit_input"
    else:
        gen = approve(ctx, uuid, approved=approved, digest=digest)
        entry = "approve"
        row = world.db.find(uuid)
        state = None if row is None else row.suspended_state
        # ground truth the runtime's records cannot tell: a denial, and a decision on a turn the row no
        # longer waits on. Recorded only when so (an approval of the current turn adds nothing), so a
        # history whose approvers approved every turn they saw is what it always was (and its digest).
        if not approved:
            truth["denied"] = True
        if state is None or state.turn_digest != digest:
            truth["stale"] = True
    try:
        yield from run_segment(world, proc, entry, uuid, gen, truth)
    except Crashed:
        _crashed(world, proc)
    world.procs.retire(proc)
    world.deciding.discard(key)
    row = world.db.find(uuid)
    if row is not None and row.status.is_awaiting and not world.rows.waiting_signal.triggered:
        world.rows.waiting_signal.succeed()
    world.maybe_done()


def reaper(world: World) -> SimGen:
    env, cfg, procs = world.env, world.world_cfg, world.procs
    interval_s, limit = cfg.reaper_interval_s, cfg.reaper_limit
    incarnation = 1
    proc = procs.new("reaper", f"reaper#{incarnation}", 1)
    while True:
        if not env.advance(interval_s):
            yield env.timeout(interval_s)
        try:
            yield from run_segment(world, proc, "reap", "", reap(procs.context(proc), limit))
        except Crashed:
            _crashed(world, proc)
            downtime = _restart_delay(world)
            if not env.advance(downtime):
                yield env.timeout(downtime)
            incarnation += 1
            proc = world.procs.new("reaper", f"reaper#{incarnation}", 1)
            world.recorder.add(H.NEMESIS, H.RESTART, "", INFO, {"process": proc.name})
        world.maybe_done()


def phases(world: World) -> SimGen:
    """Chaos first; then every fault heals and liveness is judged in the quiet phase."""
    scenario = world.scenario
    deadline_s = max([scenario.provider.deadline_s, *(tool.deadline_s for tool in scenario.tools)])
    chaos = {"phase": "chaos", "epoch_s": EPOCH_S, "lease_s": LEASE_S, "deadline_s": deadline_s}
    collation = world.world_cfg.identity_collation
    if collation != "binary":  # only then: a binary world's history (and digest) is what it always was
        chaos["collation"] = collation
    world.recorder.add(H.NEMESIS, H.PHASE, "", INFO, chaos)
    yield world.env.timeout(world.world_cfg.chaos_s)
    world.plan.healed = True
    world.procs.heal()
    world.recorder.add(H.NEMESIS, H.PHASE, "", INFO, {"phase": "quiet"})
