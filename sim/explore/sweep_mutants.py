"""The sweep-only score of the code mutants: would the head sweep alone, with no unit test and no
target chosen for the mutant, have noticed it?

For each code mutant the head sweep of the property suite runs with the mutant in place: the swarm's
draws on every library scenario, every fault family allowed, the same seed and budget (a tenth on a
slow scenario). The mutant is *flagged* when a simulation under faults shows a violation that no
registered finding or recorded non-guarantee explains (an UNREGISTERED violation: the suite's
``test_head_has_no_unregistered_violation`` would fail on it). The flag notes whether the invariant
that caught it is an outcome oracle or an ADR promise (:data:`ORACLES`, by their tags), so the report
shows what those oracles add to the sweep. Unlike :func:`sim.explore.mutants.hunt_code`, nothing is
chosen for the mutant and a registered mechanism never counts.

Patching is in-process (see :mod:`sim.explore.code_mutants`); knows the explorers and the register.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import register
from checks.catalog import tagged
from checks.judgement import ADR_PROMISE, OUTCOME_ORACLE
from scenarios.families import FAMILIES
from scenarios.loader import library_names
from sim.explore.base import Clock, Target
from sim.explore.code_mutants import CodeMutant, applied
from sim.explore.swarm import swarm_batch
from sim.world.simulate import SimulationResult

ORACLES = tagged(OUTCOME_ORACLE) | tagged(ADR_PROMISE)
"""The invariants that judge what the runtime tells its callers or an ADR promise no other states."""

SWEEP_SEED = 5
SWEEP_SIMULATIONS = 25
"""Per library scenario: the head sweep of tests/properties/test_head_has_no_unregistered_violation.py."""
SLOW_SCENARIOS = frozenset({"reaper_races_heartbeat"})


@dataclass(frozen=True)
class SweepFlag:
    """The first unregistered violation the head sweep met under a code mutant."""

    mutant: str
    invariant: str
    scenario: str
    simulations: int
    """Simulations of the sweep up to and including the flagging one."""
    through_oracle: bool
    """Whether the invariant is one of the :data:`ORACLES`."""

    def document(self) -> dict[str, object]:
        return {
            "mutant": self.mutant,
            "invariant": self.invariant,
            "scenario": self.scenario,
            "simulations": self.simulations,
            "through_oracle": self.through_oracle,
        }


def unexplained(result: SimulationResult) -> list[str]:
    """The violated invariants of ``result`` that no registered finding or non-guarantee recognises."""
    return register.unexplained(result.indexed(), result.verdicts) if result.violations else []


def sweep_flag(
    mutant: CodeMutant,
    simulations: int = SWEEP_SIMULATIONS,
    seed: int = SWEEP_SEED,
    scenarios: Sequence[str] | None = None,
    deadline_s: float | None = None,
) -> tuple[SweepFlag | None, int]:
    """Run the head sweep with ``mutant`` applied; its first unregistered violation under faults, and
    the simulations spent. A new invariant is preferred when one simulation violates several."""
    clock = Clock()
    spent = 0
    with applied(mutant):
        for scenario in scenarios or library_names():
            budget = max(1, simulations // 10) if scenario in SLOW_SCENARIOS else simulations
            remaining = None if deadline_s is None else max(0.0, deadline_s - clock.elapsed())
            for draw in swarm_batch(Target(scenario, "head", {}, tuple(FAMILIES)), budget, seed, remaining):
                spent += 1
                if not any(draw.result.faults_fired.values()):
                    continue
                found = unexplained(draw.result)
                if found:
                    new = [name for name in found if name in ORACLES]
                    name = (new or found)[0]
                    return SweepFlag(mutant.name, name, scenario, spent, name in ORACLES), spent
    return None, spent


__all__ = ["ORACLES", "SWEEP_SEED", "SWEEP_SIMULATIONS", "SweepFlag", "sweep_flag"]
