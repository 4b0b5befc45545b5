"""Benchmark script: sweep scaling (1 vs 2 local workers), Dask overhead and coordinator memory.

    .venv/bin/python benchmarks/bench_sweep.py [--simulations 4000] [--memory-simulations 200000] [--no-dask]

Prints the same JSON as ``leaselab bench --sweep --json`` (progress lines on stderr). The memory
sweep of 200,000 simulations takes minutes: run it on an otherwise idle machine and read the
ratios (efficiency, overhead, growth per 1,000 tasks), not the absolute times.
"""

from __future__ import annotations

import argparse
import json
import sys

from sim.bench.sweep import sweep_bench

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=4000, help="simulations per scaling / Dask measurement")
    parser.add_argument("--memory-simulations", type=int, default=200_000, help="simulations of the memory sweep")
    parser.add_argument("--seeds-per-task", type=int, default=250, help="simulations per shard (scaling, Dask)")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask comparison")
    args = parser.parse_args()
    document = sweep_bench(
        args.simulations,
        args.memory_simulations,
        args.seeds_per_task,
        dask=not args.no_dask,
        progress=lambda line: print(line, file=sys.stderr),
    )
    print(json.dumps(document, indent=2))
