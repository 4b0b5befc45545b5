"""Profile script: where one simulation's time goes, as a flat cProfile table and a call tree.

    .venv/bin/python benchmarks/profile_world.py [--workload default] [--simulations 200] [--top 25]
        [--tree]          # also a pyinstrument call tree (pyinstrument is in the dev extra)

Runs ``simulate(workload, "head", seed)`` for seeds 0..N-1 (judged, as the sweeps run it) and
prints the top functions by own time and by cumulative time. Numbers are for finding costs, not
for comparing runs: profiling inflates every Python call alike.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats

from scenarios.loader import load_scenario
from sim.world.simulate import simulate


def run(workload: str, simulations: int) -> None:
    scenario = load_scenario(workload)
    for seed in range(simulations):
        simulate(scenario, "head", seed)


def flat(workload: str, simulations: int, top: int) -> str:
    simulate(load_scenario(workload), "head", 0)  # warm caches outside the profile
    profiler = cProfile.Profile()
    profiler.enable()
    run(workload, simulations)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def tree(workload: str, simulations: int) -> str:
    from pyinstrument import Profiler  # dev extra only

    simulate(load_scenario(workload), "head", 0)
    profiler = Profiler(interval=0.0002)
    profiler.start()
    run(workload, simulations)
    profiler.stop()
    return str(profiler.output_text(unicode=False, color=False, show_all=False))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="default")
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--tree", action="store_true", help="print a pyinstrument call tree too")
    args = parser.parse_args()
    print(flat(args.workload, args.simulations, args.top))
    if args.tree:
        print(tree(args.workload, args.simulations))
