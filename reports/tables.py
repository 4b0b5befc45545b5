"""The report's tables, computed from sweep rows (one row per simulation, the sweep row contract).

Every number the report prints comes from a function here, applied to the rows with pandas;
the tests recompute the same numbers from the rows independently and compare. Knows the row
contract (column names and meaning) and the preset order of :mod:`model.policy`; knows
nothing of how the rows were produced.

Readers tolerate extra columns, and a missing ``hit.*`` / ``dl.*`` / ``stat.*`` column counts
as 0. Comparisons pair simulations on :data:`PAIR_KEYS`: the same grid, scenario, intensity,
latency ratio, transport, collation (where the rows carry it) and seed under two policies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from checks.columns import (
    COV,
    DL,
    FAULT,
    HIT,
    INV,
    JUDGED,
    STAT_COMPLETED,
    STAT_DEAD_LETTERS,
    STAT_DEAD_LETTERS_NO_FATAL,
    STAT_DEAD_LETTERS_NO_WRITE,
    STAT_DUPLICATE_IDEMPOTENT_WRITES,
    STAT_FAILED_BY_SLOWNESS,
    STAT_PROGRESSING_REAPED,
    STAT_REQUEUES,
    STAT_RUNS,
    STAT_SETTLE_LATENCIES_S,
    STAT_WASTED_TOOL_EXECUTIONS,
    unknown_mask,
    violated_mask,
)
from model.policy import PRESET_ALIASES, PRESETS
from reports.stats import paired_difference, ratio_interval, rule_of_three, wilson

PAIR_KEYS = ("grid", "scenario", "intensity", "latency_ratio", "transport", "collation", "seed")
PRIMARY_GRID = "main"
PRESET_ORDER = tuple(PRESETS)


def with_defaults(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows with every key column present (old shards lack some): missing keys get neutral values."""
    out = frame.copy()
    defaults: dict[str, Any] = {
        "grid": PRIMARY_GRID,
        "preset": None,
        "flags": "",
        "intensity": 1.0,
        "latency_ratio": 0.0,
        "transport": "",
    }
    for column, value in defaults.items():
        if column not in out.columns:
            out[column] = out["policy"] if column == "preset" else value
    out["flags"] = out["flags"].fillna("").astype(str)
    return out


def invariant_names(frame: pd.DataFrame) -> list[str]:
    return [c.removeprefix(INV) for c in frame.columns if c.startswith(INV)]


def primary(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows the summary, comparisons and costs use: grid ``main``, else the first grid seen."""
    if frame.empty or "grid" not in frame.columns:
        return frame
    grids = list(dict.fromkeys(frame["grid"]))
    name = PRIMARY_GRID if PRIMARY_GRID in grids else grids[0]
    return frame[frame["grid"] == name]


def policy_order(frame: pd.DataFrame, policies: Sequence[str] | None = None) -> list[str]:
    """Policies in the configuration's order when given, else presets in ADR order then the rest."""
    seen = list(dict.fromkeys(frame["policy"])) if not frame.empty else []
    if policies:
        return [p for p in policies if p in seen] + [p for p in seen if p not in policies]
    return sorted(seen, key=lambda p: (_preset_rank(frame, p), p))


def _canonical_preset(name: str) -> str:
    return PRESET_ALIASES.get(name, name)


def _preset_rank(frame: pd.DataFrame, policy: str) -> tuple[int, int]:
    rows = frame[frame["policy"] == policy].iloc[0]
    preset = _canonical_preset(str(rows.get("preset", policy)))
    rank = PRESET_ORDER.index(preset) if preset in PRESET_ORDER else len(PRESET_ORDER)
    return (0 if not rows.get("flags", "") else 1, rank)


def violated(frame: pd.DataFrame) -> pd.DataFrame:
    """Per row and invariant: True where the invariant was judged false."""
    names = invariant_names(frame)
    out = pd.DataFrame({n: violated_mask(frame[INV + n]) for n in names}, index=frame.index)
    return out


def any_violated(frame: pd.DataFrame) -> pd.Series:
    return violated(frame).any(axis=1)


def summary(frame: pd.DataFrame, policies: Sequence[str]) -> pd.DataFrame:
    """Policy x invariant: violations, simulations, unknown verdicts, rate, Wilson 95% bounds, the cases
    judged (-1 where the rows do not say), and the rule-of-three upper bound where no violation was seen
    (NaN otherwise, and NaN where no case was judged: an invariant that judged nothing bounds nothing)."""
    records = []
    names = invariant_names(frame)
    for policy in policies:
        rows = frame[frame["policy"] == policy]
        n = len(rows)
        for name in names:
            column = rows[INV + name]
            k = int(violated_mask(column).sum())
            judged = int(rows[JUDGED + name].fillna(0).sum()) if JUDGED + name in rows else -1
            lower, upper = wilson(k, n)
            records.append(
                {
                    "policy": policy,
                    "invariant": name,
                    "violations": k,
                    "simulations": n,
                    "unknown": int(unknown_mask(column).sum()),
                    "rate": k / n if n else 0.0,
                    "lower": lower,
                    "upper": upper,
                    "judged": judged,
                    "rule_of_three": rule_of_three(n) if k == 0 and judged != 0 else float("nan"),
                }
            )
    return pd.DataFrame.from_records(records)


def presets_in_order(frame: pd.DataFrame, policies: Sequence[str]) -> list[str]:
    """The policies that are plain presets (no flags), in ADR order."""
    plain = [p for p in policies if not str(frame.loc[frame["policy"] == p, "flags"].iloc[0])]
    return sorted(plain, key=lambda p: _preset_rank(frame, p))


def proposal_pairs(frame: pd.DataFrame, policies: Sequence[str]) -> list[tuple[str, str]]:
    """(base, proposal): each flagged policy against the plain policy of the same preset."""
    plain = {
        _canonical_preset(str(frame.loc[frame["policy"] == p, "preset"].iloc[0])): p
        for p in presets_in_order(frame, policies)
    }
    pairs = []
    for policy in policies:
        rows = frame[frame["policy"] == policy]
        if not str(rows["flags"].iloc[0]):
            continue
        base = plain.get(_canonical_preset(str(rows["preset"].iloc[0])))
        if base is not None:
            pairs.append((base, policy))
    return pairs


def compare(frame: pd.DataFrame, before: str, after: str) -> pd.DataFrame:
    """Per invariant, on the simulations both policies ran with the same keys: the rates, the
    discordant pairs and the difference after - before with its paired 95% interval (Newcombe)."""
    names = invariant_names(frame)
    keys = [k for k in PAIR_KEYS if k in frame.columns]
    a = frame[frame["policy"] == before].set_index(keys)
    b = frame[frame["policy"] == after].set_index(keys)
    common = a.index.intersection(b.index)
    a, b = a.loc[common], b.loc[common]
    n = len(common)
    records = []
    for name in names:
        va = violated_mask(a[INV + name]).to_numpy()
        vb = violated_mask(b[INV + name]).to_numpy()
        both = int((va & vb).sum())
        only_after = int((vb & ~va).sum())
        only_before = int((va & ~vb).sum())
        diff = paired_difference(both, only_after, only_before, n)
        records.append(
            {
                "before": before,
                "after": after,
                "invariant": name,
                "pairs": n,
                "before_violations": int(va.sum()),
                "after_violations": int(vb.sum()),
                "rate_before": diff.rate_b,
                "rate_after": diff.rate_a,
                "only_before": only_before,
                "only_after": only_after,
                "difference": diff.difference,
                "lower": diff.lower,
                "upper": diff.upper,
                "made_hold": bool(va.sum() > 0 and vb.sum() == 0),
                "broke": bool(va.sum() == 0 and vb.sum() > 0),
            }
        )
    return pd.DataFrame.from_records(records)


def _column_sum(frame: pd.DataFrame, column: str) -> float:
    return float(frame[column].fillna(0).sum()) if column in frame.columns else 0.0


def _column_list(frame: pd.DataFrame, column: str) -> list[float]:
    """The column per simulation (0 where missing), for a per-simulation interval."""
    if column not in frame.columns:
        return [0.0] * len(frame)
    return frame[column].fillna(0).astype(float).tolist()


def _latencies(frame: pd.DataFrame) -> np.ndarray:
    if STAT_SETTLE_LATENCIES_S not in frame.columns:
        return np.array([], dtype=float)
    values = [float(x) for cell in frame[STAT_SETTLE_LATENCIES_S] if cell is not None for x in cell]
    return np.array(values, dtype=float)


def dead_letter_reasons(frame: pd.DataFrame) -> list[str]:
    return sorted(c.removeprefix(DL) for c in frame.columns if c.startswith(DL))


def cost(frame: pd.DataFrame, policies: Sequence[str]) -> pd.DataFrame:
    """Per policy: what the guarantees cost and whether the work got done (see the module docstring)."""
    records = []
    reasons = dead_letter_reasons(frame)
    for policy in policies:
        rows = frame[frame["policy"] == policy]
        runs = _column_sum(rows, STAT_RUNS)
        lat = _latencies(rows)
        per_run = _column_list(rows, STAT_RUNS)
        completion = ratio_interval(_column_list(rows, STAT_COMPLETED), per_run)
        requeues = ratio_interval(_column_list(rows, STAT_REQUEUES), per_run)
        record: dict[str, Any] = {
            "policy": policy,
            "simulations": len(rows),
            "runs": int(runs),
            "completed": int(_column_sum(rows, STAT_COMPLETED)),
            "completion_rate": _column_sum(rows, STAT_COMPLETED) / runs if runs else float("nan"),
            "completion_lower": completion[0],
            "completion_upper": completion[1],
            "dead_letters": int(_column_sum(rows, STAT_DEAD_LETTERS)),
            "dead_letters_no_write": int(_column_sum(rows, STAT_DEAD_LETTERS_NO_WRITE)),
            "requeues_per_run": _column_sum(rows, STAT_REQUEUES) / runs if runs else float("nan"),
            "requeues_lower": requeues[0],
            "requeues_upper": requeues[1],
            "settled": len(lat),
            "settle_p50_s": float(np.percentile(lat, 50)) if len(lat) else float("nan"),
            "settle_p95_s": float(np.percentile(lat, 95)) if len(lat) else float("nan"),
            "settle_p99_s": float(np.percentile(lat, 99)) if len(lat) else float("nan"),
            "duplicate_idempotent_writes": int(_column_sum(rows, STAT_DUPLICATE_IDEMPOTENT_WRITES)),
            "wasted_tool_executions": int(_column_sum(rows, STAT_WASTED_TOOL_EXECUTIONS)),
            "progressing_reaped": int(_column_sum(rows, STAT_PROGRESSING_REAPED)),
            "dead_letters_no_fatal": int(_column_sum(rows, STAT_DEAD_LETTERS_NO_FATAL)),
            "failed_by_slowness": int(_column_sum(rows, STAT_FAILED_BY_SLOWNESS)),
        }
        for reason in reasons:
            record[DL + reason] = int(_column_sum(rows, DL + reason))
        records.append(record)
    return pd.DataFrame.from_records(records)


def curve(frame: pd.DataFrame, grid: str, x: str, policies: Sequence[str]) -> pd.DataFrame:
    """Rows of ``grid``: per policy and value of ``x``, simulations violating any invariant, with the
    Wilson 95% band. Empty when the grid is absent."""
    rows = frame[frame["grid"] == grid] if "grid" in frame.columns else frame.iloc[0:0]
    records = []
    if rows.empty:
        return pd.DataFrame(columns=["policy", x, "violations", "simulations", "rate", "lower", "upper"])
    bad = any_violated(rows)
    for policy in policies:
        mine = rows["policy"] == policy
        for value in sorted(rows.loc[mine, x].unique()):
            sel = mine & (rows[x] == value)
            n = int(sel.sum())
            k = int(bad[sel].sum())
            lower, upper = wilson(k, n)
            records.append(
                {
                    "policy": policy,
                    x: float(value),
                    "violations": k,
                    "simulations": n,
                    "rate": k / n,
                    "lower": lower,
                    "upper": upper,
                }
            )
    return pd.DataFrame.from_records(records)


def fault_hits(frame: pd.DataFrame) -> pd.DataFrame:
    """Fault family x request kind: faults that took effect on that kind of request (all rows)."""
    cells: dict[tuple[str, str], int] = {}
    for column in frame.columns:
        if not column.startswith(HIT):
            continue
        family, _, request = column.removeprefix(HIT).partition(".")
        cells[(family, request)] = cells.get((family, request), 0) + int(frame[column].fillna(0).sum())
    if not cells:
        return pd.DataFrame()
    families = sorted({f for f, _ in cells})
    requests = sorted({r for _, r in cells})
    table = pd.DataFrame(0, index=families, columns=requests, dtype=int)
    for (family, request), count in cells.items():
        table.loc[family, request] = count
    return table


def fault_totals(frame: pd.DataFrame) -> pd.Series:
    """Faults that took effect, per family (all rows)."""
    columns = [c for c in frame.columns if c.startswith(FAULT)]
    return pd.Series({c.removeprefix(FAULT): int(frame[c].fillna(0).sum()) for c in columns}, dtype=int)


def coverage_counts(frame: pd.DataFrame, policies: Sequence[str]) -> pd.DataFrame:
    """Coverage property x policy: simulations that reached it (all rows), plus a total column."""
    names = [c.removeprefix(COV) for c in frame.columns if c.startswith(COV)]
    data = {
        policy: [int(frame.loc[frame["policy"] == policy, COV + n].fillna(False).astype(bool).sum()) for n in names]
        for policy in policies
    }
    table = pd.DataFrame(data, index=names)
    table["all"] = table.sum(axis=1)
    return table


def worst_scenarios(frame: pd.DataFrame, policy: str, invariant: str, limit: int = 3) -> list[tuple[str, int, int]]:
    """The scenarios with the most violations of ``invariant`` under ``policy``: (scenario, k, n)."""
    rows = frame[frame["policy"] == policy]
    grouped = violated_mask(rows[INV + invariant]).groupby(rows["scenario"], sort=True).agg(["sum", "count"])
    grouped = grouped[grouped["sum"] > 0].sort_values(["sum"], ascending=False, kind="stable")
    return [(str(s), int(r["sum"]), int(r["count"])) for s, r in grouped.head(limit).iterrows()]
