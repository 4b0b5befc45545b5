"""Benchmark script: time to each known defect's first counterexample, swarm against plain Hypothesis.

    .venv/bin/python benchmarks/bench_search.py [--seeds 5] [--budget-s 60] [--defect KB-n ...]

Prints the same JSON as ``leaselab bench --search --json`` (progress lines on stderr). The full
run takes up to seeds x defects x 2 x budget seconds; run it on an otherwise idle machine and
compare the ratios, not the absolute times.
"""

from __future__ import annotations

import argparse
import json
import sys

from model.errors import LeaselabError
from sim.bench.search import DEFAULT_BUDGET_S, DEFAULT_SEEDS, search_bench

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help="seeds per defect")
    parser.add_argument("--budget-s", type=float, default=DEFAULT_BUDGET_S, help="wall seconds per swarm search")
    parser.add_argument("--defect", action="append", help="only this defect (KB-n), repeatable")
    args = parser.parse_args()
    try:
        document = search_bench(
            args.defect, args.seeds, args.budget_s, progress=lambda line: print(line, file=sys.stderr)
        )
    except LeaselabError as error:
        sys.exit(f"bench_search: {error}")
    print(json.dumps(document, indent=2))
