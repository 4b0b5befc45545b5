"""Record where each register entry is met in the ADR review's head cells: ``register/entries/met_rates.json``.

    .venv/bin/python -m benchmarks.record_met --out /tmp/met-sweep --workers 2
    .venv/bin/python -m benchmarks.record_met --out /tmp/met-sweep --check   # compare, do not write

Runs ``sim/review/adr-review.toml`` with its ``head`` policy only (every grid, the same seeds as
``leaselab report``: a report's head rows are these rows), head's workers explaining every violation, and
writes per cell the simulations, how many met each entry and the first seed that did
(:mod:`register.met_rates`). ``leaselab sweep`` and ``leaselab report`` compare what they meet with it.
Re-record when a change of the runtime, the world or a recogniser moves what these cells meet, and say
why in the commit; ``--check`` prints what a sweep of the same cells would say against the record.
The directory is a sweep directory: run again, it resumes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from register.met_rates import RECORD, compare, observe, read_record, recorded, write_record
from sim.explore.counterexample import INVARIANT_NAMES
from sim.review.builtin import BUILTIN_REVIEW, builtin_review
from sim.sweep.config import SweepConfig
from sim.sweep.job import run_job
from sim.sweep.met import shard_rows

HEAD = "head"


def head_only(config: SweepConfig) -> SweepConfig:
    """The configuration with its plain ``head`` policy only (grids that list policies keep only head)."""
    heads = [p for p in config.policy if p.label == HEAD]
    grids = [g.model_copy(update={"policies": [p for p in g.policies if p == HEAD]}) for g in config.grid]
    return config.model_copy(update={"name": f"{config.name}-head", "policy": heads, "grid": grids})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the sweep directory (created, or resumed)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=None, help="seeds per cell (default: the review's)")
    parser.add_argument("--check", action="store_true", help="compare with the record instead of writing it")
    parser.add_argument("--record", type=Path, default=RECORD)
    args = parser.parse_args(argv)
    config = head_only(builtin_review())
    if args.seeds is not None:
        config = config.model_copy(update={"seeds": args.seeds})
    started = time.perf_counter()
    result = run_job(config, args.out, workers=args.workers, explain=HEAD)
    observed = observe(shard_rows(result.progress.paths, HEAD), INVARIANT_NAMES)
    simulations = sum(t.simulations for t in observed.values())
    took = time.perf_counter() - started
    print(f"{simulations:,} simulations in {len(observed)} cells, {took:.0f} s", file=sys.stderr)
    if args.check:
        comparison = compare(observed, read_record(args.record))
        print(comparison.line())
        for stopped in comparison.stopped:
            print(f"  {stopped.line()}")
        return 1 if comparison.news else 0
    seeds = args.seeds or config.seeds
    source = f"python -m benchmarks.record_met: sim/review/{BUILTIN_REVIEW}, policy {HEAD} only, {seeds} seeds per cell"
    record = recorded(observed, source, [g.name for g in config.grid], prefix=f"{builtin_review().name} grid ")
    write_record(record, args.record)
    print(f"wrote {args.record}: {len(record.cells)} cells", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
