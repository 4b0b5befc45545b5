"""leaselab's public API: what notebooks and users call (``import leaselab``).

A thin face over the layers: it re-exports, it holds no logic. Everything not listed
in ``__all__`` is internal.

    import leaselab
    result = leaselab.simulate("default", "head", seed=7)
    result.violations, result.digest
    print("\\n".join(leaselab.timeline(result.history)))
"""

from __future__ import annotations

from model.invariants import COVERAGE, INVARIANTS, Validity, Verdict, check_all, coverage
from model.policy import FLAG_DOCS, PRESETS, Policy, preset, resolve_policy
from reports.timeline import render as timeline
from scenarios.known_defects import KNOWN_DEFECTS, KnownDefect
from scenarios.loader import library, load_scenario
from scenarios.schema import Scenario
from scenarios.script import Fault
from sim.explore.base import Budget, ExploreReport, Target
from sim.explore.causality import curve as causality_curve
from sim.explore.counterexample import Counterexample
from sim.explore.counterexample import read as read_counterexample
from sim.explore.counterexample import write as write_counterexample
from sim.explore.exhaustive import ExhaustiveExplorer
from sim.explore.hypo import HypothesisExplorer
from sim.explore.swarm import SwarmExplorer
from sim.review.builtin import builtin_review
from sim.sweep.config import SweepConfig, load_config
from sim.sweep.engine import SweepPlan, run_sweep
from sim.sweep.job import load, sweep
from sim.world.simulate import SimulationResult, simulate

__all__ = [
    "COVERAGE",
    "FLAG_DOCS",
    "INVARIANTS",
    "KNOWN_DEFECTS",
    "PRESETS",
    "Budget",
    "Counterexample",
    "ExhaustiveExplorer",
    "ExploreReport",
    "Fault",
    "HypothesisExplorer",
    "KnownDefect",
    "Policy",
    "Scenario",
    "SimulationResult",
    "SwarmExplorer",
    "SweepConfig",
    "SweepPlan",
    "Target",
    "Validity",
    "Verdict",
    "builtin_review",
    "causality_curve",
    "check_all",
    "coverage",
    "library",
    "load",
    "load_config",
    "load_scenario",
    "preset",
    "read_counterexample",
    "resolve_policy",
    "run_sweep",
    "simulate",
    "sweep",
    "timeline",
    "write_counterexample",
]
