"""The explorers by name, for the CLI and the property suite."""

from __future__ import annotations

from model.errors import LeaselabError
from sim.explore.base import Explorer
from sim.explore.swarm import SwarmExplorer

EXPLORERS = ("guided", "swarm", "hypothesis")


def explorer_named(name: str) -> Explorer:
    if name == "swarm":
        return SwarmExplorer()
    if name == "guided":
        from sim.explore.guided import GuidedExplorer

        guided: Explorer = GuidedExplorer()
        return guided
    if name == "hypothesis":
        from sim.explore.hypo import HypothesisExplorer

        explorer: Explorer = HypothesisExplorer()
        return explorer
    raise LeaselabError(f"unknown explorer '{name}'", field="--explorer", hint="valid: " + ", ".join(EXPLORERS))
