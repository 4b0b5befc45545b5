"""A/B timing of one simulation's phases: an old checkout against this one, in one run.

    .venv/bin/python benchmarks/ab_world.py /path/to/old/checkout [--rounds 6] [--default 40] [--single 400]

Alternates the two trees in fresh subprocesses (each with its own PYTHONPATH) for several rounds
and keeps the fastest round of each phase: build_world and run_world per simulation of ``default``
and ``single_run`` (head, seeds 0..N-1, the cyclic collector paused as ``simulate`` does), and
the whole unjudged ``simulate`` (the world's final records, stats and release, and the collection
the collector makes of what the simulation left once it is back on: the world's full cost). On a
shared machine read the ratios; absolute times move with the load.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def measure(workload: str, simulations: int, repeats: int) -> tuple[float, float, float]:
    """(build_world, run_world, unjudged simulate) microseconds per simulation, the best of
    ``repeats`` passes each."""
    from model.policy import resolve_policy
    from scenarios.loader import load_scenario

    try:
        from sim.world.simulate import _release, build_world, run_world, simulate
    except ModuleNotFoundError:  # a checkout from before the stages got their folders (b4fcf59 and older)
        from sim.simulate import _release, build_world, run_world, simulate  # type: ignore[no-redef]

    scenario, policy = load_scenario(workload), resolve_policy("head", None)
    for seed in range(3):
        world = build_world(scenario, policy, seed)
        run_world(world)
        _release(world)
    best_build = best_run = float("inf")
    for _ in range(repeats):
        build = run = 0.0
        gc.collect()
        gc.disable()
        for seed in range(simulations):
            start = time.perf_counter()
            world = build_world(scenario, policy, seed)
            built = time.perf_counter()
            run_world(world)
            ran = time.perf_counter()
            _release(world)
            build, run = build + built - start, run + ran - built
        gc.enable()
        best_build, best_run = min(best_build, build / simulations * 1e6), min(best_run, run / simulations * 1e6)
    best_whole = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        for seed in range(simulations):
            simulate(scenario, policy, seed, judge=False)
        best_whole = min(best_whole, (time.perf_counter() - start) / simulations * 1e6)
    return best_build, best_run, best_whole


def child(default: int, single: int, repeats: int) -> None:
    figures = {"default": measure("default", default, repeats), "single_run": measure("single_run", single, repeats)}
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="the checkout to compare against (e.g. /work/main)")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--default", type=int, default=40, help="default simulations per pass")
    parser.add_argument("--single", type=int, default=400, help="single_run simulations per pass")
    parser.add_argument("--repeats", type=int, default=4, help="passes per round")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.default, args.single, args.repeats)
        return
    trees = {"old": args.old.resolve(), "new": HERE}
    results: dict[str, list[dict[str, list[float]]]] = {"old": [], "new": []}
    print(f"{'':10s} {'phase':12s} {'old':>9s}    {'new':>9s}    ratio (us per simulation, best round)")
    for _ in range(args.rounds):
        for name, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree)}
            command = [sys.executable, str(Path(__file__).resolve()), str(args.old), "--child"]
            command += ["--default", str(args.default), "--single", str(args.single), "--repeats", str(args.repeats)]
            done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=True)
            results[name].append(json.loads(done.stdout))
    for workload in ("default", "single_run"):
        best = {name: [min(r[workload][i] for r in runs) for i in (0, 1, 2)] for name, runs in results.items()}
        for i, phase in enumerate(("build_world", "run_world", "simulate")):
            old, new = best["old"][i], best["new"][i]
            print(f"{workload:10s} {phase:12s} {old:9.1f} -> {new:9.1f}    {new / old:.3f}")
        old_sum, new_sum = best["old"][0] + best["old"][1], best["new"][0] + best["new"][1]
        print(f"{workload:10s} {'build+run':12s} {old_sum:9.1f} -> {new_sum:9.1f}    {new_sum / old_sum:.3f}")


if __name__ == "__main__":
    main()
