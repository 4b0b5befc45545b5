"""The swim-lane figure of one history: what each process did, when, with no label over another.

Draws a :class:`reports.lanes.Picture`: per lane the lease a worker holds (solid bar; hatched red
where its segment went on working after the lease expired, the zombie window), the write fence,
tool calls and landings, audit inserts, reaper decisions, crashes; faults as shaded periods or
dashed lines. Long idle gaps (the reaper's interval, the quiet phase) are compressed and marked,
so the interesting seconds stay readable. Extra :class:`~reports.lanes.LaneMarker` records (the
checker's witness records, :func:`~reports.lanes.witness_markers`; later anything else worth
pointing at) are ringed and labelled on their lanes; :data:`MARKER_STYLES` says how each style looks.
A :class:`Panel` (the causality curve, :mod:`reports.causality`) is drawn under the lanes on their time
axis: it shares the lanes' x, and its legend joins theirs.

Legibility is laid out, not hoped for: the figure is :data:`WIDTH_IN` wide so the report shows it at
its own size at 1,400 px (a 9 pt label is 12 px); the layout works in points, measures every label
with matplotlib's own text metrics and puts it in the first row of its lane's label band where it
overlaps nothing, and a lane grows by a row where needed. No label is dropped and none overlaps
another, however crowded the history (tests check both with the renderer's extents, and in chromium).

Reads only :mod:`checks.history` records through :mod:`reports.lanes`; builds the figure without pyplot
(:mod:`reports.canvas`).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from checks import Verdict
from checks.history import Op
from reports.canvas import ReportFigure, new_figure, styled
from reports.lanes import (
    BUS,
    MARKS,
    STORE,
    LaneMarker,
    Picture,
    lane_of,
    lane_order,
    only_runs,
    picture,
    witness_markers,
)
from reports.wording import cited_records

__all__ = [
    "BUS",
    "MARKER_STYLES",
    "MARKS",
    "STORE",
    "LaneMarker",
    "Panel",
    "Picture",
    "figure",
    "lane_of",
    "only_runs",
    "picture",
    "violation_figure",
    "witness_markers",
]

GAP_S = 5.0
"""Idle gaps longer than this many simulated seconds are compressed."""
WIDTH_IN = 12.4
LEFT_IN = 1.2
"""Room for the lane names."""
RIGHT_IN = 0.2
LABEL_PT = 9.0
"""Every label on the lanes, the ticks and the legend: 12 px where the figure is shown at its size."""
LANE_NAME_PT = 10.0
TITLE_PT = 10.5
ROW_PT = 12.5
"""Pitch of the label rows (a 9 pt line with its descent)."""
CORE_PT = 28.0
"""The band of a lane that holds its bar and marks; label rows hang below it."""
LANE_GAP_PT = 6.0
BAR_PT = 11.0
PAD_PT = 7.0
"""Least horizontal room between two labels of one row."""
MIN_MARK_SEP_PT = 6.0
"""Marks of one lane closer than this are nudged apart, so same-instant marks stay distinguishable."""

MARKER_STYLES: dict[str, dict[str, Any]] = {
    "violation": {"ring": "#b2182b", "ring_width": 2.2, "colour": "#b2182b", "weight": "bold"},
    "witness": {"ring": "#b2182b", "ring_width": 1.3, "colour": "#b2182b", "weight": "normal"},
    "cited": {"ring": "#6a3d9a", "ring_width": 1.1, "colour": "#6a3d9a", "weight": "normal"},
    "moment": {"ring": "#01665e", "ring_width": 2.0, "colour": "#01665e", "weight": "bold"},
    "note": {"ring": "#333333", "ring_width": 1.0, "colour": "#333333", "weight": "normal"},
}
"""How an extra marker looks, by its ``style``: ring colour and width, label colour and weight."""

LABELLED = ("status", "reaper", "audit_failed", "store_failed", "tool_started", "crash")
"""Mark kinds whose label is written on the lane (the others are explained by the legend alone)."""
LEGEND_KINDS = (
    "fence_stamped",
    "fence_cleared",
    "tool_started",
    "landed",
    "audit_ok",
    "audit_failed",
    "reaper",
    "crash",
    "store_failed",
    "dispatch",
    "deliver",
)


class _Compressed:
    """A time axis that squeezes every idle gap longer than ``gap_s`` to ``gap_s``."""

    def __init__(self, times: Sequence[float], gap_s: float) -> None:
        points = sorted(set(times))
        pairs = list(itertools.pairwise(points))
        active = sum(b - a for a, b in pairs if b - a <= gap_s)
        squeezed = max(gap_s, 0.07 * active)
        self.breaks: list[tuple[float, float]] = []
        self.src = [points[0]] if points else [0.0]
        self.dst = [0.0]
        for a, b in pairs:
            width = b - a
            if width > gap_s:
                self.breaks.append((a, b))
            self.src.append(b)
            self.dst.append(self.dst[-1] + (squeezed if width > gap_s else width))

    def __call__(self, t: float) -> float:
        i = bisect.bisect_right(self.src, t) - 1
        i = max(0, min(i, len(self.src) - 1))
        if i + 1 < len(self.src):
            a, b = self.src[i], self.src[i + 1]
            frac = (t - a) / (b - a) if b > a else 0.0
            return self.dst[i] + frac * (self.dst[i + 1] - self.dst[i])
        return self.dst[i] + (t - self.src[i])


_MEASURE = RendererAgg(1, 1, 72)  # type: ignore[no-untyped-call]  # at 72 dpi a pixel is a point


def text_width_pt(text: str, size_pt: float = LABEL_PT, weight: str = "normal") -> float:
    """The width of ``text`` as matplotlib renders it (DejaVu Sans, as the browser does the inline SVG)."""
    font = FontProperties(size=size_pt, weight=weight)
    width, _, _ = _MEASURE.get_text_width_height_descent(text, font, False)  # type: ignore[no-untyped-call]
    return float(width)


@dataclass
class _Label:
    x_pt: float
    text: str
    colour: str = "#333333"
    weight: str = "normal"
    row: int = 0


class _Rows:
    """Label rows of one band: a label goes into the first row where it overlaps no other label."""

    def __init__(self, width_pt: float, max_rows: int | None = None) -> None:
        self.width_pt = width_pt
        self.max_rows = max_rows
        self.taken: list[list[tuple[float, float]]] = []
        self.labels: list[_Label] = []

    def put(self, label: _Label) -> bool:
        """Place ``label`` (shifted left to stay inside the axes); False when ``max_rows`` are all full."""
        width = text_width_pt(label.text, weight=label.weight)
        label.x_pt = max(0.0, min(label.x_pt, self.width_pt - width))
        start, end = label.x_pt - PAD_PT / 2, label.x_pt + width + PAD_PT / 2
        for row, taken in enumerate(itertools.chain(self.taken, [[]])):
            if self.max_rows is not None and row >= self.max_rows:
                return False
            if all(end <= a or start >= b for a, b in taken):
                if row == len(self.taken):
                    self.taken.append([])
                self.taken[row].append((start, end))
                label.row = row
                self.labels.append(label)
                return True
        return False  # unreachable: the extra empty row always fits

    @property
    def count(self) -> int:
        return len(self.taken)


@dataclass(frozen=True)
class Panel:
    """A plot drawn under the lanes on their time axis (the causality curve of :mod:`reports.causality`).

    ``draw(ax, x)`` draws into an axes that shares the lanes' x (limits and ticks; the figure sets the ticks
    and the time axis's label, the panel its y); ``x`` maps simulated seconds to that axis, idle gaps
    compressed as on the lanes, so a time drawn there lines up with the same time on the lanes.
    ``legend`` handles join the lanes' legend (a legend beside the panel would widen the figure past the
    page); ``above_in`` is the room between the lanes' tick labels and the panel for its own labels."""

    draw: Callable[[Axes, Callable[[float], float]], None]
    height_in: float = 1.2
    above_in: float = 0.4
    legend: tuple[Any, ...] = ()


TICKS_IN = 0.32
"""Room for an axes' x tick labels under it."""


@styled
def figure(
    history: Sequence[Op], title: str = "", markers: Sequence[LaneMarker] = (), under: Panel | None = None
) -> ReportFigure:
    """The swim-lane figure of a history, with ``markers`` ringed and labelled on their lanes and ``under``
    drawn beneath them on the same time axis."""
    pic = picture(history)
    placed = [(where, m) for m in markers if (where := m.place(pic)) is not None]
    lanes = lane_order(set(pic.lanes) | {lane for (lane, _), _ in placed if lane is not None})
    times = [m[1] for m in pic.marks] + [s.start for s in pic.spans] + [s.end for s in pic.spans]
    times += [s.zombie_end for s in pic.spans if s.zombie_end is not None]
    times += [f[0] for f in pic.faults] + [f[1] for f in pic.faults] + [t for (_, t), _ in placed] + [0.0]
    if pic.quiet_at is not None:
        times.append(pic.quiet_at)  # else the axis runs on uncompressed to the quiet phase's line
    x = _Compressed(times, GAP_S)
    axes_w = (WIDTH_IN - LEFT_IN - RIGHT_IN) * 72
    span = x.dst[-1] or 1.0
    x_lo, x_hi = -0.012 * span, 1.012 * span
    pt_per_x = axes_w / (x_hi - x_lo)

    def pt(t: float) -> float:
        return (x(t) - x_lo) * pt_per_x

    def data(x_pt: float) -> float:
        return x_lo + x_pt / pt_per_x

    # Marks, nudged apart per lane; then every label of a lane into its rows (markers first: they matter most).
    nudged: list[tuple[str, float, str, str]] = []
    last_pt: dict[str, float] = {}
    for lane_name, t, kind, label in pic.marks:
        at = max(pt(t), last_pt.get(lane_name, -1e9) + MIN_MARK_SEP_PT)
        last_pt[lane_name] = at
        nudged.append((lane_name, at, kind, label))
    rows = {name: _Rows(axes_w) for name in lanes}
    top = _Rows(axes_w)
    for (on, t), marker in sorted(placed, key=lambda p: (p[1].style != "violation", p[0][1])):
        style = MARKER_STYLES.get(marker.style, MARKER_STYLES["note"])
        (rows[on] if on is not None else top).put(_Label(pt(t), marker.label, style["colour"], style["weight"]))
    for s in pic.spans:
        rows[s.lane].put(_Label(pt(s.start), f"lease {s.run}", "#08519c"))
    for lane_name, at, kind, label in nudged:
        if label and kind in LABELLED and lane_name in rows:
            rows[lane_name].put(_Label(at, label))
    fault_at: dict[float, list[str]] = {}
    for start, _, label in pic.faults:
        fault_at.setdefault(pt(start), []).append(label)
    for at, labels in sorted(fault_at.items()):
        top.put(_Label(at, "⚡" + ", ".join(labels), "#b2182b"))
    if pic.quiet_at is not None:
        top.put(_Label(pt(pic.quiet_at), "quiet phase (faults healed)", "#555555"))
    gaps = _Rows(axes_w, max_rows=2)  # a gap's dotted lines show it even where its length finds no room
    for a, b in x.breaks:
        text = f"⋯ {b - a:,.0f} s ⋯"
        gaps.put(_Label((pt(a) + pt(b)) / 2 - text_width_pt(text) / 2, text, "#666666"))

    # Heights, top down, in points (the axes' y unit is a point).
    top_h = top.count * ROW_PT + (4.0 if top.count else 0.0)
    lane_h = {name: CORE_PT + rows[name].count * ROW_PT + LANE_GAP_PT for name in lanes}
    gap_h = gaps.count * ROW_PT + 4.0
    height = top_h + sum(lane_h.values()) + gap_h
    centre: dict[str, float] = {}
    y = height - top_h
    for name in lanes:
        centre[name] = y - CORE_PT / 2
        y -= lane_h[name]

    handles = [*_legend(), *(under.legend if under is not None else ())]
    legend_in = -(-len(handles) // 5) * 0.21 + 0.15
    panel_in = under.height_in + under.above_in + TICKS_IN if under is not None else 0.0
    bottom_in = 0.62 + legend_in + panel_in
    top_in = 0.42 if title else 0.12
    fig_h = height / 72 + bottom_in + top_in
    fig = new_figure(WIDTH_IN, fig_h)
    ax = fig.add_axes(
        (LEFT_IN / WIDTH_IN, bottom_in / fig_h, (WIDTH_IN - LEFT_IN - RIGHT_IN) / WIDTH_IN, height / 72 / fig_h)
    )
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(0, height)
    ax.grid(False)
    lanes_top, lanes_bottom = height - top_h, gap_h

    for start, end, _ in pic.faults:
        if end > start:
            ax.axvspan(x(start), x(end), color="#fbb4ae", alpha=0.3, lw=0)
        ax.axvline(x(start), color="#d6604d", lw=1.1, alpha=0.8, ls=(0, (2, 2)))
    for a, b in x.breaks:
        for edge in (x(a), x(b)):
            ax.plot([edge, edge], [lanes_bottom, lanes_top], color="#bbbbbb", lw=0.6, ls=":", zorder=0)
    if pic.quiet_at is not None:
        ax.axvline(x(pic.quiet_at), color="#555555", lw=0.8, ls="--")
    for s in pic.spans:
        yc = centre[s.lane]
        ax.barh(yc, x(s.end) - x(s.start), left=x(s.start), height=BAR_PT, color="#9ecae1", ec="#3182bd", lw=0.6)
        if s.zombie_end is not None and s.zombie_end > s.end:
            ax.barh(
                yc,
                x(s.zombie_end) - x(s.end),
                left=x(s.end),
                height=BAR_PT,
                color="none",
                edgecolor="#d62728",
                hatch="////",
                lw=0.6,
            )
    for lane_name, start, landed in pic.links:
        if lane_name in centre:
            ax.plot([x(start), x(landed)], [centre[lane_name] - 9.5] * 2, color="#ff7f0e", lw=1.2)
    for lane_name, at, kind, _ in nudged:
        if lane_name not in centre:
            continue
        symbol, col, _ = MARKS[kind]
        ax.plot(
            [data(at)],
            [centre[lane_name]],
            marker=symbol,
            color=col,
            ms=7 if kind != "status" else 12,
            ls="none",
            markeredgecolor="white" if kind not in ("status", "store_failed") else col,
            mew=0.5,
        )
    for (on, t), marker in placed:
        style = MARKER_STYLES.get(marker.style, MARKER_STYLES["note"])
        yc = centre[on] if on is not None else lanes_top
        ax.plot([x(t)], [yc], marker="o", ms=14, mfc="none", mec=style["ring"], mew=style["ring_width"], zorder=5)
    for name in lanes:
        for placed_label in rows[name].labels:
            y_top = centre[name] - CORE_PT / 2 - placed_label.row * ROW_PT
            _text(ax, data(placed_label.x_pt), y_top, placed_label)
    for placed_label in top.labels:
        _text(ax, data(placed_label.x_pt), height - 2 - placed_label.row * ROW_PT, placed_label)
    for placed_label in gaps.labels:
        _text(ax, data(placed_label.x_pt), gap_h - 2 - placed_label.row * ROW_PT, placed_label)

    chosen = _ticks(x, pt)
    ax.set_xticks([x(t) for t in chosen], [f"{t:g}" for t in chosen], fontsize=LABEL_PT)
    ax.set_yticks([centre[name] for name in lanes], lanes, fontsize=LANE_NAME_PT)
    ax.tick_params(axis="y", length=0)
    time_label = "simulated time (s); idle gaps between dotted lines are compressed (⋯ n s ⋯)"
    if under is None:
        ax.set_xlabel(time_label, fontsize=LABEL_PT)
    else:  # under the lanes, on their x: it inherits their limits and ticks, and takes the time axis's label
        below = fig.add_axes(
            (ax.get_position().x0, (0.62 + legend_in) / fig_h, ax.get_position().width, under.height_in / fig_h),
            sharex=ax,
        )
        under.draw(below, x)
        below.set_xlim(x_lo, x_hi)
        below.tick_params(axis="both", labelsize=LABEL_PT)
        below.set_xlabel(time_label, fontsize=LABEL_PT)
    if title:
        fig.text(LEFT_IN / WIDTH_IN, 1 - 0.1 / fig_h, title, fontsize=TITLE_PT, va="top", ha="left")
    fig.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, (0.62 + legend_in - 0.55) / fig_h),
        ncol=5,
        fontsize=LABEL_PT,
        frameon=False,
        columnspacing=1.4,
        handletextpad=0.5,
    )
    return fig


def violation_markers(verdict: Verdict) -> list[LaneMarker]:
    """A violation's markers: its witness records (the last, the violating event, named with the invariant)
    and the records its explanation cites, by number."""
    return witness_markers(verdict.witness, verdict.name, cited_records(verdict.explanation))


def violation_figure(
    history: Sequence[Op],
    verdict: Verdict,
    title: str = "",
    markers: Sequence[LaneMarker] = (),
    under: Panel | None = None,
) -> ReportFigure:
    """The lanes of one violation: the runs its witness records belong to (and records of no run), its
    markers (:func:`violation_markers`), any extra ``markers`` and a panel ``under`` them."""
    by_index = {op.index: op for op in history}
    runs = {by_index[i].run for i in verdict.witness if i in by_index and by_index[i].run}
    drawn = only_runs(history, runs)
    return figure(drawn, title=title or verdict.name, markers=[*violation_markers(verdict), *markers], under=under)


def _text(ax: Any, x_data: float, y_top: float, label: _Label) -> None:
    ax.text(
        x_data, y_top, label.text, fontsize=LABEL_PT, ha="left", va="top", color=label.colour, fontweight=label.weight
    )


def _ticks(x: _Compressed, pt: Any) -> list[float]:
    """Tick times at the axis's joints (event times and gap edges), none closer to the last than its label."""
    chosen: list[float] = []
    right_pt = -1e9
    for t in sorted({round(t, 1) for t in x.src}):
        half = text_width_pt(f"{t:g}") / 2
        if pt(t) - half >= right_pt + PAD_PT * 1.5:
            chosen.append(t)
            right_pt = pt(t) + half
    return chosen


def _legend() -> list[Any]:
    handles: list[Any] = [
        Line2D([], [], marker=MARKS[k][0], color=MARKS[k][1], ls="none", label=MARKS[k][2]) for k in LEGEND_KINDS
    ]
    handles += [
        Patch(facecolor="#9ecae1", edgecolor="#3182bd", label="lease held"),
        Patch(facecolor="none", edgecolor="#d62728", hatch="////", label="working after lease expired"),
        Patch(facecolor="#fbb4ae", alpha=0.6, label="fault period (dashed: fault instant)"),
        Line2D([], [], color="#ff7f0e", label="tool call to landing"),
        Line2D(
            [], [], marker="o", ms=10, mfc="none", mec="#b2182b", mew=1.6, ls="none", label="#n: record n (witness)"
        ),
    ]
    return handles
