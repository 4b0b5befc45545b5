"""The mechanism search bench, cell by cell, resumable: `leaselab bench --search --findings` with a cap per cell.

Why not the CLI alone: on two shared cores the full table (every entry, both origins, both explorers,
10 seeds) does not fit one sitting, and one cap for every cell either censors the rare entries' swarm
or spends hours on cells neither explorer meets. This runs the same searches
(:func:`sim.bench.mechanisms.one_search`), appends one JSON line per search to ``--out`` (a search
already in the file is skipped, so a stopped run resumes), and ``--table`` prints the Markdown table of
what the file holds (:func:`sim.bench.mechanisms.table`), the rare three's per-seed figures after it.

    nice -n 5 .venv/bin/python benchmarks/search_cells.py --out runs.jsonl --entry F-15 --origin own \
        --explorer swarm --seeds 10 --cap 20000 --budget-s 900
    .venv/bin/python benchmarks/search_cells.py --out runs.jsonl --table
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from register.known_defects import KNOWN_DEFECTS
from sim.bench.mechanisms import RAREST, SEARCHERS, Cell, Run, entries, one_search, table, target_of
from sim.bench.search_runs import defect_target
from sim.explore.base import Budget, Clock


def _done(path: Path) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    out: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                out[(row["entry"], row["origin"], row["explorer"], row["seed"])] = row
    return out


def _cells(rows: dict[tuple[str, str, str, int], dict[str, Any]]) -> list[Cell]:
    order = [e.id for e in entries()] + [d.id for d in KNOWN_DEFECTS]
    keys = sorted({(k[0], k[1]) for k in rows}, key=lambda k: (order.index(k[0]), k[1] != "own"))
    cells = []
    for entry, origin in keys:
        runs: dict[str, tuple[Run, ...]] = {}
        for explorer in ("swarm", "guided"):
            found = sorted((r for k, r in rows.items() if k[:3] == (entry, origin, explorer)), key=lambda r: r["seed"])
            if found:
                runs[explorer] = tuple(
                    Run(int(r["seed"]), bool(r["found"]), int(r["simulations"]), float(r["seconds"])) for r in found
                )
        scenario = next(str(r["scenario"]) for k, r in rows.items() if k[:2] == (entry, origin))
        cells.append(Cell(entry, origin, scenario, runs))
    return cells


def known_defect_search(defect: str, explorer: str, seed: int, cap: int, budget_s: float) -> Run:
    """One search for a known defect (KB-n) as ``leaselab bench --search`` has it (its catalogue scenario,
    defective policy and families; found at the first violation of its invariant), by ``explorer``."""
    entry = next(d for d in KNOWN_DEFECTS if d.id == defect)
    budget = Budget(
        seconds=budget_s, simulations=cap, seed=seed, stop_at_first=True, invariants=frozenset({entry.invariant})
    )
    clock = Clock()
    candidates, simulations = SEARCHERS[explorer](defect_target(entry), budget, clock, None, None, None)
    wanted = [c for c in candidates if c.invariant == entry.invariant]
    if not wanted:
        return Run(seed, False, simulations, clock.elapsed())
    return Run(seed, True, wanted[0].simulations_until_found, wanted[0].found_after_s)


def _table(cells: list[Cell], caps: dict[tuple[str, str], int]) -> str:
    """The Markdown table of :func:`sim.bench.mechanisms.table`, with each cell's cap in simulations."""
    cells = [c for c in cells if set(c.runs) >= {"swarm", "guided"}]
    lines = table({"cells": [c.document() for c in cells]}).splitlines()
    out = [
        lines[0].replace("| swarm simulations", "| cap | swarm simulations"),
        lines[1].replace("|---|---|", "|---|---|---:|"),
    ]
    for cell, line in zip(cells, lines[2:], strict=True):
        head, _, tail = line[2:].partition(" | ")
        origin, _, rest = tail.partition(" | ")
        out.append(f"| {head} | {origin} | {caps[(cell.entry, cell.origin)]:,} | {rest}")
    return "\n".join(out)


def _record(
    args: argparse.Namespace,
    rows: dict[tuple[str, str, str, int], dict[str, Any]],
    key: tuple[str, str, str, int],
    scenario: str,
    run: Run,
) -> None:
    """Append one search's line to ``args.out`` (the resumable record) and echo it on stderr."""
    entry, origin, explorer, seed = key
    row = {
        "entry": entry,
        "origin": origin,
        "scenario": scenario,
        "explorer": explorer,
        "seed": seed,
        "found": run.found,
        "simulations": run.simulations,
        "seconds": round(run.seconds, 3),
        "cap": args.cap,
        "budget_s": args.budget_s,
        "load": round(os.getloadavg()[0], 2),
    }
    with args.out.open("a") as f:
        f.write(json.dumps(row) + "\n")
    rows[key] = row
    print(json.dumps(row), file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--entry", action="append", default=[])
    parser.add_argument("--origin", action="append", default=[])
    parser.add_argument("--explorer", action="append", default=[])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1")
    parser.add_argument("--cap", type=int, default=2000, help="simulations after which a search is censored")
    parser.add_argument("--budget-s", type=float, default=600.0, help="wall seconds after which a search is censored")
    parser.add_argument("--table", action="store_true", help="print the table of what --out holds and stop")
    parser.add_argument("--known-defects", action="store_true", help="search the known defects (KB-n) instead")
    args = parser.parse_args()
    rows = _done(args.out)
    if args.table:
        cells = _cells(rows)
        caps = {(k[0], k[1]): max(int(str(r["cap"])) for q, r in rows.items() if q[:2] == k[:2]) for k in rows}
        print(_table(cells, caps))
        for c in cells:
            if c.entry in RAREST:
                for explorer, runs in c.runs.items():
                    shown = ", ".join(
                        f"{r.simulations:,}" if r.found else f">{r.simulations:,}"
                        for r in sorted(runs, key=lambda r: (not r.found, r.simulations))
                    )
                    print(f"{c.entry} {c.origin} {explorer}: {shown}")
        return 0
    if args.known_defects:
        for defect in args.entry or [d.id for d in KNOWN_DEFECTS]:
            for explorer in args.explorer or ["swarm", "guided"]:
                for seed in range(args.first_seed, args.first_seed + args.seeds):
                    if (defect, "catalogue", explorer, seed) in rows:
                        continue
                    run = known_defect_search(defect, explorer, seed, args.cap, args.budget_s)
                    scenario = next(d.scenario for d in KNOWN_DEFECTS if d.id == defect)
                    _record(args, rows, (defect, "catalogue", explorer, seed), scenario, run)
        return 0
    for entry in entries(args.entry):
        for origin in args.origin or ["own", "default"]:
            if origin == "own" and entry.scenario is None:
                continue
            if origin == "default" and entry.scenario == "default":
                continue  # its own scenario is default: one cell
            scenario = target_of(entry, origin).scenario_ref
            for explorer in args.explorer or ["swarm", "guided"]:
                for seed in range(args.first_seed, args.first_seed + args.seeds):
                    if (entry.id, origin, explorer, seed) in rows:
                        continue
                    run = one_search(entry, origin, explorer, seed, args.cap, args.budget_s)
                    _record(args, rows, (entry.id, origin, explorer, seed), scenario, run)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
