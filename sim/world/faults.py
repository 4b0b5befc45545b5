"""Fault families and the plan that decides, request by request, which fault fires.

Each family is defined once, in :data:`FAMILIES`: the requests it can strike, how a
kind and value are drawn when it fires, and its colour in plots. A plan runs in one of
two modes that consume the simulation's random stream identically, so a recorded fault
script replays the exact history its profile produced:

- profile mode: each family fires with its per-opportunity probability;
- script mode: only the listed faults fire, at their global request index (the
  scenario's targeted faults do not: a recorded script already holds those that fired);
- anchored mode: the shrinker's, only the listed faults fire, at their anchors;
- kept faults (:meth:`FaultPlan.keep`, the guided explorer's branches): profile mode, except that the
  given faults fire at their anchors whatever the draw says. A kept fault consumes the stream as a
  script's does, so the faults such a run fired replay its history in script mode.

A script- or anchored-mode plan can switch to profile mode mid-run (:meth:`FaultPlan.follow_profile`,
the suffix of a prefix-conditioned run).

The scenario's targeted faults (matched by request kind, tool, transition, process)
are part of profile mode, which is what ``run``, sweeps and the swarm explorer use;
the Hypothesis and exhaustive explorers search over fault scripts of their own.

Every fault that fires is returned as a :class:`Fault` so the world can record it and
the explorers can shrink the list.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from model.requests import (
    REQUEST_KINDS,
    STORE_REQUESTS,
    CallProvider,
    Dispatch,
    InsertEvent,
    InvokeTool,
    Request,
    Update,
)
from scenarios.schema import FaultsModel, ScriptedFaultModel
from scenarios.script import Fault, parse_script

__all__ = ["FAMILIES", "Fault", "FaultPlan", "parse_script"]


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    colour: str
    requests: tuple[type[Request], ...]  # () = every request
    meaning: str


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("audit", "#d62728", (InsertEvent,), "event inserts fail (probability, outage windows)"),
        Family("store", "#8c564b", STORE_REQUESTS, "guarded updates and reads throw or are slow"),
        Family("crash", "#000000", (), "the process dies at a request boundary, before or after it took effect"),
        Family(
            "slow",
            "#ff7f0e",
            (CallProvider, InvokeTool),
            "a provider or tool call outlives the lease (and, for hang_then_error, then fails with a 400)",
        ),
        Family("duplicate", "#9467bd", (Dispatch,), "the wake-up is delivered twice, the copy late"),
        Family("dispatch", "#e377c2", (Dispatch,), "dispatching the wake-up throws"),
        Family("clock_skew", "#bcbd22", (), "the process's clock jumps by an offset"),
        Family("identity", "#17becf", (), "the process takes the identity of another live process"),
        Family("cancel", "#7f7f7f", (), "a user cancels the run this request belongs to"),
        Family("provider", "#1f77b4", (CallProvider,), "the provider fails with a failure class"),
        Family("deploy", "#2ca02c", (), "a tool is renamed or removed from the registry"),
    )
}


def _probabilities(faults: FaultsModel) -> dict[str, float]:
    return {
        "audit": faults.audit.probability,
        "store": faults.store.probability + faults.store.slow_probability,
        "crash": faults.crash.probability,
        "slow": faults.slow.probability,
        "duplicate": faults.duplicate.probability,
        "dispatch": faults.dispatch.probability,
        "clock_skew": faults.clock_skew.probability,
        "identity": faults.identity.probability,
        "cancel": faults.cancel.probability,
        "provider": faults.provider.probability,
        "deploy": faults.deploy.probability,
    }


def _pick(options: Sequence[str], v: float) -> str:
    return options[min(int(v * len(options)), len(options) - 1)]


def draw_kind(name: str, faults: FaultsModel, v: float) -> tuple[str, float]:
    """The kind and value of a fault of family ``name`` from one uniform draw ``v``."""
    if name == "crash":
        return ("after" if v < faults.crash.after_share else "before"), 0.0
    if name == "store":
        total = faults.store.probability + faults.store.slow_probability
        slow = total > 0 and v >= faults.store.probability / total
        lo, hi = faults.store.slow_s
        return ("slow", lo + (hi - lo) * v) if slow else ("fail", 0.0)
    if name == "slow":
        lo, hi = faults.slow.lease_factor
        kind = "hang_then_error" if v >= 0.8 else "stretch"
        return kind, lo + (hi - lo) * (v / 0.8 if v < 0.8 else (v - 0.8) / 0.2)
    if name == "duplicate":
        lo, hi = faults.duplicate.late_s
        return "twice", lo + (hi - lo) * v
    if name == "clock_skew":
        return "offset", (2 * v - 1) * faults.clock_skew.max_skew_s
    if name == "provider":
        return _pick(faults.provider.classes or ["connection"], v), 0.0
    if name == "deploy":
        return _pick(faults.deploy.kinds or ["remove"], v), v
    return "fire", 0.0


@dataclass(slots=True)
class _Targeted:
    spec: ScriptedFaultModel
    seen: int = 0


Table = dict[type[Request], tuple[tuple[str, float], ...]]
Anchor = tuple[str, str, int]
"""(run uuid, request type name, n): the n-th request of that type for that run."""


@dataclass(slots=True)
class FaultPlan:
    """Decides the fault of each request, in one of three modes.

    profile (``script`` and ``anchored`` None): families fire with their probabilities,
    plus the scenario's targeted faults; script: exactly the faults at those request
    indexes; anchored: exactly the faults at those anchors, which survive the removal
    of an earlier fault far better than indexes do (the shrinker's mode). Fired faults
    always carry both their index and their anchor.
    """

    faults: FaultsModel
    rng: random.Random
    script: dict[int, Fault] | None = None
    anchored: dict[Anchor, Fault] | None = None
    targeted: list[_Targeted] = field(default_factory=list)
    pinned: dict[int, Fault] = field(default_factory=dict)
    suffix_faults: FaultsModel | None = None
    """With :meth:`count_targeted`: the profile :meth:`follow_profile` switches to."""
    base_faults: FaultsModel | None = None
    burst: int = 0
    """With :meth:`count_targeted`: requests decided at ``suffix_faults`` after a switch (0: all)."""
    burst_left: int = 0
    kept: dict[Anchor, Fault] | None = None
    """Profile mode's faults forced at their anchors (:meth:`keep`); None: none."""
    fired: list[Fault] = field(default_factory=list)
    healed: bool = False
    _table: Table = field(default_factory=dict)
    _total: dict[type[Request], float] = field(default_factory=dict)
    """Per request type, the probability that any family fires (the last cumulative row)."""
    _counts: dict[type[Request], dict[str, int]] = field(default_factory=dict)
    """Per request type, how many requests of each run (uuid) :meth:`decide` has decided: the ``n``
    of an anchor. One dict per type rather than one keyed by (uuid, type): no key tuple built and
    hashed per request. (The closure :meth:`decider` returns keeps its own lists.)"""

    @classmethod
    def build(
        cls,
        faults: FaultsModel,
        rng: random.Random,
        script: Sequence[Fault] | None,
        targeted: Sequence[ScriptedFaultModel] = (),
        anchored: Sequence[Fault] | None = None,
    ) -> FaultPlan:
        plan = cls(faults, rng)
        if script is not None:
            plan.script = {f.at: f for f in script}
        elif anchored is not None:
            plan.anchored = {f.anchor_key(): f for f in anchored}
        else:
            plan._table = _table_for(faults)
            plan._total = {rtype: rows[-1][1] for rtype, rows in plan._table.items() if rows}
            plan.targeted = [_Targeted(t) for t in targeted if t.at is None]
            for t in targeted:
                if t.at is not None:
                    kind = t.kind or draw_kind(t.family, faults, 0.0)[0]
                    plan.pinned.setdefault(t.at, Fault(t.at, t.family, kind, t.value))
        return plan

    def follow_profile(self) -> None:
        """Leave script (or anchored) mode for profile mode from the next decision on: the suffix of a
        prefix-conditioned run (:mod:`sim.world.conditioned`). The families fire with their
        probabilities; the scenario's targeted faults stay off, as in script mode (the script holds
        each one its history needed). Takes effect through :meth:`decide`, which a script-mode plan's
        :meth:`decider` is."""
        self.script = None
        self.anchored = None
        if self.suffix_faults is not None:
            self.faults = self.suffix_faults
            self.burst_left = self.burst
        self._use(self.faults)

    def _use(self, faults: FaultsModel) -> None:
        self.faults = faults
        self._table = _table_for(faults)
        self._total = {rtype: rows[-1][1] for rtype, rows in self._table.items() if rows}

    def count_targeted(self, targeted: Sequence[ScriptedFaultModel], faults: FaultsModel, burst: int = 0) -> None:
        """In script mode, count the scenario's targeted faults' matches as profile mode does, without
        firing them (the script holds each one that fired), so that after :meth:`follow_profile` those
        still ahead fire at the occurrence the scenario names. ``faults`` is the profile the suffix
        follows (a guided branch raises the fault rates there); with ``burst`` > 0 only for that many
        requests after each switch, then the plan's own profile again. Must be called before the world
        runs."""
        if self.script is None:
            raise ValueError("counting targeted faults applies to script mode only")
        self.targeted = [_Targeted(t) for t in targeted if t.at is None]
        for t in targeted:
            if t.at is not None:
                kind = t.kind or draw_kind(t.family, faults, 0.0)[0]
                self.pinned.setdefault(t.at, Fault(t.at, t.family, kind, t.value))
        self.suffix_faults = faults
        self.burst = burst
        self.base_faults = self.faults

    def keep(self, faults: Sequence[Fault]) -> None:
        """In profile mode, fire each of ``faults`` at its anchor (run, request type, occurrence) whatever
        the draw says: a branch of the guided explorer keeps a milestone's faults and draws the rest
        afresh. The request's own draw is consumed first and one more draw when the fault fires, as in
        script mode, so the run's fired faults replay it exactly in script mode. Must be called before
        the world runs; the world must then decide through :meth:`decide`."""
        if self.script is not None or self.anchored is not None:
            raise ValueError("kept faults apply to profile mode only")
        self.kept = {f.anchor_key(): f for f in faults}

    def decide(self, index: int, request: Request, process_kind: str) -> Fault | None:
        """The fault striking request ``index``, if any. Consumes one draw per request in the
        chaos phase, and one more when a fault fires, in every mode alike."""
        if self.healed:
            return None
        rtype = type(request)
        uuid: str = getattr(request, "uuid", "")
        seen = self._counts.setdefault(rtype, {})
        nth = seen[uuid] = seen.get(uuid, 0) + 1
        u = self.rng.random()
        fault: Fault | None = None
        if self.script is not None:
            fault = self.script.get(index)
            if self.targeted:
                self._match_targeted(index, request, process_kind)  # counted, not fired (count_targeted)
        elif self.anchored is not None:
            fault = self.anchored.get((uuid, rtype.__name__, nth))
        else:
            if self.burst_left > 0:
                self.burst_left -= 1  # this request is decided at the suffix's rates
            elif self.burst and self.burst_left == 0 and self.base_faults is not None:
                self._use(self.base_faults)  # the burst is over: the plan's own rates again
                self.burst_left = -1
            if self.kept is not None:
                fault = self.kept.get((uuid, rtype.__name__, nth))
                if fault is not None:
                    self.rng.random()
                    fired = Fault(index, fault.family, fault.kind, fault.value, f"{uuid}/{rtype.__name__}/{nth}")
                    self.fired.append(fired)
                    return fired
            if u < self._total.get(rtype, 0.0):
                return self._strike(index, rtype, uuid, nth, u)
            if self.pinned or self.targeted:
                fault = self.pinned.get(index) or self._match_targeted(index, request, process_kind)
                if fault is not None:
                    self.rng.random()
        if fault is None:
            return None
        if self.script is not None or self.anchored is not None:
            self.rng.random()
        fired = Fault(index, fault.family, fault.kind, fault.value, f"{uuid}/{rtype.__name__}/{nth}")
        self.fired.append(fired)
        return fired

    def _strike(self, index: int, rtype: type[Request], uuid: str, nth: int, u: float) -> Fault:
        """Profile mode: the draw ``u`` fell under the request type's total; one more draw picks
        the kind and value of the family it fell in."""
        family = next(name for name, acc in self._table[rtype] if u < acc)
        kind, value = draw_kind(family, self.faults, self.rng.random())
        fired = Fault(index, family, kind, value, f"{uuid}/{rtype.__name__}/{nth}")
        self.fired.append(fired)
        return fired

    def decider(self) -> Callable[[int, Request, str], Fault | None]:
        """:meth:`decide`, as a closure over the plan's tables in the commonest mode (profile mode
        without targeted faults, nothing decided yet): the same draws and faults, less work per
        request. One lookup per request gives the type's threshold and the runs of its requests so
        far, a list: appending a run is cheaper than counting it, and the count (the ``n`` of an
        anchor) is needed only when a fault strikes (a few times in a simulation, against hundreds
        of requests)."""
        if (
            self.script is not None
            or self.anchored is not None
            or self.kept is not None
            or self.pinned
            or self.targeted
            or self._counts
        ):
            return self.decide
        plan, draw, total = self, self.rng.random, self._total
        lanes: dict[type[Request], tuple[float, list[str]]] = {}

        def decide(index: int, request: Request, process_kind: str) -> Fault | None:
            if plan.healed:
                return None
            rtype = type(request)
            lane = lanes.get(rtype)
            if lane is None:
                lane = lanes[rtype] = (total.get(rtype, 0.0), [])
            threshold, runs = lane
            uuid: str = getattr(request, "uuid", "")
            runs.append(uuid)
            u = draw()
            if u < threshold:
                return plan._strike(index, rtype, uuid, runs.count(uuid), u)
            return None

        return decide

    def _match_targeted(self, index: int, request: Request, process_kind: str) -> Fault | None:
        for entry in self.targeted:
            spec = entry.spec
            if entry.seen >= spec.nth or not _matches(spec, request, process_kind):
                continue
            entry.seen += 1
            if entry.seen == spec.nth:
                kind = spec.kind or draw_kind(spec.family, self.faults, 0.0)[0]
                return Fault(index, spec.family, kind, spec.value)
        return None


_EMPTY_TABLE: Table = {}
_TABLES: dict[int, tuple[FaultsModel, Table]] = {}


def _table_for(faults: FaultsModel) -> Table:
    """Per request type, the families that may strike it with cumulative probabilities (cached)."""
    cached = _TABLES.get(id(faults))
    if cached is not None and cached[0] is faults:
        return cached[1]
    table = _build_table(_probabilities(faults))
    if len(_TABLES) >= 64:
        _TABLES.pop(next(iter(_TABLES)))
    _TABLES[id(faults)] = (faults, table)
    return table


def _build_table(probs: dict[str, float]) -> Table:
    table: Table = {}
    kinds = {*STORE_REQUESTS, InsertEvent, CallProvider, InvokeTool, Dispatch}
    for rtype in kinds:
        acc, rows = 0.0, []
        for fam in FAMILIES.values():
            p = probs.get(fam.name, 0.0)
            if p > 0 and (not fam.requests or rtype in fam.requests):
                acc += p
                rows.append((fam.name, acc))
        table[rtype] = tuple(rows)
    return table


_ON = REQUEST_KINDS


def _matches(spec: ScriptedFaultModel, request: Request, process_kind: str) -> bool:
    if spec.process != "any" and spec.process != process_kind:
        return False
    strikes = FAMILIES[spec.family].requests
    if strikes and not isinstance(request, strikes):
        return False
    if spec.on != "any" and not isinstance(request, _ON[spec.on]):
        return False
    if spec.tool:
        if isinstance(request, InvokeTool):
            if request.call.name != spec.tool:
                return False
        elif isinstance(request, InsertEvent):
            if request.event.step.tool != spec.tool:
                return False
        else:
            return False
    return not spec.transition or (isinstance(request, Update) and request.transition.name.startswith(spec.transition))
