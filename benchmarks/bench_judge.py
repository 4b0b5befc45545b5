"""Judging cost per simulation: ``judge`` as ``simulate`` runs it (one pass, every verdict and
coverage property, right after the world recorded the history, so with the history's records still
in the processor's caches), ``judge_cold`` (the same over histories recorded earlier: every record
read from memory again), and phase by phase ``Index.of``, ``check_all`` and ``coverage`` (each of
the last two over an index runs its own pass: they are the functions a caller with an index uses).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_judge.py [--workload default] [--simulations 60]
        [--repeats 5]                 # one process: min over repeats of the mean per simulation
    benchmarks/bench_judge.py --compare OLD_TREE NEW_TREE [--rounds 5] [--workload W]
                                      # alternate OLD and NEW in subprocesses, min per phase, ratios

The histories are simulated once (unjudged) per process; only judging is timed, with the cyclic
collector paused as ``simulate`` pauses it. The machine is shared: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from typing import Any

from checks.fused import index_of


def measure(workload: str, simulations: int, repeats: int) -> dict[str, float]:
    from checks import check_all, coverage, judge
    from model.policy import resolve_policy
    from scenarios.loader import load_scenario
    from sim.world.simulate import build_world, run_world, simulate

    scenario = load_scenario(workload)
    policy = resolve_policy("head", None)
    histories = [simulate(scenario, "head", seed, judge=False).history for seed in range(simulations)]
    phases = ("judge", "judge_cold", "index", "check_all", "coverage")
    best = dict.fromkeys(phases, float("inf"))
    clock = time.perf_counter
    for _ in range(repeats):
        spent = dict.fromkeys(best, 0.0)
        gc.disable()
        try:
            for seed in range(simulations):
                world = build_world(scenario, policy, seed)
                run_world(world)
                t0 = clock()
                judge(world.recorder.history)
                spent["judge"] += clock() - t0
            t0 = clock()
            for history in histories:
                judge(history)
            spent["judge_cold"] = clock() - t0
            for history in histories:
                t0 = clock()
                ix = index_of(history)
                t1 = clock()
                check_all(ix)
                t2 = clock()
                coverage(ix)
                t3 = clock()
                spent["index"] += t1 - t0
                spent["check_all"] += t2 - t1
                spent["coverage"] += t3 - t2
        finally:
            gc.enable()
            gc.collect()
        for phase, total in spent.items():
            best[phase] = min(best[phase], total / simulations * 1e6)
    best["phases"] = best["index"] + best["check_all"] + best["coverage"]
    best["records"] = sum(len(h) for h in histories) / simulations
    return best


def compare(old: str, new: str, workload: str, simulations: int, rounds: int, repeats: int) -> None:
    results: dict[str, list[dict[str, float]]] = {old: [], new: []}
    for _ in range(rounds):
        for tree in (old, new):
            env = dict(os.environ, PYTHONPATH=tree)
            argv = [sys.executable, __file__, "--workload", workload, "--simulations", str(simulations)]
            out = subprocess.run(
                [*argv, "--repeats", str(repeats), "--json"], env=env, cwd=tree, check=True, capture_output=True
            )
            results[tree].append(json.loads(out.stdout))
    best = {tree: {k: min(r[k] for r in runs) for k in runs[0]} for tree, runs in results.items()}
    print(f"{workload}: {simulations} histories, {best[old]['records']:.0f} records each, min of {rounds} rounds")
    print(f"{'phase':<10} {'old us':>9} {'new us':>9} {'ratio':>7}")
    for phase in ("judge", "judge_cold", "index", "check_all", "coverage", "phases"):
        o, n = best[old][phase], best[new][phase]
        print(f"{phase:<10} {o:9.1f} {n:9.1f} {o / n:7.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="default")
    parser.add_argument("--simulations", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare, args.workload, args.simulations, args.rounds, args.repeats)
    else:
        result: Any = measure(args.workload, args.simulations, args.repeats)
        print(json.dumps(result) if args.json else "\n".join(f"{k}: {v:.1f}" for k, v in result.items()))
