"""Is every entry the register met on these grids met again? The report's sentence and table.

The report's head rows are compared with the register's record of where each finding and non-guarantee
was met (:mod:`register.met_rates`, recorded from the same cells of the built-in ADR review): an entry
the record met in a cell this run shares and this run met nowhere there is *no longer met* when meeting
it zero times was unlikely at the recorded rates (P(none) below 1%), else there were *not enough
simulations to say* (a run with fewer seeds per cell). A run that shares no recorded cell says so and
nothing else. Pure: rows in, JSON-able data out.
"""

from __future__ import annotations

from typing import Any, cast

import pandas as pd

from checks.columns import INV, WHY
from model.policy import PRESET_ALIASES
from register.met_rates import CELL_COLUMNS, NEWS_BELOW, RECORD, MetRecord, compare, observe, read_record

KEYS = ("grid", "policy", "seed", *CELL_COLUMNS)
NOTHING_SHARED = (
    "This run shares no cell with the register's record of where each entry was met "
    "(register/entries/met_rates.json): nothing to compare."
)


def recorded_rows(frame: pd.DataFrame, record: MetRecord) -> list[dict[str, Any]]:
    """The rows of the policies the record has cells of (a preset and its flags), with the columns it needs."""
    if frame.empty or not {"preset", "flags"} <= set(frame.columns):
        return []
    policies = {(c.cell.preset, c.cell.flags) for c in record.cells}
    presets = frame["preset"].map(lambda p: PRESET_ALIASES.get(str(p), str(p)))
    flags = frame["flags"].fillna("").astype(str)
    mask = pd.Series([(p, f) in policies for p, f in zip(presets, flags, strict=True)], index=frame.index)
    columns = [c for c in frame.columns if c in KEYS or c.startswith((INV, WHY))]
    return cast(list[dict[str, Any]], frame.loc[mask, columns].to_dict("records"))


def met_again_view(frame: pd.DataFrame, record: MetRecord | None = None) -> dict[str, Any]:
    """``line`` (one sentence), ``holds`` (nothing no longer met), ``met_again`` (entry and recorded grid),
    ``news`` and ``unsure`` (the entries not met, as :meth:`register.met_rates.Stopped.document`), the shared
    ``cells`` and their ``simulations``."""
    record = record if record is not None else read_record()
    invariants = [c.removeprefix(INV) for c in frame.columns if c.startswith(INV)]
    comparison = compare(observe(recorded_rows(frame, record), invariants), record)
    return {
        "line": comparison.line() or NOTHING_SHARED,
        "holds": not comparison.news,
        "met_again": [{"entry": entry, "grid": grid} for entry, grid in comparison.met_again],
        "news": [s.document() for s in comparison.news],
        "unsure": [s.document() for s in comparison.unsure],
        "cells": comparison.cells,
        "simulations": comparison.simulations,
        "threshold": NEWS_BELOW,
        "record": str(RECORD.relative_to(RECORD.parents[2])),
        "source": record.source,
    }


__all__ = ["NOTHING_SHARED", "met_again_view", "recorded_rows"]
