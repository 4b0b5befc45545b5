"""Benchmark script: the multilevel splitting estimate of a rare mechanism's rate against a long plain run.

    .venv/bin/python benchmarks/rare_rates.py [--mechanism F-15] [--store 0.08] [--plain 20000]
        [--roots 1000] [--splits 4]

The case: ``default`` at deployment ranges under ``head``, every fault family off but ``store`` at the
given probability (half of it slow): a fixed profile, so the plain process is one process. The plain run
counts the simulations that show the mechanism (seeds 10,000,000 on; Wilson 95% interval); the estimate
(:func:`sim.explore.splitting.estimate_chain`, roots from seed 0) splits at each step of the mechanism's
chain. Prints one JSON document: both rates, their intervals, and what each cost in simulations and
seconds. The two draw from disjoint seeds, so they are independent.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

from reports.stats import wilson
from scenarios.loader import load_scenario
from scenarios.schema import FaultsModel, Scenario
from sim.explore.splitting import estimate_chain, shows
from sim.world.simulate import simulate

PLAIN_SEED = 10_000_000


def case(store: float) -> Scenario:
    """``default`` at deployment ranges with only ``store`` faults, at ``store`` (half of them slow)."""
    scenario = load_scenario("default").at_deployment_ranges()
    data: dict[str, Any] = scenario.faults.model_dump()
    for table in data.values():
        for key in ("probability", "slow_probability"):
            if key in table:
                table[key] = 0.0
    data["store"]["probability"] = store
    data["store"]["slow_probability"] = store / 2
    data["audit"]["outages"] = []
    return scenario.with_faults(FaultsModel.model_validate(data))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mechanism", default="F-15")
    parser.add_argument("--invariant", default="settles_by_owner")
    parser.add_argument("--store", type=float, default=0.08)
    parser.add_argument("--plain", type=int, default=20_000)
    parser.add_argument("--roots", type=int, default=1_000)
    parser.add_argument("--splits", type=int, default=4)
    args = parser.parse_args()
    scenario = case(args.store)
    started, cpu = time.perf_counter(), time.process_time()
    found = estimate_chain(
        scenario, "head", args.mechanism, roots=args.roots, splits=args.splits, invariants=[args.invariant]
    )
    estimate_s, estimate_cpu = time.perf_counter() - started, time.process_time() - cpu
    started, cpu = time.perf_counter(), time.process_time()
    hits = sum(
        shows(simulate(scenario, "head", PLAIN_SEED + i), args.mechanism, [args.invariant]) for i in range(args.plain)
    )
    plain_s, plain_cpu = time.perf_counter() - started, time.process_time() - cpu
    low, high = wilson(hits, args.plain)
    print(
        json.dumps(
            {
                "case": f"default at deployment ranges, head, store {args.store} (half slow), nothing else",
                "mechanism": args.mechanism,
                "estimate": {**found.document(), "seconds": round(estimate_s, 1), "cpu_s": round(estimate_cpu, 1)},
                "plain": {
                    "simulations": args.plain,
                    "met": hits,
                    "rate": hits / args.plain,
                    "interval_95": [low, high],
                    "seconds": round(plain_s, 1),
                    "cpu_s": round(plain_cpu, 1),
                },
                "load_average": [round(x, 2) for x in os.getloadavg()],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
