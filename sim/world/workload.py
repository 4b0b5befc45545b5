"""From a scenario to the runtime's inputs: the tool registry and the planned runs.

Arrival times are drawn from the simulation's random stream, in file order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from model.records import Registry, RunRequest, ToolCall, ToolSpec, Turn, TurnOutcome
from model.vocab import ToolEffect
from scenarios.schema import RunGroupModel, Scenario, ToolModel


@dataclass(frozen=True, slots=True)
class PlannedRun:
    uuid: str
    kind: str
    arrival_s: float
    request: RunRequest
    observer: bool


def tool_spec(tool: ToolModel) -> ToolSpec:
    effect = None if tool.effect == "undeclared" else ToolEffect(tool.effect)
    return ToolSpec(
        name=tool.name,
        effect=effect,
        remote=tool.remote,
        server_requires_approval=tool.server_requires_approval,
        approval_marker=tool.approval_marker,
        needs_input=tool.needs_input,
        deadline_s=tool.deadline_s,
    )


@dataclass(frozen=True, slots=True)
class Prepared:
    """What a scenario compiles to once: its registry and one request per run group.

    Cached per Scenario object (scenarios are frozen), so thousands of simulations of
    one scenario do not rebuild them.
    """

    scenario: Scenario
    registry: Registry
    requests: tuple[RunRequest, ...]


_PREPARED: dict[tuple[int, int], Prepared] = {}
_PREPARED_MAX = 64


def prepare(scenario: Scenario) -> Prepared:
    """Keyed on the tools and runs lists themselves, so a copy with other faults shares the entry."""
    key = (id(scenario.tools), id(scenario.runs))
    cached = _PREPARED.get(key)
    if cached is not None and cached.scenario.tools is scenario.tools and cached.scenario.runs is scenario.runs:
        return cached
    names = tuple(t.name for t in scenario.tools)
    prepared = Prepared(
        scenario,
        Registry(tuple(tool_spec(t) for t in scenario.tools)),
        tuple(run_request(group, names) for group in scenario.runs),
    )
    if len(_PREPARED) >= _PREPARED_MAX:
        _PREPARED.pop(next(iter(_PREPARED)))
    _PREPARED[key] = prepared
    return prepared


def registry(scenario: Scenario) -> Registry:
    return prepare(scenario).registry


def run_request(group: RunGroupModel, tool_names: tuple[str, ...]) -> RunRequest:
    turns = []
    for i, names in enumerate(group.script):
        outcome = TurnOutcome(group.outcomes[i]) if i < len(group.outcomes) else TurnOutcome.NORMAL
        calls = tuple(ToolCall(f"{i + 1}.{k}", name) for k, name in enumerate(names))
        turns.append(Turn(calls, outcome))
    offered = tuple(group.offered) if group.offered is not None else tool_names
    return RunRequest(tuple(turns), offered, group.max_iterations)


def plan_runs(scenario: Scenario, rng: random.Random) -> list[PlannedRun]:
    runs: list[PlannedRun] = []
    for group, request in zip(scenario.runs, prepare(scenario).requests, strict=True):
        lo, hi = group.arrival_s
        for _ in range(group.count):
            arrival = lo if hi == lo else lo + (hi - lo) * rng.random()
            runs.append(PlannedRun(f"run-{len(runs) + 1:03d}", group.kind, arrival, request, group.observer))
    return runs
