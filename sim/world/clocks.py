"""Processes as the runtime sees them: incarnations, their identities and their clocks.

A :class:`Proc` is one incarnation of a worker, client, approver or the reaper: the identity
its statements claim leases with, the offset of its clock (the ``clock_skew`` family) and the
tool code it loaded. :class:`ProcessTable` hands out incarnations, builds the runtime's
``Context`` for one entry-point call, and carries out the two faults that act on who a process
is and what time it reads: a clock offset and a stolen identity. Knows the model's context and
the tool server's deployed table; nothing of stores, the bus or simpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import floor
from typing import TYPE_CHECKING

from model.constants import LEASE_S, execution_identity
from model.records import Registry
from model.segment import Context
from scenarios.schema import ToolModel
from sim.world.faults import Fault

if TYPE_CHECKING:
    from sim.world.interpreter import World


EPOCH_S = 1_700_000_000
"""The true wall clock's reading (unix seconds, November 2023) at simulated time 0.

A process reads ``EPOCH_S + floor(now + its offset)``. With an epoch of 0 a clock lagging by more
than the elapsed time read a negative time, and a lease stamped from it was ``<= 0``, which T12
reads as "no lease" (``lease_expires > 0``): a run no reaper would ever select, though production's
``time()`` (about 1.7e9) would give a positive lease in the past that the reaper reclaims. The
history's 'chaos' phase record states the epoch, so checkers put row times back on the records'
axis (:attr:`checks.Index.epoch_s`). The epoch is added after the floor, not before: a
float near 1.7e9 keeps only a quarter-microsecond, so ``int(EPOCH_S + 903.9999999)`` would read 904
where the true reading is 903; added after, every non-negative reading (all of them, with no lagging
clock) is exactly what it was with an epoch of 0, and same-second renewals fall where they fell."""


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
    read_s: int = 0
    """Ground truth: what this process's clock showed at its latest clock read (the ``now`` the runtime
    computed its next statement's lease from); store records carry it as ``clock_s``."""

    def __post_init__(self) -> None:
        self.own_identity = self.own_identity or self.identity

    def clock(self, now: float) -> int:
        """What this incarnation's clock reads at true simulated time ``now``."""
        return EPOCH_S + floor(now + self.skew_s)


class ProcessTable:
    """The live incarnations, their contexts, and the nemesis acts on identities and clocks."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.alive: dict[str, Proc] = {}
        self.nested: list[Proc] = []
        """The Sync transport's nested workers in flight (:meth:`sim.world.bus.Bus.handle_inline`): each runs
        inside a live process and shares its clock, so the quiet phase heals it too; not ``alive`` (no
        incarnation of its own, so no identity fault takes it as a victim)."""
        self._pid = 100
        self._provider_deadline_s = world.scenario.provider.deadline_s or LEASE_S
        cfg = world.scenario.world
        self._host_names = cfg.host_names
        self._host_pids: dict[str, int] | None = {} if cfg.pids == "per_host" else None
        """``per_host``: each host's last pid (its own pid namespace); None: one counter for all."""

    def new(self, kind: str, name: str, host_no: int) -> Proc:
        names = self._host_names
        host = names[host_no - 1] if host_no <= len(names) else f"h{host_no}"
        host_pids = self._host_pids
        if host_pids is None:
            self._pid += 1
            pid = self._pid
        else:
            pid = host_pids[host] = host_pids.get(host, 100) + 1
        proc = Proc(name, kind, execution_identity(kind, host, pid), host)
        self.alive[name] = proc
        return proc

    def context(self, proc: Proc, *, observer: bool = False) -> Context:
        """A runtime context for one entry-point call; the registry is hydrated now.

        Contexts are frozen values: the process's previous one is handed out again while
        registry, identity and observer are unchanged (a reaper asks for one every tick)."""
        tools = self.world.tools
        registry = proc.registry = tools.registry
        proc.tools = tools.deployed
        ctx = proc.ctx
        if ctx is None or ctx.registry is not registry or ctx.identity != proc.identity or ctx.observer != observer:
            ctx = proc.ctx = Context(
                self.world.policy,
                registry,
                proc.identity,
                observer=observer,
                provider_deadline_s=self._provider_deadline_s,
            )
        return ctx

    def retire(self, proc: Proc) -> None:
        self.alive.pop(proc.name, None)

    def skew(self, proc: Proc, fault: Fault, uuid: str) -> None:
        """``clock_skew``: from now on this incarnation reads a clock offset by the fault's value."""
        proc.skew_s = fault.value
        self.world.recorder.fault("clock_skew", fault.kind, proc.name, uuid, {"offset_s": fault.value})

    def steal_identity(self, proc: Proc, fault: Fault) -> None:
        """``identity``: this incarnation takes the identity of another live one of its kind."""
        others = [p for p in self.alive.values() if p.kind == proc.kind and p.name != proc.name]
        if not others:
            return
        victim = others[min(int(fault.value * len(others)), len(others) - 1)]
        proc.identity = victim.identity
        self.world.recorder.fault("identity", fault.kind, proc.name, "", {"identity": victim.identity})

    def heal(self) -> None:
        """The quiet phase: every live incarnation reads the true clock under its own identity, and so
        does a nested call in flight (it hands its clock back to its process when it returns)."""
        for proc in (*self.alive.values(), *self.nested):
            proc.skew_s = 0.0
            proc.identity = proc.own_identity
