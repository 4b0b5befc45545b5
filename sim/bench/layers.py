"""Where a simulation's time goes, by layer: the runtime model, the world, simpy, the judge.

The speed targets are a time budget per simulation. Whether a budget can be met at all
depends on what no optimisation of the harness can remove: the reference runtime's own code (the
model is the thing under test; it must run, request by request) and simpy's cost per event. This
profiles a batch of simulations with cProfile, attributes every function's own time to the layer
its file belongs to (a builtin's time goes to the layers of its callers, in proportion to the
calls each made), and turns the shares into microseconds per simulation with the unprofiled time
measured by the bench. The profiler inflates small calls, so the shares are estimates; they agree
within a percent with timing the runtime's generators directly (``PROFILE.md``).

It knows only the phases of ``simulate`` (build, run, judge), never the CLI.
"""

from __future__ import annotations

import cProfile
import pstats
import time
from collections import Counter
from pathlib import Path
from typing import Any

import simpy

from checks import judge
from model.policy import resolve_policy
from scenarios.loader import load_scenario
from sim.world.simulate import build_world, gc_paused, run_world

LAYERS = ("runtime", "world", "simpy", "judge", "other")
"""runtime: ``model/`` outside the invariants (the reference runtime); world: ``sim/``; simpy;
judge: ``checks/`` (index, checkers, coverage); other: the rest (scenario objects,
the standard library)."""


_ROOT = Path(__file__).resolve().parents[2]
_SIMPY = Path(simpy.__file__).resolve().parent


def layer_of(filename: str, root: Path = _ROOT, simpy_dir: Path = _SIMPY) -> str:
    """The layer of a source file, by where it lives: this project's packages, or simpy's."""
    path = Path(filename)
    if path.is_relative_to(simpy_dir):
        return "simpy"
    if not path.is_relative_to(root):
        return "other"
    parts = path.relative_to(root).parts
    if parts == ("checks", "history.py"):
        return "world"  # the record format: the world's recorder writes every record with it
    return {"model": "runtime", "checks": "judge", "sim": "world"}.get(parts[0], "other")


def _is_builtin(filename: str) -> bool:
    return filename == "~" or filename.startswith("<")


def layer_shares(stats: pstats.Stats) -> dict[str, float]:
    """Each layer's share of the profiled own time; builtins are charged to their callers' layers."""
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    own: Counter[str] = Counter()
    for (filename, _line, _name), (_cc, _nc, tottime, _ct, callers) in table.items():
        if not _is_builtin(filename):
            own[layer_of(filename)] += tottime
            continue
        calls = {caller: entry[0] for caller, entry in callers.items()}
        total_calls = sum(calls.values())
        if not total_calls:
            own["other"] += tottime
            continue
        for (caller_file, _l, _n), count in calls.items():
            caller_layer = "other" if _is_builtin(caller_file) else layer_of(caller_file)
            own[caller_layer] += tottime * count / total_calls
    total = sum(own.values()) or 1.0
    return {layer: round(own[layer] / total, 4) for layer in LAYERS}


def profile_layers(workload: str, simulations: int) -> dict[str, float]:
    """Shares of each layer in ``simulations`` judged simulations of ``workload`` under head."""
    scenario = load_scenario(workload)
    policy = resolve_policy("head", None)
    profiler = cProfile.Profile(time.process_time)  # CPU time: a shared machine's waits are no layer's
    for seed in range(simulations):
        with gc_paused():
            world = build_world(scenario, policy, seed)
            profiler.enable()
            run_world(world)
            judge(world.recorder.history)  # as simulate() judges: one pass, every verdict and coverage
            profiler.disable()
    return layer_shares(pstats.Stats(profiler))


def layer_budget(workload: str, simulations: int, us_per_simulation: float, budget_us: float) -> dict[str, Any]:
    """The layers' shares as microseconds of one simulation, next to a target's time budget."""
    shares = profile_layers(workload, simulations)
    per_layer = {layer: round(share * us_per_simulation, 1) for layer, share in shares.items()}
    return {
        "workload": workload,
        "profiled_simulations": simulations,
        "us_per_simulation": round(us_per_simulation, 1),
        "shares": shares,
        "us_per_layer": per_layer,
        "target_budget_us": round(budget_us, 1),
        "runtime_plus_simpy_us": round(per_layer["runtime"] + per_layer["simpy"], 1),
        "runtime_plus_simpy_share_of_budget": round((per_layer["runtime"] + per_layer["simpy"]) / budget_us, 3),
        "world_plus_judge_us": round(per_layer["world"] + per_layer["judge"], 1),
        "world_plus_judge_over_runtime_plus_simpy": round(
            (per_layer["world"] + per_layer["judge"]) / max(per_layer["runtime"] + per_layer["simpy"], 1e-9), 2
        ),
    }
