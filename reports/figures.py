"""The report's charts: curves with interval bands, the fault heatmap and the per-decision forest plot.

Each builder returns a :class:`reports.canvas.ReportFigure` made without pyplot (no backend is
chosen at import, so a notebook keeps its inline backend and shows the figure; the report writes it
as inline SVG and PNG through :mod:`reports.canvas`). Figures are drawn from the tables of
:mod:`reports.tables` only, never from raw rows. SVG output is deterministic (fixed hash salt, no
date), so two reports of the same rows are byte-identical apart from their timing lines.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from reports.canvas import ReportFigure, new_figure, save_png, strip_ids, styled, to_svg

__all__ = ["colour", "curve_figure", "forest_figure", "heatmap_figure", "save_png", "strip_ids", "to_svg"]

PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974")


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h")
LINESTYLES = ("-", "--", "-.", ":", "-", "--", "-.", ":", "-")


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


@styled
def curve_figure(
    table: pd.DataFrame,
    x: str,
    xlabel: str,
    policies: Sequence[str],
    ylabel: str = "simulations violating any invariant (%)",
) -> ReportFigure:
    """Violation rate (any invariant) against ``x``, one line per policy with its Wilson 95% band; or,
    with the invariant in the ``policy`` column, one line per invariant (:mod:`reports.curves`)."""
    fig = new_figure(7.5, 3.6)
    ax = fig.subplots()
    values = sorted(set(table[x])) if not table.empty else [0.0]
    dodge = (max(values) - min(values) or 1.0) * 0.008
    for policy, rows in _distinct_series(table, x, policies):
        i = list(policies).index(policy.split(" = ")[0])  # a policy keeps its colour in every figure
        xs = rows[x] + dodge * (i - (len(policies) - 1) / 2)
        ax.plot(
            xs,
            rows["rate"] * 100,
            marker=MARKERS[i % len(MARKERS)],
            ms=4.5,
            lw=1.5,
            ls=LINESTYLES[i % len(LINESTYLES)],
            color=colour(i),
            label=policy,
        )
        ax.fill_between(xs, rows["lower"] * 100, rows["upper"] * 100, color=colour(i), alpha=0.12, lw=0)
    ax.set_xlabel(xlabel)
    ax.set_xticks(values, [f"{v:g}" for v in values])
    ax.set_ylabel(ylabel)
    ax.set_ylim(-2, 102)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=8)
    fig.tight_layout()
    return fig


def _distinct_series(table: pd.DataFrame, x: str, policies: Sequence[str]) -> list[tuple[str, pd.DataFrame]]:
    """(label, rows) per distinct curve: policies whose points are all equal share one line labelled
    'a = b', since a line drawn exactly over another would hide it."""
    series: dict[tuple[tuple[float, int, int], ...], tuple[list[str], pd.DataFrame]] = {}
    for policy in policies:
        rows = table[table["policy"] == policy].sort_values(x)
        if rows.empty:
            continue
        key = tuple(
            zip(rows[x].astype(float), rows["violations"].astype(int), rows["simulations"].astype(int), strict=True)
        )
        series.setdefault(key, ([], rows))[0].append(policy)
    return [(" = ".join(names), rows) for names, rows in series.values()]


@styled
def heatmap_figure(table: pd.DataFrame) -> ReportFigure:
    """Fault family x request kind: faults that took effect, with the count in each cell."""
    rows, cols = table.shape
    fig = new_figure(max(5.0, 0.75 * cols + 2.2), max(2.2, 0.42 * rows + 1.4))
    ax = fig.subplots()
    values = table.to_numpy()
    shade = np.log10(values.astype(float) + 1)
    top = float(shade.max()) if shade.size and shade.max() > 0 else 1.0
    ax.imshow(shade, cmap="Blues", vmin=0, vmax=top * 1.1, aspect="auto")
    for r in range(rows):
        for c in range(cols):
            v = int(values[r, c])
            dark = shade[r, c] > top * 0.6
            ax.text(
                c,
                r,
                f"{v:,}" if v else "·",
                ha="center",
                va="center",
                fontsize=7.5,
                color="white" if dark else ("#08306b" if v else "#999999"),
            )
    ax.set_title("faults that took effect (colour: log scale)", fontsize=9, loc="left")
    ax.set_xticks(range(cols), list(table.columns), rotation=35, ha="right")
    ax.set_yticks(range(rows), list(table.index))
    ax.set_xlabel("request kind that received the fault")
    ax.set_ylabel("fault family")
    ax.grid(False)
    fig.tight_layout()
    return fig


@styled
def forest_figure(table: pd.DataFrame, title: str) -> ReportFigure:
    """Per invariant the paired difference of violation rates (after - before) with its 95% interval;
    only invariants violated under either policy are drawn."""
    rows = table[(table["before_violations"] > 0) | (table["after_violations"] > 0)]
    height = max(1.4, 0.32 * len(rows) + 0.9)
    fig = new_figure(5.6, height + 0.2)
    ax = fig.subplots()
    ys = list(range(len(rows)))[::-1]
    for y, (_, r) in zip(ys, rows.iterrows(), strict=True):
        c = "#55a868" if r["upper"] < 0 else "#c44e52" if r["lower"] > 0 else "#8c8c8c"
        ax.plot([r["lower"] * 100, r["upper"] * 100], [y, y], color=c, lw=2)
        ax.plot([r["difference"] * 100], [y], "o", color=c, ms=5)
    ax.axvline(0, color="#333333", lw=0.8)
    ax.set_yticks(ys, list(rows["invariant"]))
    ax.set_xlabel(
        "after - before, percentage points (95% paired interval)\ngreen: fewer violations, red: more, grey: includes 0"
    )
    ax.set_title(title, fontsize=9, loc="left")
    if rows.empty:
        ax.text(0.5, 0.5, "no invariant violated under either policy", transform=ax.transAxes, ha="center")
    fig.tight_layout()
    return fig
