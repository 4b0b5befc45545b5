"""Wall time of ``leaselab conform`` per engine at the default case count.

Usage: python benchmarks/bench_conform.py [--runtime-src PATH] [--engines sqlite,mariadb,postgres]
Targets: SQLite alone under 60 s, all three engines under 180 s on 2 cores.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from sim.conform import runner

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime-src", type=Path, default=ROOT.parent / "shared" / "reference" / "nr-llm")
    parser.add_argument("--engines", default="sqlite,mariadb,postgres")
    parser.add_argument("--examples", type=int, default=200)
    args = parser.parse_args()
    total = 0.0
    for engine in args.engines.split(","):
        start = time.perf_counter()
        results = runner.run(runner.Options(args.runtime_src.resolve(), (engine,), args.examples))
        took = time.perf_counter() - start
        total += took
        cases = sum(r.cases for r in results)
        print(f"{engine:8} {took:6.1f} s  {cases} cases  {sum(r.unexplained for r in results)} unexplained")
    print(f"{'total':8} {total:6.1f} s")


if __name__ == "__main__":
    main()
