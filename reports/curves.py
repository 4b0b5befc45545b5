"""What faults cause: the violation rate of each invariant of ``head`` against the cell's fault intensity
(or latency ratio).

The per-policy curve of "any invariant" is saturated by design defects that fail whatever the faults
(``row_timestamps_kept`` under every preset, ``abandoned_interactive`` under ``adr-104``): its lines are
flat even at intensity 0. One line per invariant of ``head`` shows which failures grow with the faults
and which are there without them. Pure: rows in, a table and the cells of its numbers table out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from checks.columns import INV, violated_mask
from model.policy import PRESET_ALIASES
from reports.stats import wilson

HEAD = "head"
MAX_LINES = 8
"""The invariants drawn: those with the most violations in the grid (the numbers table lists all)."""
COLUMNS = ["policy", "violations", "simulations", "rate", "lower", "upper"]


def head_label(frame: pd.DataFrame, policies: Sequence[str]) -> str | None:
    """The label of the plain ``head`` policy (the preset or its alias, no flags) among ``policies``."""
    for label in policies:
        rows = frame[frame["policy"] == label]
        if rows.empty:
            continue
        preset = str(rows["preset"].iloc[0]) if "preset" in rows.columns else label
        flags = str(rows["flags"].iloc[0]) if "flags" in rows.columns else ""
        if PRESET_ALIASES.get(preset, preset) == PRESET_ALIASES.get(HEAD, HEAD) and not flags:
            return label
    return None


def by_invariant(frame: pd.DataFrame, grid: str, x: str, policy: str) -> pd.DataFrame:
    """Rows of ``grid`` and ``policy``: per invariant violated there and value of ``x``, the simulations
    violating it, with the Wilson 95% band; the invariant in the ``policy`` column (so the curve figure
    draws one line per invariant). Worst first; empty when none was violated."""
    rows = frame[(frame["grid"] == grid) & (frame["policy"] == policy)] if "grid" in frame.columns else frame[:0]
    records: list[dict[str, Any]] = []
    columns = [str(c) for c in rows.columns if str(c).startswith(INV)]
    for column in columns:
        bad = violated_mask(rows[column])
        if not bad.any():
            continue
        for value in sorted(rows[x].unique()):
            sel = rows[x] == value
            n, k = int(sel.sum()), int(bad[sel].sum())
            lower, upper = wilson(k, n)
            records.append(
                {
                    "policy": column.removeprefix(INV),
                    x: float(value),
                    "violations": k,
                    "simulations": n,
                    "rate": k / n if n else 0.0,
                    "lower": lower,
                    "upper": upper,
                }
            )
    table = pd.DataFrame.from_records(records, columns=[COLUMNS[0], x, *COLUMNS[1:]])
    if table.empty:
        return table
    worst = table.groupby("policy")["violations"].sum().sort_values(ascending=False, kind="stable")
    order = {name: i for i, name in enumerate(worst.index)}
    return table.sort_values(["policy", x], key=lambda s: s.map(order) if s.name == "policy" else s).reset_index(
        drop=True
    )


def drawn(table: pd.DataFrame) -> list[str]:
    """The invariants the figure draws: the :data:`MAX_LINES` with the most violations."""
    return list(dict.fromkeys(table["policy"]))[:MAX_LINES] if not table.empty else []
