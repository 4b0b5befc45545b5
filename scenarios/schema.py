"""The scenario schema (pydantic): what a TOML scenario file may say, with ranges and defaults.

A scenario is a workload (runs and their scripted model answers), a world (workers,
reaper, transport, latencies) and a fault profile (one table per fault family).
Unknown keys are errors, not silently ignored: a typo must not turn a fault off.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from model.errors import choices, shown
from model.transitions import TRANSITIONS
from scenarios.families import (
    FAULT_KINDS,
    MAX_LEASE_FACTOR,
    MAX_SECONDS,
    MAX_SKEW_S,
    MAX_STORE_DELAY_S,
    FailureClassName,
    FamilyName,
    fault_value_problem,
)
from scenarios.limits import MAX_REQUEST_INDEX


def _as_tuple(value: Any) -> Any:
    """TOML has arrays, not tuples: a [low, high] pair arrives as a list (strict mode wants a tuple)."""
    return tuple(value) if isinstance(value, list) else value


Probability = Annotated[float, Field(ge=0.0, le=1.0)]
Seconds = Annotated[float, Field(ge=0.0, le=MAX_SECONDS)]
Range = Annotated[tuple[Seconds, Seconds], BeforeValidator(_as_tuple)]
LeaseFactor = Annotated[float, Field(ge=0.0, le=MAX_LEASE_FACTOR)]

EFFECTS = ("undeclared", "read_only", "idempotent_write", "non_idempotent_write")

DeployKind = Literal["rename", "remove"]


def _final_answer_only() -> list[list[str]]:
    return [[]]


def _default_failure_classes() -> list[FailureClassName]:
    return ["connection", "serverError", "rateLimit", "auth", "clientError"]


def _default_deploy_kinds() -> list[DeployKind]:
    return ["rename", "remove"]


class _Strict(BaseModel):
    """Unknown keys, a bool or a string for a number, NaN and infinities are errors, not coerced."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def _ordered(value: Range, name: str) -> Range:
    if value[0] > value[1]:
        raise ValueError(f"{name}: must be [low, high] with low <= high, not {shown(list(value))}")
    return value


class ToolModel(_Strict):
    """A tool of the registry and how long it takes. ``land_at`` is the fraction of the
    call after which its side effect is in the ledger."""

    name: Annotated[str, Field(min_length=1, max_length=64)]
    effect: Literal["undeclared", "read_only", "idempotent_write", "non_idempotent_write"] = "undeclared"
    remote: bool = False
    server_requires_approval: bool = True
    approval_marker: bool = False
    needs_input: bool = False
    latency_s: Range = (0.2, 2.0)
    land_at: Probability = 0.5
    deadline_s: Annotated[int, Field(ge=0, le=86_400)] = 0
    approval_off_reason: str = ""
    """Why a remote tool's server does not require approval (head's default is on, spec 6)."""

    @model_validator(mode="after")
    def _check(self) -> ToolModel:
        _ordered(self.latency_s, "latency_s")
        if self.remote and self.effect != "non_idempotent_write":
            raise ValueError(
                f"effect: a remote (MCP) tool is a non_idempotent_write at head (spec 6), not {self.effect}"
            )
        if self.remote and not self.server_requires_approval and not self.approval_off_reason.strip():
            raise ValueError("approval_off_reason: say why this server's approval is off (head's default is on)")
        return self


class ProviderModel(_Strict):
    latency_s: Range = (1.0, 8.0)
    tokens: Annotated[int, Field(ge=0, le=1_000_000)] = 100
    deadline_s: Annotated[int, Field(ge=0, le=86_400)] = 0

    @model_validator(mode="after")
    def _check(self) -> ProviderModel:
        _ordered(self.latency_s, "latency_s")
        return self


class RunGroupModel(_Strict):
    """``count`` runs of one kind arriving uniformly in ``arrival_s``.

    ``script`` is the model's answers, one list of tool names per round ([] = final
    answer); ``outcomes`` optionally ends a round through the pipeline instead
    (normal, guardrail_denied, guardrail_approval, budget_exhausted, context_truncated).
    """

    kind: Literal["queued", "interactive"] = "queued"
    count: Annotated[int, Field(ge=1, le=10_000)] = 1
    arrival_s: Range = (0.0, 0.0)
    script: list[list[str]] = Field(default_factory=_final_answer_only)
    outcomes: list[
        Literal["normal", "guardrail_denied", "guardrail_approval", "budget_exhausted", "context_truncated"]
    ] = Field(default_factory=list)
    offered: list[str] | None = None
    max_iterations: Annotated[int, Field(ge=1, le=100)] | None = None
    observer: bool = False

    @model_validator(mode="after")
    def _check(self) -> RunGroupModel:
        _ordered(self.arrival_s, "arrival_s")
        if len(self.outcomes) > len(self.script):
            raise ValueError("outcomes has more entries than script has rounds")
        return self


HostName = Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[^:\s]+$")]
"""A hostname as an identity holds it: no colon (the identity's separator) and no whitespace."""


class WorldModel(_Strict):
    workers: Annotated[int, Field(ge=1, le=64)] = 2
    hosts: Annotated[int, Field(ge=1, le=64)] = 2
    reaper_interval_s: Annotated[float, Field(gt=0.0, le=86_400.0)] = 60.0
    reaper_limit: Annotated[int, Field(ge=1, le=10_000)] = 50
    approvers: Annotated[int, Field(ge=0, le=16)] = 1
    approver_poll_s: Annotated[float, Field(gt=0.0, le=86_400.0)] = 60.0
    approval_delay_s: Range = (5.0, 120.0)
    approve_probability: Probability = 1.0
    transport: Literal["async", "sync"] = "async"
    redeliver_s: Seconds = 3600.0
    store_latency_s: Seconds = 0.0
    restart_delay_s: Range = (5.0, 60.0)
    chaos_s: Seconds = 3600.0
    quiet_s: Seconds = 7200.0
    identity_collation: Literal["binary", "unicode_ci"] = "binary"
    """How the store compares an owner guard's identity with ``claimed_by`` (an engine property,
    :data:`sim.world.store.COLLATIONS`): ``binary`` exactly (SQLite, PostgreSQL, and every simulation
    before it existed); ``unicode_ci`` as MariaDB's ``utf8mb4_unicode_ci``, the collation TYPO3
    creates the tables with in production."""
    host_names: list[HostName] = Field(default_factory=list)
    """The hostnames of hosts 1, 2, ... in identities (``kind:hostname:pid``); a host past the list, and
    every host when it is empty, is ``h<n>``. Containers named ``app-1`` and ``APP-1`` are distinct
    hosts whose identities a case-insensitive collation equates."""
    pids: Literal["global", "per_host"] = "global"
    """How processes get their pids: ``global`` from one counter (every identity unique, as always);
    ``per_host`` from a counter per host, as in containers with their own pid namespaces, so the first
    worker on each host has pid 101."""

    @model_validator(mode="after")
    def _check(self) -> WorldModel:
        _ordered(self.approval_delay_s, "approval_delay_s")
        _ordered(self.restart_delay_s, "restart_delay_s")
        if len(set(self.host_names)) != len(self.host_names):
            raise ValueError("host_names: a name is listed twice (two hosts with one name share every identity)")
        return self


class AuditFaults(_Strict):
    """Event inserts fail: per-call probability and outage windows [start, end) in seconds.

    Range: any insert, any window inside the chaos phase (an audit database that is down while the
    run store is up is the case ADR-111 is about)."""

    probability: Probability = 0.0
    outages: list[Range] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> AuditFaults:
        for i, window in enumerate(self.outages):
            _ordered(window, f"outages.{i}")
        return self


class StoreFaults(_Strict):
    """Guarded updates and reads throw, or are slow (``slow_s``).

    Range: a scenario may let a slow statement take up to twice the lease length
    (:data:`MAX_STORE_DELAY_S`), so a commit stall can outlive the lease. The default stays at
    30 s, the range the registered findings and claims were triaged under; see
    :data:`DEPLOYMENT_RANGES` and ``register/entries/README.md`` for the wider search."""

    probability: Probability = 0.0
    slow_probability: Probability = 0.0
    slow_s: Range = (1.0, 30.0)

    @model_validator(mode="after")
    def _check(self) -> StoreFaults:
        _ordered(self.slow_s, "slow_s")
        if self.slow_s[1] > MAX_STORE_DELAY_S:
            raise ValueError(f"slow_s: may reach at most {MAX_STORE_DELAY_S:g} s (twice the lease length)")
        return self


class CrashFaults(_Strict):
    """A process dies at a request boundary; ``after_share`` of crashes fall after the request
    took effect (e.g. after a tool's side effect landed) but before it returned.

    Range: any request boundary of any process (kill -9, OOM, a node lost); it restarts after
    ``world.restart_delay_s`` with a fresh identity."""

    probability: Probability = 0.0
    after_share: Probability = 0.5


class SlowFaults(_Strict):
    """A provider or tool call lasts ``lease_factor`` x LEASE_S.

    Range: 1.05 to 2.5 leases by default: just past the lease (the reaper's first chance) up to
    long enough for a requeued attempt to run beside the zombie (spec 7.2: calls longer than 900 s
    are reaped mid-call)."""

    probability: Probability = 0.0
    lease_factor: Annotated[tuple[LeaseFactor, LeaseFactor], BeforeValidator(_as_tuple)] = (1.05, 2.5)

    @model_validator(mode="after")
    def _check(self) -> SlowFaults:
        _ordered(self.lease_factor, "lease_factor")
        return self


class DuplicateFaults(_Strict):
    """A wake-up is delivered twice, the copy ``late_s`` later.

    Range: 0 to 600 s: a broker redelivering after a consumer timeout (at-least-once), up to the
    longest requeue backoff (spec 5.2: 600 000 ms)."""

    probability: Probability = 0.0
    late_s: Range = (0.0, 600.0)

    @model_validator(mode="after")
    def _check(self) -> DuplicateFaults:
        _ordered(self.late_s, "late_s")
        return self


class SimpleFaults(_Strict):
    probability: Probability = 0.0


class SkewFaults(_Strict):
    """A process's clock is offset by up to ``max_skew_s`` seconds either way.

    Range: a scenario may allow up to one hour either way (:data:`MAX_SKEW_S`), which crosses the
    lease length in both directions. The default stays at 120 s, the range the registered findings
    and claims were triaged under; see :data:`DEPLOYMENT_RANGES`."""

    probability: Probability = 0.0
    max_skew_s: Annotated[float, Field(ge=0.0, le=MAX_SKEW_S)] = 120.0


class ProviderFaults(_Strict):
    """The provider fails with one of ``classes`` (spec 4's taxonomy); the true class is the kind."""

    probability: Probability = 0.0
    classes: list[FailureClassName] = Field(default_factory=_default_failure_classes)


class DeployFaults(_Strict):
    """Between attempts a tool is renamed or removed (``kinds``).

    Range: any moment; processes keep the code they loaded (a registry is hydrated once), so only
    segments that start after the deploy see the new tool set."""

    probability: Probability = 0.0
    kinds: list[DeployKind] = Field(default_factory=_default_deploy_kinds)


LIBRARY_STORE_SLOW_S = 30.0
"""The longest commit stall of the library's store ranges (``StoreFaults.slow_s`` by default): the
quiet phase (``WorldModel.quiet_s``) was sized with stalls this long in mind."""


def quiet_phase_s(scenario: Scenario) -> float:
    """How long the quiet phase lasts: ``quiet_s``, plus the part of the longest possible commit stall
    beyond the library's 30 s. A stall that starts just before the faults heal holds its statement
    (and the worker) that long into the quiet phase, so without it a run whose recovery takes most of
    ``quiet_s`` (calls that outlive the lease, three requeues) is still in flight, under a live lease,
    when liveness is judged: a harness artifact, not a stranded run. Derived from the fault profile,
    which a counterexample file stores, so a replay ends where the run did; at the library's ranges it
    is ``quiet_s`` exactly."""
    return scenario.world.quiet_s + max(0.0, scenario.faults.store.slow_s[1] - LIBRARY_STORE_SLOW_S)


DEPLOYMENT_RANGES: dict[str, dict[str, object]] = {
    "clock_skew": {"max_skew_s": MAX_SKEW_S},
    "store": {"slow_s": (1.0, MAX_STORE_DELAY_S)},
}
"""The fault ranges of real deployments, per family, to lay over a scenario's faults
(:func:`deployment_faults`): clock skew up to an hour either way, commit stalls up to two leases."""


class FaultsModel(_Strict):
    audit: AuditFaults = AuditFaults()
    store: StoreFaults = StoreFaults()
    crash: CrashFaults = CrashFaults()
    slow: SlowFaults = SlowFaults()
    duplicate: DuplicateFaults = DuplicateFaults()
    dispatch: SimpleFaults = SimpleFaults()
    clock_skew: SkewFaults = SkewFaults()
    identity: SimpleFaults = SimpleFaults()
    cancel: SimpleFaults = SimpleFaults()
    provider: ProviderFaults = ProviderFaults()
    deploy: DeployFaults = DeployFaults()


class ScriptedFaultModel(_Strict):
    """A targeted fault: fire ``family``/``kind`` at the ``nth`` request matching the filters,
    or at the global request index ``at``."""

    family: FamilyName
    kind: str = ""
    at: Annotated[int, Field(ge=0, le=MAX_REQUEST_INDEX)] | None = None
    on: Literal["any", "read", "store", "event", "provider", "tool", "dispatch"] = "any"
    tool: str = ""
    transition: str = ""
    """A transition name or its prefix (``T13`` matches ``T13 requeueStale``)."""
    process: Literal["any", "worker", "interactive", "resume", "reaper", "client"] = "any"
    nth: Annotated[int, Field(ge=1, le=1_000_000)] = 1
    value: float = 0.0
    """What it means and its range depend on the family: :data:`FAULT_VALUES`."""

    @model_validator(mode="after")
    def _check_kind(self) -> ScriptedFaultModel:
        if self.kind and self.kind not in FAULT_KINDS[self.family]:
            raise ValueError(f"kind: must be one of: {choices(FAULT_KINDS[self.family], limit=80)}")
        problem = fault_value_problem(self.family, self.value)
        if problem is not None:
            raise ValueError(f"value: {problem}")
        if self.transition and not any(t.name.startswith(self.transition) for t in TRANSITIONS):
            names = [t.name.split()[0] for t in TRANSITIONS]
            raise ValueError(f"transition: {shown(self.transition)} names no transition; one of {choices(names)}")
        return self


class Scenario(_Strict):
    """A scenario: the world (workers, approvers, transport, phases), the tools, the runs and their
    scripts, and the fault profile per family. Read from TOML by :func:`scenarios.loader.load_scenario`
    (``leaselab.load_scenario``), which checks every field; ``leaselab scenarios`` lists the library."""

    name: Annotated[str, Field(min_length=1, max_length=80)]
    description: str = ""
    world: WorldModel = WorldModel()
    provider: ProviderModel = ProviderModel()
    tools: list[ToolModel] = Field(default_factory=list)
    runs: Annotated[list[RunGroupModel], Field(min_length=1)]
    """Required: a scenario without runs issues no request, and every invariant would hold over nothing."""
    faults: FaultsModel = FaultsModel()
    script: list[ScriptedFaultModel] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _has_runs(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("runs"):
            raise ValueError("runs: needs at least one [[runs]] table (with none, every invariant holds over nothing)")
        return data

    @model_validator(mode="after")
    def _check_names(self) -> Scenario:
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names):
            raise ValueError("tools: duplicate tool name")
        known = set(names)
        for i, group in enumerate(self.runs):
            for turn in group.script:
                for name in turn:
                    if name not in known:
                        raise ValueError(f"runs.{i}.script: unknown tool {shown(name)}; declare it in [[tools]]")
            for name in group.offered or []:
                if name not in known:
                    raise ValueError(f"runs.{i}.offered: unknown tool {shown(name)}; declare it in [[tools]]")
        for i, entry in enumerate(self.script):
            if entry.tool and entry.tool not in known:
                raise ValueError(f"script.{i}.tool: unknown tool {shown(entry.tool)}; declare it in [[tools]]")
        return self

    def with_faults(self, faults: FaultsModel) -> Scenario:
        return self.model_copy(update={"faults": faults})

    def with_transport(self, transport: Literal["async", "sync"]) -> Scenario:
        """This scenario on another transport (spec 5.2: Sync, the default, runs a wake-up inline)."""
        return self.model_copy(update={"world": self.world.model_copy(update={"transport": transport})})

    def at_deployment_ranges(self) -> Scenario:
        """This scenario with every family's range widened to :data:`DEPLOYMENT_RANGES`."""
        return self.with_faults(deployment_faults(self.faults))


def deployment_faults(faults: FaultsModel) -> FaultsModel:
    """``faults`` with the ranges of :data:`DEPLOYMENT_RANGES` (probabilities and kinds kept)."""
    data = faults.model_dump()
    for family, ranges in DEPLOYMENT_RANGES.items():
        data[family].update(ranges)
    return FaultsModel.model_validate(data)
