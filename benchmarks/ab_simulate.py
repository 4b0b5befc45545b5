"""A/B timing of whole judged simulations: an old checkout against this one, in one run.

    .venv/bin/python benchmarks/ab_simulate.py /path/to/old/checkout [--rounds 6] [--default 40] [--single 400]

``simulate`` is the one entry both trees have whatever their module layout (the judge moved between
packages; ``ab_judge.py`` needs the same layout on both sides). Fresh subprocesses alternate between
the two trees, each with its own PYTHONPATH, and each round times ``simulate`` (judged, as a sweep runs
it) on ``default`` and ``single_run`` under head in CPU seconds; the fastest round of each tree counts.
On a shared machine read the ratios; absolute times move with the load.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def measure(default: int, single: int) -> dict[str, float]:
    """CPU microseconds per judged simulation of each workload (seeds 0..N-1)."""
    from sim.world.simulate import simulate

    out = {}
    for workload, count in (("default", default), ("single_run", single)):
        simulate(workload, "head", 0)  # warm the imports and caches
        started = time.process_time()
        for seed in range(count):
            simulate(workload, "head", seed)
        out[workload] = (time.process_time() - started) / count * 1e6
    return out


def run_tree(tree: Path, default: int, single: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    # The measuring function's own source, so that the child imports nothing of this tree.
    code = "import json, time\n" + inspect.getsource(measure) + f"\nprint(json.dumps(measure({default}, {single})))\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--default", type=int, default=40)
    parser.add_argument("--single", type=int, default=400)
    args = parser.parse_args()
    trees = {"old": args.old.resolve(), "new": HERE}
    best: dict[str, dict[str, float]] = {}
    for round_no in range(args.rounds):
        order = ("old", "new") if round_no % 2 == 0 else ("new", "old")
        for name in order:
            figures = run_tree(trees[name], args.default, args.single)
            for workload, us in figures.items():
                best.setdefault(name, {})[workload] = min(us, best.get(name, {}).get(workload, us))
    for workload in ("default", "single_run"):
        old, new = best["old"][workload], best["new"][workload]
        print(f"{workload}: old {old:,.0f} us, new {new:,.0f} us per judged simulation; old/new {old / new:.3f}")


if __name__ == "__main__":
    main()
