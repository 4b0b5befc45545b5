"""leaselab's public API: what notebooks and users call (``import leaselab``).

A thin face over the layers: it re-exports, it holds no logic. Everything not listed
in ``__all__`` is internal.

    import leaselab
    result = leaselab.simulate("default", "head", seed=7)
    result.violations, result.digest
    print("\\n".join(leaselab.timeline(result.history)))

``leaselab.__version__`` is the installed package's version (``leaselab --version`` prints it).

Names are imported on first use (PEP 562 ``__getattr__``): ``import leaselab`` and the CLI's
``--help`` must not pay for pandas, matplotlib, pyarrow and simpy before a command needs them.
Type checkers read the ``TYPE_CHECKING`` imports below, so ``leaselab.simulate`` is typed as
before; ``tests/leaselab/test_public_api.py`` checks that the two lists agree.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from checks import COVERAGE, INVARIANTS, Validity, Verdict, check_all, coverage
    from leaselab.files import read_counterexample, write_counterexample
    from model.policy import FLAG_DOCS, PRESETS, Policy, preset, resolve_policy
    from register.known_defects import KNOWN_DEFECTS, KnownDefect
    from reports.timeline import render as timeline
    from scenarios.loader import library, load_scenario
    from scenarios.schema import Scenario
    from scenarios.script import Fault
    from sim.explore.base import Budget, ExploreReport, Target
    from sim.explore.causality import curve as causality_curve
    from sim.explore.counterexample import Counterexample
    from sim.explore.exhaustive import ExhaustiveExplorer
    from sim.explore.hypo import HypothesisExplorer
    from sim.explore.swarm import SwarmExplorer
    from sim.review.builtin import builtin_review
    from sim.sweep.config import SweepConfig, load_config
    from sim.sweep.engine import SweepPlan, run_sweep
    from sim.sweep.job import load, sweep
    from sim.world.simulate import SimulationResult, simulate

_EXPORTS: dict[str, tuple[str, str]] = {
    "COVERAGE": ("checks", "COVERAGE"),
    "INVARIANTS": ("checks", "INVARIANTS"),
    "Validity": ("checks", "Validity"),
    "Verdict": ("checks", "Verdict"),
    "check_all": ("checks", "check_all"),
    "coverage": ("checks", "coverage"),
    "FLAG_DOCS": ("model.policy", "FLAG_DOCS"),
    "PRESETS": ("model.policy", "PRESETS"),
    "Policy": ("model.policy", "Policy"),
    "preset": ("model.policy", "preset"),
    "resolve_policy": ("model.policy", "resolve_policy"),
    "timeline": ("reports.timeline", "render"),
    "KNOWN_DEFECTS": ("register.known_defects", "KNOWN_DEFECTS"),
    "KnownDefect": ("register.known_defects", "KnownDefect"),
    "library": ("scenarios.loader", "library"),
    "load_scenario": ("scenarios.loader", "load_scenario"),
    "Scenario": ("scenarios.schema", "Scenario"),
    "Fault": ("scenarios.script", "Fault"),
    "Budget": ("sim.explore.base", "Budget"),
    "ExploreReport": ("sim.explore.base", "ExploreReport"),
    "Target": ("sim.explore.base", "Target"),
    "causality_curve": ("sim.explore.causality", "curve"),
    "Counterexample": ("sim.explore.counterexample", "Counterexample"),
    "read_counterexample": ("leaselab.files", "read_counterexample"),
    "write_counterexample": ("leaselab.files", "write_counterexample"),
    "ExhaustiveExplorer": ("sim.explore.exhaustive", "ExhaustiveExplorer"),
    "HypothesisExplorer": ("sim.explore.hypo", "HypothesisExplorer"),
    "SwarmExplorer": ("sim.explore.swarm", "SwarmExplorer"),
    "builtin_review": ("sim.review.builtin", "builtin_review"),
    "SweepConfig": ("sim.sweep.config", "SweepConfig"),
    "load_config": ("sim.sweep.config", "load_config"),
    "SweepPlan": ("sim.sweep.engine", "SweepPlan"),
    "run_sweep": ("sim.sweep.engine", "run_sweep"),
    "load": ("sim.sweep.job", "load"),
    "sweep": ("sim.sweep.job", "sweep"),
    "SimulationResult": ("sim.world.simulate", "SimulationResult"),
    "simulate": ("sim.world.simulate", "simulate"),
}
"""Public name -> (module, attribute): where each name of ``__all__`` lives."""

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


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it (later lookups skip this function)."""
    if name == "__version__":
        from importlib.metadata import version

        globals()[name] = value = version("leaselab")
        return value
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'leaselab' has no attribute '{name}'") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names (``__all__``) and ``__version__``: not the module's own machinery."""
    return sorted([*__all__, "__version__"])
