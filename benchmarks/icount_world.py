"""Instructions per simulation (valgrind's callgrind), an old checkout against this one.

    .venv/bin/python benchmarks/icount_world.py /path/to/old/checkout [--default 20] [--single 200]

On a machine shared with other jobs, timings of a change worth a few percent drown in the noise
(``benchmarks/ab_world.py`` alternates trees and still moves by +-5%); the count of instructions
executed does not depend on the load, so it tells such a change's direction and size. Each figure is
the instructions of a process that builds and runs N simulations (head, seeds 0..N-1, collector
paused as ``simulate`` pauses it) minus those of one that only starts and loads the scenario, per
simulation: ``build+run`` of ``default`` and ``single_run``, and the whole unjudged ``simulate`` of
``default`` (with the collection the collector makes afterwards). ``PYTHONHASHSEED`` is fixed so
both trees iterate sets alike. Counts miss cache effects: confirm a change with ``ab_world.py``.
Needs ``valgrind`` (``apt-get install valgrind``); takes about a minute per tree.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
PHASES = (("default", "build+run"), ("default", "simulate"), ("single_run", "build+run"))


def child(workload: str, simulations: int, phase: str) -> None:
    """The process callgrind counts: load, then (unless ``phase`` is 'none') simulate."""
    from model.policy import resolve_policy
    from scenarios.loader import load_scenario
    from sim.world.simulate import _release, build_world, run_world, simulate

    scenario, policy = load_scenario(workload), resolve_policy("head", None)
    for seed in range(simulations if phase != "none" else 0):
        if phase == "simulate":
            simulate(scenario, policy, seed, judge=False)
            continue
        gc.disable()
        world = build_world(scenario, policy, seed)
        run_world(world)
        _release(world)
        gc.enable()


def instructions(tree: Path, workload: str, simulations: int, phase: str) -> int:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    command += [str(Path(__file__).resolve()), str(tree), "--child", workload, str(simulations), phase]
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"icount_world: no instruction count in valgrind's output for {tree}")
    return int(found.group(1))


def per_simulation(tree: Path, workload: str, simulations: int, phase: str) -> float:
    started = instructions(tree, workload, simulations, "none")
    return (instructions(tree, workload, simulations, phase) - started) / simulations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="the checkout to compare against (e.g. /work/main)")
    parser.add_argument("--default", type=int, default=20, help="default simulations per count")
    parser.add_argument("--single", type=int, default=200, help="single_run simulations per count")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        workload, simulations, phase = args.child
        child(workload, int(simulations), phase)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("icount_world: valgrind is not installed (apt-get install valgrind)")
    sizes = {"default": args.default, "single_run": args.single}
    print(f"{'':10s} {'phase':10s} {'old':>12s}    {'new':>12s}    ratio (instructions per simulation)")
    for workload, phase in PHASES:
        old, new = (per_simulation(tree.resolve(), workload, sizes[workload], phase) for tree in (args.old, HERE))
        print(f"{workload:10s} {phase:10s} {old:12,.0f} -> {new:12,.0f}    {new / old:.3f}")


if __name__ == "__main__":
    main()
