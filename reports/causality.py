"""The causality curve of a counterexample, for a reader: intervals, words, a table and a figure.

Reads the plain data the simulator measured (``sim.explore.causality.Curve.document()``: per point
the records kept, its time, why it was chosen, how many of its suffix draws ended in the same
violation; the decisive moments with their records and faults) and the counterexample's history.
Adds the Wilson 95% interval of every point (:func:`reports.stats.wilson`), names each decisive
moment's record as the text timeline does (:func:`reports.timeline.describe`), and writes one sentence
saying when the history was doomed. :func:`panel` is the curve as a :class:`reports.swimlane.Panel`, drawn
under a counterexample's swim lanes on their time axis, and :func:`moment_markers` ring the decisive
moments' records on the lanes (:class:`reports.lanes.LaneMarker`), so each moment is marked on both;
:func:`figure` draws the curve alone. Built without pyplot (:mod:`reports.canvas`). Knows nothing of the
simulator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from checks.history import Op
from reports.canvas import ReportFigure, new_figure, styled
from reports.stats import DASH, percent, wilson
from reports.swimlane import LABEL_PT, MARKER_STYLES, TICKS_IN, Panel, text_width_pt
from reports.timeline import describe

CURVE_COLOUR = "#24518f"
FAULT_COLOUR = "#d6604d"
MOMENT_STYLE = "moment"
MOMENT_COLOUR = str(MARKER_STYLES[MOMENT_STYLE]["colour"])
KEY_POINTS = ("start", "before fault", "after fault", "violated")
"""Points the small table always shows (with both points of every decisive moment)."""
WHY = {
    "start": "nothing kept: the whole run drawn afresh",
    "before fault": "just before the fault {fault} was decided",
    "after fault": "just after the fault {fault} was decided",
    "violated": "the violation's last witness record kept",
    "between": "evenly spaced",
    "bisect": "narrowing a jump",
}


def fault_text(line: str) -> str:
    """A fault's script line with its value to 3 significant digits (the file keeps the exact value)."""
    parts = line.split()
    try:
        return " ".join([*parts[:3], f"{float(parts[3]):.3g}"]) if len(parts) == 4 else line
    except ValueError:
        return line


def record_text(history: Sequence[Op] | None, index: int) -> str:
    """'#115 nemesis ⚡ slow/stretch on worker1' (the record as the text timeline shows it)."""
    if history is None or not 0 <= index < len(history):
        return f"#{index}"
    op = history[index]
    text = describe(op, verbose=True) or f"{op.op} {op.type.value}"
    return f"#{op.index} {op.process} {text}".strip()


def _share(same: int, draws: int) -> dict[str, Any]:
    lower, upper = wilson(same, draws)
    share = same / draws if draws else 0.0
    return {
        "share": share,
        "lower": lower,
        "upper": upper,
        "text": f"{percent(share)} [{percent(lower).rstrip('%')}{DASH}{percent(upper)}]",
    }


def view(curve: Mapping[str, Any], history: Sequence[Op] | None = None) -> dict[str, Any]:
    """The curve with intervals, words and the rows of its small table (plain data for templates and JSON)."""
    points = []
    for p in curve["points"]:
        why = WHY.get(p["why"], p["why"]).format(fault=fault_text(p.get("fault", "")))
        kept = "nothing" if p["cut"] == 0 else f"{p['cut']:,} record{'s' if p['cut'] != 1 else ''}"
        points.append({**p, **_share(p["same"], p["draws"]), "what": why, "kept": kept, "moment": ""})
    moments = []
    by_cut = {p["cut"]: p for p in points}
    for i, m in enumerate(curve["moments"]):
        named = record_text(history, m["record"])
        faults = ", ".join(fault_text(f) for f in m["faults"])
        label = f"◆{i + 1}"
        moments.append(
            {
                **m,
                "label": label,
                "record_text": named,
                "fault_text": faults,
                "before_text": by_cut[m["from_cut"]]["text"],
                "after_text": by_cut[m["to_cut"]]["text"],
                "text": f"{label} at {m['time_s']:,.1f} s, {named}" + (f" (fault {faults})" if faults else ""),
            }
        )
        by_cut[m["to_cut"]]["moment"] = label
    shown = {m["from_cut"] for m in curve["moments"]} | {m["to_cut"] for m in curve["moments"]}
    rows = [p for p in points if p["why"] in KEY_POINTS or p["cut"] in shown]
    return {
        **curve,
        "draws_text": draws_text(points, int(curve["draws"])),
        "points": points,
        "rows": rows,
        "moments": moments,
        "sentence": sentence(curve, points, moments),
    }


def draws_text(points: Sequence[Mapping[str, Any]], most: int) -> str:
    """How many fresh continuations a point drew: '93', or '16-93' (an en dash) when points stopped early (a point
    draws until its Wilson 95% interval is at most ±10 points, ``sim.explore.causality``)."""
    drawn = sorted({int(p["draws"]) for p in points}) or [most]
    return str(drawn[0]) if drawn[0] == drawn[-1] else f"{drawn[0]}{DASH}{drawn[-1]}"


def sentence(
    curve: Mapping[str, Any], points: Sequence[Mapping[str, Any]], moments: Sequence[Mapping[str, Any]]
) -> str:
    """When it was doomed, in one or two sentences written from the numbers."""
    same = f"the same violation ({curve['invariant']}, {curve['explanation']})"
    start = points[0] if points and points[0]["cut"] == 0 else None
    if moments:
        top = max(moments, key=lambda m: abs(m["after"] - m["before"]))
        cause = f"the fault {top['fault_text']} ({top['record_text']})" if top["fault_text"] else top["record_text"]
        lead = "Doomed at" if top["after"] >= 0.9 else "Decided most at"
        text = (
            f"{lead} {top['time_s']:,.1f} s by {cause}: {same} followed in {top['before_text']} of fresh "
            f"continuations just before, {top['after_text']} just after."
        )
        if len(moments) > 1:
            text += f" {len(moments)} decisive moments in all."
    elif start is not None and start["share"] >= 0.9:
        text = (
            f"Doomed from the start: with nothing kept, {start['text']} of fresh runs end in {same}; "
            "no fault or moment decides it (a design defect, or a scenario that forces it)."
        )
    elif points:
        text = (
            f"No decisive moment: {same} follows in {points[0]['text']} of fresh runs at the start and "
            f"{points[-1]['text']} once the violation is visible, with no step of "
            f"{percent(float(curve.get('jump', 0.25)))} or more between neighbouring points."
        )
    else:
        text = "Not measured: the time box allowed no point."
    if not curve["complete"]:
        text += f" Time-boxed: {len(points)} point{'s' if len(points) != 1 else ''} evaluated."
    if not curve["reproduced"]:
        text = "The replay did not reproduce the file's history; this is the curve of the history it gave. " + text
    return text


def lines(curve: Mapping[str, Any], history: Sequence[Op] | None = None) -> list[str]:
    """The curve as text: every point with its interval, then the decisive moments and the sentence."""
    shown = view(curve, history)
    out = [
        f"causality: P(same violation | history up to t), {shown['draws_text']} fresh continuations per point "
        f"(each drawn until its Wilson 95% interval is at most ±10 points)",
        f"{'t (s)':>10}  {'kept':>13}  {'P(same violation) [95%]':<24}  point",
    ]
    for p in shown["points"]:
        mark = f"  {p['moment']}" if p["moment"] else ""
        out.append(f"{p['time_s']:>10,.2f}  {p['kept']:>13}  {p['text']:<24}  {p['what']}{mark}")
    for m in shown["moments"]:
        out.append(f"decisive: {m['text']}: {m['before_text']} -> {m['after_text']}")
    out.append(shown["sentence"])
    out.append(f"({shown['simulations']:,} simulations, {shown['cpu_s']:.1f} CPU s)")
    return out


def moment_markers(shown: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The decisive moments of a curve (its :func:`view`) as lane markers (the fields of
    :class:`reports.lanes.LaneMarker`): each ringed on its record's lane, or at its time above the lanes
    when the figure leaves that record's run out, labelled '◆1 decisive: 3% → 97%'."""
    return [
        {
            "label": f"{m['label']} decisive: {percent(m['before'])} → {percent(m['after'])}",
            "record": m["record"],
            "time_s": m["time_s"],
            "style": MOMENT_STYLE,
        }
        for m in shown["moments"]
    ]


def _legend(draws: str, *, on_lanes: bool = True) -> tuple[Any, ...]:
    moment = "decisive moment ◆" + (" (ringed on the lanes)" if on_lanes else "")
    return (
        Line2D([], [], color=CURVE_COLOUR, lw=1.6, label=f"P(same violation): share of {draws} fresh continuations"),
        Patch(facecolor=CURVE_COLOUR, alpha=0.15, label="its Wilson 95% interval"),
        Line2D([], [], marker="D", color=FAULT_COLOUR, ls="none", ms=5, label="just before / after a fault"),
        Line2D([], [], color=MOMENT_COLOUR, ls="--", lw=1.2, label=moment),
    )


MOMENT_ROW_PT = 12.5
"""Pitch of the rows of moment labels above the curve."""
MOMENT_ROWS = 2


def _draw(ax: Axes, shown: Mapping[str, Any], x: Callable[[float], float]) -> None:
    """The curve on ``ax`` at the times ``x`` gives: a step per point, its interval shaded, fault points as
    diamonds, each decisive moment a dashed line labelled above the axes."""
    ax.grid(False)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_ylim(-0.04, 1.04)
    ax.set_yticks([0, 0.5, 1], ["0", "½", "1"])
    # Horizontal, as every label of the lanes: read without turning the head, measured as drawn.
    ax.set_ylabel("P(same\nviolation)", fontsize=LABEL_PT, rotation=0, ha="right", va="center", labelpad=6)
    points = shown["points"]
    if not points:
        return
    xs = [x(p["time_s"]) for p in points]
    lower, upper = [p["lower"] for p in points], [p["upper"] for p in points]
    ax.fill_between(xs, lower, upper, step="post", color=CURVE_COLOUR, alpha=0.15, lw=0)
    if len(points) == 1:  # a time box that allowed one point: its interval has no step to shade
        ax.vlines(xs, lower, upper, color=CURVE_COLOUR, alpha=0.3, lw=4)
    ax.step(xs, [p["share"] for p in points], where="post", color=CURVE_COLOUR, lw=1.6)
    for p, at in zip(points, xs, strict=True):
        fault = p["why"] in ("before fault", "after fault")
        ax.plot([at], [p["share"]], marker="D" if fault else "o", ms=5 if fault else 3.5,
                color=FAULT_COLOUR if fault else CURVE_COLOUR, ls="none", zorder=3)  # fmt: skip
    # Moment labels in rows above the axes, the next row when the last label of a row is too close.
    width_pt = ax.get_window_extent().width * 72 / ax.figure.dpi  # the axes' width in points
    lo, hi = ax.get_xlim() if ax.get_xlim()[1] > ax.get_xlim()[0] else (min(xs), max(xs) or 1.0)
    row_end = [-1e9] * MOMENT_ROWS
    for i, m in enumerate(sorted(shown["moments"], key=lambda m: float(m["time_s"]))):
        at = x(m["time_s"])
        ax.axvline(at, color=MOMENT_COLOUR, lw=1.2, ls="--")
        at_pt = (at - lo) / (hi - lo) * width_pt
        row = next((r for r in range(MOMENT_ROWS) if at_pt >= row_end[r]), i % MOMENT_ROWS)
        row_end[row] = at_pt + text_width_pt(m["label"], weight="bold") + 4.0
        ax.annotate(m["label"], (at, 1.0), xycoords=("data", "axes fraction"), xytext=(2, 3 + row * MOMENT_ROW_PT),
                    textcoords="offset points", fontsize=LABEL_PT, color=MOMENT_COLOUR, fontweight="bold",
                    va="bottom", ha="left", annotation_clip=False)  # fmt: skip


def panel(shown: Mapping[str, Any]) -> Panel:
    """The curve (its :func:`view`) as a panel under a swim-lane figure (``reports.swimlane.figure(...,
    under=panel(shown), markers=moment markers)``): drawn on the lanes' time axis, its legend joining theirs."""
    return Panel(
        draw=lambda ax, x: _draw(ax, shown, x),
        height_in=1.2,
        above_in=0.12 + MOMENT_ROWS * MOMENT_ROW_PT / 72,
        legend=_legend(str(shown["draws_text"])),
    )


@styled
def figure(shown: Mapping[str, Any], title: str = "") -> ReportFigure:
    """The curve (its :func:`view`) alone, on simulated seconds (no compression)."""
    legend_in, axes_in, above_in, title_in = 0.6, 1.4, 0.12 + MOMENT_ROWS * MOMENT_ROW_PT / 72, 0.3 if title else 0.0
    height_in = legend_in + TICKS_IN + 0.3 + axes_in + above_in + title_in
    width_in, left_in = 10.0, 1.0
    fig = new_figure(width_in, height_in)
    bottom_in = legend_in + TICKS_IN + 0.3
    ax = fig.add_axes((left_in / width_in, bottom_in / height_in, 1 - (left_in + 0.2) / width_in, axes_in / height_in))
    ax.set_xlim(-0.5, max([float(p["time_s"]) for p in shown["points"]], default=1.0) * 1.02 + 0.5)
    _draw(ax, shown, float)
    ax.tick_params(axis="both", labelsize=LABEL_PT)
    ax.set_xlabel("simulated time (s)", fontsize=LABEL_PT)
    handles = _legend(str(shown["draws_text"]), on_lanes=False)
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, legend_in / height_in), ncol=2,
               fontsize=LABEL_PT, frameon=False)  # fmt: skip
    if title:
        fig.text(left_in / width_in, 1 - 0.08 / height_in, title, fontsize=LABEL_PT + 1, va="top", ha="left")
    return fig
