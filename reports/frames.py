"""Sweep shards (Parquet) to pandas DataFrames, and the per-cell violation counts.

Verdict columns ``inv.*`` are nullable booleans: true (held), false (violated), null (unknown).
Read from Parquet they arrive as ``bool``, ``boolean`` or ``object`` (True/False/None) depending
on the reader; :func:`violated_mask` and :func:`unknown_mask` read every form alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from checks.columns import INV, unknown_mask, violated_mask


def load_shards(paths: Iterable[Path]) -> pd.DataFrame:
    """All rows of the given shards; an empty frame when there are none."""
    frames = [pd.read_parquet(p) for p in paths]
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def invariant_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.startswith(INV)]


def violation_counts(frame: pd.DataFrame, by: Sequence[str] = ("scenario", "policy")) -> pd.DataFrame:
    """Per group: simulations, and per invariant the number of simulations that violated it."""
    columns = invariant_columns(frame)
    violated = violated_mask(frame[columns]).astype(int)
    violated.columns = [c.removeprefix(INV) for c in columns]
    violated[list(by)] = frame[list(by)]
    counts = violated.groupby(list(by), sort=False).sum()
    counts.insert(0, "simulations", frame.groupby(list(by), sort=False).size())
    return counts


def unknown_counts(frame: pd.DataFrame, by: Sequence[str] = ("scenario", "policy")) -> pd.DataFrame:
    columns = invariant_columns(frame)
    unknown = unknown_mask(frame[columns]).astype(int)
    unknown.columns = [c.removeprefix(INV) for c in columns]
    unknown[list(by)] = frame[list(by)]
    return unknown.groupby(list(by), sort=False).sum()
