"""Fault intensity and tempo: scale a scenario's fault probabilities, or its call latencies.

Intensity 0 turns every probabilistic fault off (targeted faults stay); 1 is the
scenario as written; probabilities are capped at 1. A :class:`Tempo` scales the provider
and tool latencies and may replace the statement latency.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scenarios.schema import FaultsModel, Scenario

_PROBABILITY_KEYS = ("probability", "slow_probability")


def _scaled(table: dict[str, Any], factor: float) -> dict[str, Any]:
    return {k: min(1.0, v * factor) if k in _PROBABILITY_KEYS else v for k, v in table.items()}


def scale_faults(scenario: Scenario, factor: float) -> Scenario:
    data = scenario.faults.model_dump()
    scaled = {family: _scaled(table, factor) for family, table in data.items()}
    if factor == 0:
        scaled["audit"]["outages"] = []
    return scenario.with_faults(FaultsModel.model_validate(scaled))


@dataclass(frozen=True, slots=True)
class Tempo:
    """How fast the world's calls run, relative to the scenario as written.

    ``latency_factor`` scales every provider and tool latency range; ``store_latency_s``, when
    set, replaces the statement latency. Timing decides which interleavings exist at all (two
    renewals in one wall-clock second, a call outliving its lease), so the swarm explorer draws a
    tempo with each profile, and a counterexample records the tempo it needs to replay.
    """

    latency_factor: float = 1.0
    store_latency_s: float | None = None

    def document(self) -> dict[str, float]:
        doc = {"latency_factor": self.latency_factor}
        if self.store_latency_s is not None:
            doc["store_latency_s"] = self.store_latency_s
        return doc


def with_tempo(scenario: Scenario, tempo: Tempo | None) -> Scenario:
    """``scenario`` with its call latencies scaled and its statement latency replaced (None: as is)."""
    if tempo is None or tempo == Tempo():
        return scenario
    factor = tempo.latency_factor
    data = scenario.model_dump()
    data["provider"]["latency_s"] = [v * factor for v in data["provider"]["latency_s"]]
    for tool in data["tools"]:
        tool["latency_s"] = [v * factor for v in tool["latency_s"]]
    if tempo.store_latency_s is not None:
        data["world"]["store_latency_s"] = tempo.store_latency_s
    return Scenario.model_validate(data)
