"""Fault intensity: scale every probability of a scenario's fault profile by one factor.

Intensity 0 turns every probabilistic fault off (targeted faults stay); 1 is the
scenario as written; probabilities are capped at 1.
"""

from __future__ import annotations

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
