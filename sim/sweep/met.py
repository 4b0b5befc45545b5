"""A sweep directory's rows against the register's record of where each entry was met
(:mod:`register.met_rates`): what a finished sweep says about entries it no longer meets.

Reads only the columns the comparison needs, shard by shard, of one policy (the one whose workers
explained its violations), holding one shard's rows at a time. Knows shards and the register; nothing
of the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from checks.columns import INV, WHY
from register.met_rates import CELL_COLUMNS, Comparison, MetRecord, compare, observe, read_record
from sim.explore.counterexample import INVARIANT_NAMES

KEYS = ("grid", "policy", "seed", *CELL_COLUMNS)


def shard_rows(paths: Iterable[Path], policy: str | None = None) -> Iterator[dict[str, Any]]:
    """The rows of ``policy`` (every policy when None), shard by shard, with the cell, verdict and
    explanation columns only: the caller tallies them as they come and never holds them all."""
    wanted = {*KEYS, *(INV + n for n in INVARIANT_NAMES), *(WHY + n for n in INVARIANT_NAMES)}
    for path in paths:
        names = pq.read_schema(path).names
        filters = [("policy", "=", policy)] if policy is not None else None
        yield from pq.read_table(path, columns=[c for c in names if c in wanted], filters=filters).to_pylist()


def met_comparison(paths: Iterable[Path], policy: str, record: MetRecord | None = None) -> Comparison:
    """The sweep's rows of ``policy`` against ``record`` (default: ``register/entries/met_rates.json``)."""
    observed = observe(shard_rows(paths, policy), INVARIANT_NAMES)
    return compare(observed, record if record is not None else read_record())


__all__ = ["KEYS", "met_comparison", "shard_rows"]
