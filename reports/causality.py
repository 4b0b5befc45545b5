"""The causality curve of a counterexample, for a reader: intervals, words, a table and a figure.

Reads the plain data the simulator measured (``sim.explore.causality.Curve.document()``: per point
the records kept, its time, why it was chosen, how many of its suffix draws ended in the same
violation; the decisive moments with their records and faults) and the counterexample's history.
Adds the Wilson 95% interval of every point (:func:`reports.stats.wilson`), names each decisive
moment's record as the text timeline does (:func:`reports.timeline.describe`), and writes one sentence
saying when the history was doomed. :func:`with_curve` adds the curve under a swim-lane figure on the
same time axis, the decisive moments marked on both; :func:`figure` draws it alone. Built with
``matplotlib.figure.Figure`` (no pyplot state). Knows nothing of the simulator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from model.history import Op
from reports.stats import DASH, percent, wilson
from reports.timeline import describe

CURVE_COLOUR = "#24518f"
MOMENT_COLOUR = "#6a3d9a"
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
        "points": points,
        "rows": rows,
        "moments": moments,
        "sentence": sentence(curve, points, moments),
    }


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
        f"causality: P(same violation | history up to t), {shown['draws']} fresh continuations per point "
        f"(Wilson 95% interval at most ±10 points)",
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


def _draw(ax: Axes, shown: Mapping[str, Any], x: Callable[[float], float]) -> None:
    points = shown["points"]
    if not points:
        return
    xs = [x(p["time_s"]) for p in points]
    ax.fill_between(
        xs,
        [p["lower"] for p in points],
        [p["upper"] for p in points],
        step="post",
        color=CURVE_COLOUR,
        alpha=0.15,
        lw=0,
    )
    ax.step(xs, [p["share"] for p in points], where="post", color=CURVE_COLOUR, lw=1.6)
    for p, at in zip(points, xs, strict=True):
        fault = p["why"] in ("before fault", "after fault")
        ax.plot([at], [p["share"]], marker="o" if not fault else "D", ms=3.5 if not fault else 4.5,
                color="#d6604d" if fault else CURVE_COLOUR, ls="none", zorder=3)  # fmt: skip
    for m in shown["moments"]:
        at = x(m["time_s"])
        ax.axvline(at, color=MOMENT_COLOUR, lw=1.2, ls="--")
        ax.text(at, 1.04, f" {m['label']} {m['record_text'][:46]}", fontsize=6.8, color=MOMENT_COLOUR, va="bottom",
                ha="left", clip_on=False)  # fmt: skip
    ax.legend(
        handles=[
            Line2D([], [], color=CURVE_COLOUR, lw=1.6, label=f"share of {shown['draws']} fresh continuations"),
            Patch(facecolor=CURVE_COLOUR, alpha=0.15, label="Wilson 95%"),
            Line2D([], [], marker="D", color="#d6604d", ls="none", ms=4.5, label="just before / after a fault"),
            Line2D([], [], color=MOMENT_COLOUR, ls="--", lw=1.2, label="decisive moment (◆ on the lanes)"),
        ],
        loc="center left",
        bbox_to_anchor=(1.005, 0.5),
        fontsize=6.5,
        frameon=False,
    )
    ax.set_ylim(-0.03, 1.03)
    ax.set_yticks([0, 0.5, 1], ["0", "½", "1"])
    ax.set_ylabel("P(same\nviolation)", fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)


PANEL_IN = 1.0
"""Height of the curve's axes under the lanes, in inches (plus room for its labels)."""


def with_curve(lanes: Figure, shown: Mapping[str, Any], x: Callable[[float], float]) -> Figure:
    """``lanes`` (a swim-lane figure with one axes) with the causality curve (its :func:`view`) added under it,
    on the lanes' own time axis ``x`` (``reports.swimlane.time_axis``), every decisive moment marked on both."""
    ax = lanes.axes[0]
    xlim = ax.get_xlim()
    width, height = lanes.get_size_inches()
    lanes.draw_without_rendering()
    tight = ax.get_tightbbox()
    free_in = max(0.0, tight.y0 / lanes.dpi) if tight is not None else 0.0  # below the lanes' legend
    extra = max(0.0, PANEL_IN + 0.95 - free_in)
    total = height + extra
    box = ax.get_position()
    ax.set_position((box.x0, (box.y0 * height + extra) / total, box.width, box.height * height / total))
    lanes.set_size_inches(width, total)
    below = lanes.add_axes((box.x0, 0.5 / total, box.width, PANEL_IN / total), sharex=ax)
    _draw(below, shown, x)
    below.set_xlabel("simulated time (s), the lanes' axis: when was it doomed?", fontsize=7.5)
    below.tick_params(axis="x", labelsize=7, labelbottom=True)
    for m in shown["moments"]:
        at = x(m["time_s"])
        ax.axvline(at, color=MOMENT_COLOUR, lw=2.4, alpha=0.35, zorder=0)
        ax.text(at, ax.get_ylim()[0] + 0.1, f" {m['label']}", fontsize=7.5, color=MOMENT_COLOUR, fontweight="bold")
    ax.set_xlim(xlim)
    return lanes


def figure(shown: Mapping[str, Any], title: str = "") -> Figure:
    """The curve (its :func:`view`) alone, on simulated seconds (no compression)."""
    fig = Figure(figsize=(10, 2.6))
    ax = fig.add_subplot()
    _draw(ax, shown, float)
    ax.set_xlabel("simulated time (s)", fontsize=8)
    if title:
        ax.set_title(title, fontsize=9, loc="left", pad=16)
    fig.tight_layout()
    return fig
