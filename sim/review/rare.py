"""Rare rates: what the report says of a mechanism its grid met fewer than :data:`RARE_BELOW` times.

"Met 1 of 13,200" is no rate a reviewer should quote. For each entry that explained fewer than
:data:`RARE_BELOW` examined violations of head in a grid, this module gives the rate with an honest
interval:

- when the entry has a chain (:mod:`register.precursors`), a multilevel splitting estimate
  (:func:`sim.explore.splitting.estimate_chain_over`) whose roots are :data:`ROOTS` rows of head drawn
  uniformly from that grid (seeded: the same review gives the same estimate), each re-run as the sweep
  ran it; the estimate is of the grid's own process, so it sits beside the grid's count;
- otherwise why no estimator applies (no chain to split on); the report gives the count's Wilson
  interval either way.

The estimate is attached to the explanation it belongs to (``rare``: the count, the grid's simulations,
the estimate's sentence or why there is none), and the report prints it beside the count with the
count's Wilson interval (``reports.register``: statistics of counts are the report's). Knows the
review's rows and the splitting estimator; never imports the report.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pandas as pd

from model.policy import Policy, resolve_policy
from register.precursors import PRECURSORS
from scenarios.schema import Scenario
from sim.explore.splitting import Root, estimate_chain_over, significant
from sim.review.plan import cell, head_label
from sim.world.simulate import SimulationResult, simulate

RARE_BELOW = 10
"""An entry met fewer times than this in a grid gets a rate with its interval, not only a count."""
ROOTS = 2_000
"""Rows of the grid the splitting estimate starts from (with replacement). At the library's profiles a
chain's first step is rare too, so few roots take it: 200 rows of library scenarios at deployment
ranges took none of F-15's or F-18's steps (1.7 s); the estimate is then wider than the grid's own count,
which the report says (``reports.register``)."""
SPLITS = 3
PER = 100_000


def _per(x: float) -> str:
    return significant(x * PER)


def _roots(rows: pd.DataFrame, refs: dict[str, str], count: int, seed: int) -> list[Root]:
    """``count`` rows drawn uniformly (with replacement, seeded) from ``rows``, as roots; every row once
    when the grid has no more rows than that (the grid itself, never a row twice)."""
    rng = random.Random(seed)
    if len(rows) <= count:
        picked = [rows.iloc[i] for i in range(len(rows))]
    else:
        picked = [rows.iloc[int(rng.random() * len(rows))] for _ in range(count)]
    scenarios: dict[tuple[str, str, float], Scenario] = {}
    policies: dict[tuple[str, tuple[tuple[str, bool], ...]], Policy] = {}
    out: list[Root] = []
    for row in picked:
        c = cell(row, refs)
        key = (c.scenario_ref, c.fault_ranges, c.intensity)
        if key not in scenarios:
            scenarios[key] = c.scenario()
        pkey = (c.preset, c.flags)
        if pkey not in policies:
            policies[pkey] = resolve_policy(c.preset, dict(c.flags))
        out.append((scenarios[key], policies[pkey], c.seed))
    return out


def rare_rates(
    frame: pd.DataFrame,
    policies: Sequence[str],
    explanations: list[dict[str, Any]],
    refs: dict[str, str],
    *,
    roots: int = ROOTS,
    splits: int = SPLITS,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Give each explanation item met fewer than :data:`RARE_BELOW` times its ``rare`` record (see the
    module; ``explanations`` is changed in place) and return one record per (grid, entry) estimated."""
    head = head_label(frame, policies)
    if head is None:
        return []
    met: dict[tuple[str, str], int] = {}
    for e in explanations:
        for item in e["explained"]:
            key = (str(e["grid"]), str(item["id"]))
            met[key] = max(met.get(key, 0), int(item["simulations"]))
    records: dict[tuple[str, str], dict[str, Any]] = {}
    planted: dict[str, tuple[list[Root], list[SimulationResult]]] = {}
    for (grid, entry), count in sorted(met.items()):
        if not 0 < count < RARE_BELOW:
            continue
        rows = frame[(frame["policy"] == head) & (frame["grid"] == grid)]
        if rows.empty:
            continue
        record: dict[str, Any] = {"grid": grid, "id": entry, "met": count, "simulations": len(rows)}
        if entry in PRECURSORS:
            if grid not in planted:  # one set of roots per grid, run once for every entry estimated there
                chosen = _roots(rows, refs, roots, seed)
                planted[grid] = (chosen, [simulate(sc, policy, world_seed) for sc, policy, world_seed in chosen])
            chosen, runs = planted[grid]
            found = estimate_chain_over(chosen, entry, splits=splits, seed=seed, runs=runs)
            record["estimate"] = found.document()
            record["interval"] = [found.low, found.high]
            record["text"] = (
                f"about {_per(found.rate)} in {PER:,} simulations of this grid "
                f"[{_per(found.low)}, {_per(found.high)}] (multilevel splitting over its chain, {found.roots} "
                f"rows x {found.simulations:,} simulations)"
            )
        else:
            record["text"] = ""
            record["why_none"] = "no chain to split on (register/precursors.py)"
        records[(grid, entry)] = record
    for e in explanations:
        for item in e["explained"]:
            found_record = records.get((str(e["grid"]), str(item["id"])))
            if found_record is not None:
                item["rare"] = {k: found_record[k] for k in ("met", "simulations", "text")} | {
                    "why_none": found_record.get("why_none", ""),
                    "interval": found_record.get("interval", []),
                }
    return list(records.values())


__all__ = ["RARE_BELOW", "ROOTS", "SPLITS", "rare_rates"]
