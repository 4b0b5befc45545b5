"""Benchmark script: the world's throughput and memory on the standard workload.

    .venv/bin/python benchmarks/bench_world.py [simulations]

Prints the same JSON as ``leaselab bench --json``; run it on an otherwise idle machine
and compare ratios, not absolute times.
"""

from __future__ import annotations

import json
import sys

from sim.bench.world import world_bench

if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    print(json.dumps(world_bench(simulations=count).as_dict(), indent=2))
