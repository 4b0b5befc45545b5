"""A/B timing of the judge as ``simulate`` runs it: an old checkout against this one, seed by seed.

    .venv/bin/python benchmarks/ab_judge.py /path/to/old/checkout [--workload default] [--seeds 40]
        [--rounds 5]

One worker process per tree (its own PYTHONPATH) simulates a seed with the cyclic collector paused,
as ``simulate`` does, and times ``judge`` on the history right after the world recorded it (the
records still in the processor's caches), then the pass alone (``run_pass`` with no machine) on a
second simulation of the seed. The coordinator hands each seed to both workers in turn, the order
alternating, so a change in the machine's load falls on both; each seed keeps its fastest round.
On a shared machine read the ratios; absolute times move with the load.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def serve(workload: str) -> None:
    """The worker: for each seed read from stdin, print the judge's and the pass's seconds."""
    from checks.catalog import judge
    from checks.fused import run_pass
    from model.policy import resolve_policy
    from scenarios.loader import load_scenario
    from sim.world.simulate import build_world, gc_paused, run_world

    scenario, policy, clock = load_scenario(workload), resolve_policy("head", None), time.perf_counter
    for line in sys.stdin:
        seed = int(line)
        timings = []
        for judging in (judge, run_pass):  # each right after its own fresh world, as simulate judges
            with gc_paused():
                world = build_world(scenario, policy, seed)
                run_world(world)
                start = clock()
                judging(world.recorder.history)
                timings.append(clock() - start)
            del world
        print(" ".join(map(str, timings)), flush=True)


def compare(old: str, workload: str, seeds: int, rounds: int) -> None:
    trees = (str(Path(old).resolve()), str(HERE))
    workers = {
        tree: subprocess.Popen(
            [sys.executable, __file__, "--serve", workload],
            cwd=tree,
            env=dict(os.environ, PYTHONPATH=tree),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for tree in trees
    }
    best = {tree: [[float("inf")] * 2 for _ in range(seeds)] for tree in trees}
    for round_no in range(rounds):
        for seed in range(seeds):
            for tree in trees if (seed + round_no) % 2 == 0 else reversed(trees):
                worker = workers[tree]
                assert worker.stdin is not None and worker.stdout is not None
                worker.stdin.write(f"{seed}\n")
                worker.stdin.flush()
                times = [float(t) for t in worker.stdout.readline().split()]
                best[tree][seed] = [min(a, b) for a, b in zip(best[tree][seed], times, strict=True)]
    for worker in workers.values():
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait()
    print(f"{workload}: {seeds} seeds, fastest of {rounds} rounds per seed (us per simulation)")
    for column, phase in enumerate(("judge", "pass")):
        o, n = (sum(b[column] for b in best[tree]) / seeds * 1e6 for tree in trees)
        print(f"{phase:<6} old {o:8.1f}  new {n:8.1f}  ratio {o / n:5.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", nargs="?")
    parser.add_argument("--workload", default="default")
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--serve", metavar="WORKLOAD")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
    elif args.old:
        compare(args.old, args.workload, args.seeds, args.rounds)
    else:
        parser.error("name the old checkout")
