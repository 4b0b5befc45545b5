"""Triage of head at deployment (or library) fault ranges: every violation the swarm meets, by mechanism.

    .venv/bin/python -m benchmarks.triage_ranges                       # seeds 0-3 and 5, 500 draws per scenario
    .venv/bin/python -m benchmarks.triage_ranges --seeds 5 --draws 300 --jsonl /tmp/triage.jsonl
    .venv/bin/python -m benchmarks.triage_ranges --ranges library --transport sync
    .venv/bin/python -m benchmarks.triage_ranges --search --jsonl /tmp/search.jsonl   # the >= 200,000 job
    .venv/bin/python -m benchmarks.triage_ranges --seeds 800 --transport both --draws 1000 --record /tmp/800.json
    .venv/bin/python -m benchmarks.triage_ranges --combine /tmp/8*.json --record register/entries/searched.json

``--search`` is the search the report's "every failure explained" is checked at, at a user's scale: the
seeds of the recorded search (``SEARCH_SEEDS``, read from ``register/entries/searched.json``), 1,000 draws
per scenario and seed, every library scenario at deployment ranges on both transports (``planned``
counts them: 275,200 simulations on the 18 scenarios), about 10 CPU minutes; the nightly suite runs it in chunks
(``tests/properties/test_deployment_search.py``). ``--record`` writes a run's figures (seeds, simulations,
violations, the register entries met, where each unexplained violation was met); ``--combine`` sums the
records of chunks run apart into the one the report quotes (:mod:`register.searched`).

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
from pathlib import Path
from typing import Any

from checks.fused import index_of
from register.mechanism import mechanism_of
from register.searched import RECORD, SearchRecord, combined, read_record, write_record
from scenarios.families import FAMILIES
from scenarios.loader import library_names, load_scenario
from scenarios.schema import Scenario
from sim.explore.base import Target
from sim.explore.mutants import swarm_batch

SLOW_SCENARIOS = frozenset({"reaper_races_heartbeat"})
TRANSPORTS = ("own", "sync")
SEARCH_SEEDS = read_record(RECORD).seeds
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


def summary(
    found: list[dict[str, Any]],
    simulations: int,
    cpu_s: float,
    *,
    seeds: list[int],
    draws: int,
    ranges: str,
    transports: tuple[str, ...],
    scenarios: int,
) -> SearchRecord:
    """One run's figures as the register records them."""
    return SearchRecord(
        seeds=tuple(seeds),
        draws=draws,
        ranges=ranges,
        transports=transports,
        scenarios=scenarios,
        simulations=simulations,
        violations=len(found),
        mechanisms=tuple(sorted({r["mechanism"] for r in found if r["explained"]})),
        unexplained=tuple(
            f"{r['invariant']} on {r['scenario']} ({r['transport']}) seed {r['seed']} draw {r['draw']}: "
            f"{r['mechanism']}"
            for r in found
            if not r["explained"]
        ),
        cpu_s=cpu_s,
    )


def combine(paths: list[str], record: str | None) -> int:
    """Sum chunk records into one (printed; written to ``record`` when given). Exit 2 on a bad file."""
    chunks = []
    for name in paths:
        try:
            chunks.append(read_record(Path(name)))
        except (OSError, ValueError, KeyError, TypeError) as error:
            field = f"field {error}" if isinstance(error, KeyError) else type(error).__name__
            print(f"error: {name}: not a search record ({field})", file=sys.stderr)
            return 2
    try:
        total = combined(chunks)
    except ValueError as error:
        print(f"error: {paths[0]}: {error}", file=sys.stderr)
        return 2
    print(json.dumps(total.to_json(), indent=2))
    if record:
        write_record(total, Path(record))
    return 1 if total.unexplained else 0


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
    parser.add_argument("--record", help="write the run's figures here (register/searched.py's record)")
    parser.add_argument("--combine", nargs="+", metavar="RECORD", help="sum these chunk records instead of running")
    args = parser.parse_args(argv)
    if args.combine:
        return combine(args.combine, args.record)
    if args.search:
        args.seeds, args.draws, args.ranges, args.transport = list(SEARCH_SEEDS), SEARCH_DRAWS, "deployment", "both"
    transports = TRANSPORTS if args.transport == "both" else (args.transport,)
    scenarios = args.scenario or library_names()
    found: list[dict[str, Any]] = []
    simulations, cpu_s = 0, 0.0
    for transport in transports:
        more, n, spent = triage(args.seeds, args.draws, scenarios, ranges=args.ranges, transport=transport)
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
    if args.record:
        figures = summary(
            found,
            simulations,
            cpu_s,
            seeds=args.seeds,
            draws=args.draws,
            ranges=args.ranges,
            transports=tuple(transports),
            scenarios=len(scenarios),
        )
        write_record(figures, Path(args.record))
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
