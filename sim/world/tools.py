"""The tool server and the external ledger: what a tool call physically does.

Answers ``InvokeTool``: spends the tool's latency, and for a tool that really writes records
the moment its side effect lands in the external world (a ``landing`` record of process
``world``, the ground truth every audit invariant compares with), which may come before a
crash of the caller. Keeps the deployed tool table (a ``deploy`` fault renames or removes a
tool; processes keep the code they loaded) and, under ``idempotency_keys``, the results the
server remembers per key. The runtime's registry and resolver are never consulted for what a
tool does: :func:`physical_effect` reads the scenario's definition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checks import history as H
from model.records import Registry, ToolResult, ToolSpec
from scenarios.schema import ToolModel
from sim.world.faults import Fault
from sim.world.latency import call_duration
from sim.world.recorder import INFO, INVOKE, OK
from sim.world.workload import registry

if TYPE_CHECKING:
    from sim.world.clocks import Proc
    from sim.world.interpreter import SimGen, World


def physical_effect(tool: ToolModel | None) -> str:
    """What a tool really does, from its definition in the scenario: an undeclared tool is
    read-only (spec 6); a name no loaded tool has is 'unknown' (nothing can run)."""
    if tool is None:
        return "unknown"
    return "read_only" if tool.effect == "undeclared" else tool.effect


class ToolServer:
    """Tool calls, the deployed table and the idempotency-key results of one world."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.env = world.env
        self.rng = world.rng
        self.recorder = world.recorder
        self.registry: Registry = registry(world.scenario)
        """The runtime's view of the tools, rehydrated by each context (a deploy replaces it)."""
        self.tools_by_name = {t.name: t for t in world.scenario.tools}
        self.deployed: dict[str, ToolModel] = dict(self.tools_by_name)
        """Ground truth: the tools physically deployed now (deploys rename or remove entries)."""
        self.results: dict[str, ToolResult] = {}
        self.executions = 0
        self.landings = 0
        """Landing records written so far (a simulation's ``landings`` stat, without a pass over its history)."""

    def true_effect(self, proc: Proc, tool: str) -> str:
        """The real effect of ``tool`` in ``proc``: the scenario's definition of the code the
        process loaded, independent of the runtime's registry and resolver."""
        tools = proc.tools if proc.tools is not None else self.deployed
        return physical_effect(tools.get(tool))

    def _is_remote(self, proc: Proc, tool: str) -> bool:
        spec = (proc.registry or self.registry).get(tool)
        return spec is not None and spec.remote

    def invoke(self, proc: Proc, request: Any, fault: Fault | None) -> SimGen:
        """``InvokeTool``: (result, None); the landing, if any, is recorded when it happens."""
        rec, env = self.recorder, self.env
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
        duration = call_duration(self.rng, model.latency_s if model is not None else (0.0, 0.0), fault)
        if fault is not None and fault.family == "slow":
            rec.fault("slow", fault.kind, proc.name, uuid, {"duration_s": duration})
        self.executions += 1
        execution = self.executions
        landed = true_effect not in ("read_only", "unknown")
        land_at = model.land_at if model is not None else 0.5
        if landed:
            until_landing = duration * land_at
            if not env.advance(until_landing):
                yield env.timeout(until_landing)
            self.landings += 1
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
            if not env.advance(rest):
                yield env.timeout(rest)
        else:
            if not env.advance(duration):
                yield env.timeout(duration)
            result = ToolResult(execution=execution)
        rec.add(proc.name, H.TOOL, uuid, OK, {"execution": execution, "landed": landed, "replayed": False})
        return result, None

    def deploy(self, fault: Fault) -> None:
        """``deploy``: rename or remove one tool between attempts (new contexts see the change)."""
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
