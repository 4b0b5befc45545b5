"""Triage of head at deployment (or library) fault ranges: every violation the swarm meets, by mechanism.

    .venv/bin/python -m benchmarks.triage_ranges                       # seeds 0-3 and 5, 500 draws per scenario
    .venv/bin/python -m benchmarks.triage_ranges --seeds 5 --draws 300 --jsonl /tmp/triage.jsonl
    .venv/bin/python -m benchmarks.triage_ranges --ranges library --transport sync
    .venv/bin/python -m benchmarks.triage_ranges --search --jsonl /tmp/search.jsonl   # the >= 200,000 job

``--search`` is the search the report's "every failure explained" is checked at, at a user's scale: seeds
100-107 (``SEARCH_SEEDS``), 1,000 draws per scenario and seed, every library scenario at deployment
ranges on both transports: 259,200 simulations (``planned``), about 10 CPU minutes; the nightly suite runs
it in chunks (``tests/properties/test_deployment_search.py``).

The swarm draws of the head sweep (``swarm_batch``: every fault family, each draw a fault profile and
a tempo) on every library scenario widened with ``Scenario.at_deployment_ranges()`` (``--ranges
library``: the library's own ranges, the head sweep test's), on the scenario's own transport or, with
``--transport sync``, on the Sync transport (spec 5.2: a wake-up runs inline, nested in the dispatching
call); a fifth of the draws on ``reaper_races_heartbeat``, whose simulations cost 20 times more.
Each violation is named by its mechanism (:func:`register.mechanism.mechanism_of`: the
finding or non-guarantee that explains it, or the shape of an unexplained witness). Prints the counts
per invariant and mechanism and, for every unexplained one, where to find it (scenario, seed, draw);
exit 1 if any is unexplained. This is how register/entries/README.md's triage figures were measured.
Knows the explorers' swarm draws and the register.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from typing import Any

from checks.fused import index_of
from register.mechanism import mechanism_of
from scenarios.families import FAMILIES
from scenarios.loader import library_names, load_scenario
from scenarios.schema import Scenario
from sim.explore.base import Target
from sim.explore.mutants import swarm_batch

SLOW_SCENARIOS = frozenset({"reaper_races_heartbeat"})
TRANSPORTS = ("own", "sync")
SEARCH_SEEDS = tuple(range(100, 108))
SEARCH_DRAWS = 1000


def draws_of(name: str, draws: int) -> int:
    """The draws a scenario gets: a fifth on the slow ones."""
    return draws // 5 if name in SLOW_SCENARIOS else draws


def planned(seeds: int, draws: int, scenarios: list[str], transports: int) -> int:
    """How many simulations a triage of ``seeds`` seeds, ``draws`` draws and ``transports`` transports runs."""
    return seeds * transports * sum(draws_of(name, draws) for name in scenarios)


def widened(name: str, ranges: str, transport: str) -> Scenario:
    """The library scenario ``name`` at ``ranges`` ('deployment' or 'library') on ``transport`` ('own' or 'sync')."""
    scenario = load_scenario(name)
    if ranges == "deployment":
        scenario = scenario.at_deployment_ranges()
    return scenario.with_transport("sync") if transport == "sync" else scenario


def triage(
    seeds: list[int], draws: int, scenarios: list[str], *, ranges: str = "deployment", transport: str = "own"
) -> tuple[list[dict[str, Any]], int, float]:
    """(one record per violation, simulations, CPU seconds)."""
    found: list[dict[str, Any]] = []
    simulations = 0
    started = time.process_time()
    for seed in seeds:
        for name in scenarios:
            target = Target(name, "head", {}, tuple(FAMILIES), widened(name, ranges, transport))
            for draw in swarm_batch(target, draws_of(name, draws), seed):
                simulations += 1
                result = draw.result
                if not result.violations:
                    continue
                ix = index_of(result.history)
                for invariant in result.violations:
                    mechanism = mechanism_of(invariant, ix, result.verdicts[invariant])
                    found.append(
                        {
                            "scenario": name,
                            "transport": transport,
                            "seed": seed,
                            "draw": draw.number,
                            "invariant": invariant,
                            "mechanism": mechanism.label(),
                            "explained": mechanism.explained,
                        }
                    )
    return found, simulations, time.process_time() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 5])
    parser.add_argument("--draws", type=int, default=500, help="swarm draws per scenario and seed")
    parser.add_argument("--scenario", action="append", help="only these library scenarios (repeatable)")
    parser.add_argument("--ranges", choices=("deployment", "library"), default="deployment")
    parser.add_argument(
        "--transport", choices=(*TRANSPORTS, "both"), default="own", help="own: each scenario's declared one"
    )
    parser.add_argument("--search", action="store_true", help="the >= 200,000-simulation job (overrides the above)")
    parser.add_argument("--jsonl", help="also write one JSON line per violation here")
    args = parser.parse_args(argv)
    if args.search:
        args.seeds, args.draws, args.ranges, args.transport = list(SEARCH_SEEDS), SEARCH_DRAWS, "deployment", "both"
    transports = TRANSPORTS if args.transport == "both" else (args.transport,)
    found: list[dict[str, Any]] = []
    simulations, cpu_s = 0, 0.0
    for transport in transports:
        more, n, spent = triage(
            args.seeds, args.draws, args.scenario or library_names(), ranges=args.ranges, transport=transport
        )
        found += more
        simulations += n
        cpu_s += spent
    if args.jsonl:
        with open(args.jsonl, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(record) + "\n" for record in found)
    counts = Counter((r["invariant"], r["mechanism"]) for r in found)
    for (invariant, mechanism), n in sorted(counts.items()):
        print(f"{n:6d}  {invariant}  {mechanism}")
    unexplained = [r for r in found if not r["explained"]]
    for r in unexplained:
        print(
            f"UNEXPLAINED {r['invariant']} on {r['scenario']} ({r['transport']}) seed {r['seed']} draw {r['draw']}: "
            f"{r['mechanism']}"
        )
    print(
        f"{args.ranges} ranges, {args.transport} transport: "
        f"{simulations:,} simulations, {len(found):,} violations, {len(unexplained)} unexplained, "
        f"{cpu_s:.0f} CPU s"
    )
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
