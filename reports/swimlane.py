"""A swim-lane picture of one history (a counterexample): what each process did, when.

One lane per worker, client and approver process, the reaper, the message bus and the run
store. Drawn on each lane: the lease a worker holds (solid bar; hatched red where its segment
went on working after the lease expired, the zombie window), the write fence stamped and
cleared, tool calls started and the side effect landed, audit inserts stored or failed,
reaper decisions, crashes, and faults as shaded periods (a slow fault over its duration) or
lines. Long idle gaps (the reaper's interval, the quiet phase) are compressed and marked so
the interesting seconds stay readable.

Reads only :mod:`model.history` records: knows nothing of the simulator that produced them.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from model import history as H
from model.history import Op, OpType

BUS = "bus"
STORE = "store"
MAX_CLIENT_LANES = 4
GAP_S = 5.0
"""Idle gaps longer than this many simulated seconds are compressed."""


def lane_of(process: str) -> str:
    """The lane a process draws on: the process name without its restart generation ('worker1#2' ->
    'worker1'), a shared 'clients' lane beyond a few clients, the nemesis and world never."""
    return re.sub(r"#\d+$", "", process)


@dataclass
class _Span:
    lane: str
    run: str
    start: float
    end: float
    zombie_end: float | None = None


@dataclass
class Picture:
    """What the figure draws, in simulated seconds (testable without matplotlib)."""

    lanes: list[str] = field(default_factory=list)
    spans: list[_Span] = field(default_factory=list)
    marks: list[tuple[str, float, str, str]] = field(default_factory=list)
    """(lane, time, kind, label)"""
    faults: list[tuple[float, float, str]] = field(default_factory=list)
    """(start, end, label); end == start for an instant fault"""
    links: list[tuple[str, float, float]] = field(default_factory=list)
    """(lane, tool call started, side effect landed)"""
    quiet_at: float | None = None
    end: float = 0.0


MARKS = {
    "fence_stamped": ("^", "#d62728", "fence stamped"),
    "fence_cleared": ("v", "#2ca02c", "fence cleared"),
    "tool_started": (">", "#1f77b4", "tool call started"),
    "landed": ("*", "#ff7f0e", "side effect landed"),
    "audit_ok": ("o", "#2ca02c", "audit insert stored"),
    "audit_failed": ("X", "#d62728", "audit insert failed"),
    "reaper": ("D", "#9467bd", "reaper decision"),
    "crash": ("P", "#000000", "process crashed"),
    "store_failed": ("x", "#d62728", "store update failed"),
    "status": ("|", "#555555", "row status change"),
    "dispatch": ("s", "#17becf", "wake-up dispatched"),
    "dispatch_failed": ("s", "#d62728", "wake-up dispatch threw"),
    "deliver": ("d", "#17becf", "wake-up delivered"),
    "settle": ("|", "#555555", "store update"),
}


def picture(history: Sequence[Op]) -> Picture:
    """Extract what to draw from a history."""
    pic = Picture()
    identity_lane: dict[str, str] = {}
    clients = sorted({lane_of(op.process) for op in history if op.process.startswith("client")})
    merge_clients = len(clients) > MAX_CLIENT_LANES

    def lane(process: str) -> str:
        name = lane_of(process)
        if merge_clients and name.startswith("client"):
            return "clients"
        if name.startswith("reaper"):
            return "reaper"
        return name

    holder: dict[str, _Span] = {}
    expires: dict[str, float] = {}
    fence: dict[str, str] = {}
    status: dict[str, str] = {}
    segments: dict[str, list[tuple[float, float]]] = {}
    open_tools: dict[tuple[str, str], float] = {}
    started: dict[str, float] = {}
    for op in history:
        if op.op == H.SEGMENT and op.type is OpType.INVOKE:
            started[op.process] = op.time_s
        elif op.op == H.SEGMENT:
            begin = started.pop(op.process, op.time_s)
            segments.setdefault(lane(op.process), []).append((begin, op.time_s))

    def working_until(lane_name: str, expiry: float) -> float | None:
        """When a segment of the lane that was running at ``expiry`` ended (a zombie), else None."""
        ends = [end for begin, end in segments.get(lane_name, []) if begin <= expiry < end]
        return max(ends) if ends else None

    for op in history:
        v = op.value
        ident = v.get("identity") if isinstance(v.get("identity"), str) else None
        if ident and op.process not in (H.NEMESIS, H.WORLD):
            identity_lane.setdefault(ident, lane(op.process))
        pic.end = max(pic.end, op.time_s)
        if op.op == H.PHASE and v.get("phase") == "quiet":
            pic.quiet_at = op.time_s
        elif op.op == H.STORE and op.type is OpType.OK and v.get("matched") and v.get("row"):
            row = v["row"]
            run = op.run
            who = lane(op.process)
            running = row.get("status") == "running" or str(row.get("status", "")).upper() == "RUNNING"
            claimed = row.get("claimed_by") or ""
            span = holder.get(run)
            if span is not None and (not running or identity_lane.get(claimed, who) != span.lane):
                span.end = min(op.time_s, expires.get(run, op.time_s))
                if op.time_s > span.end:
                    span.zombie_end = working_until(span.lane, span.end)
                del holder[run]
            if running and claimed:
                owner = identity_lane.get(claimed, who)
                if run not in holder:
                    holder[run] = _Span(owner, run, op.time_s, op.time_s)
                    pic.spans.append(holder[run])
                expires[run] = float(row.get("lease_expires") or op.time_s)
            pending = str(row.get("pending_effect") or "")
            if pending != fence.get(run, ""):
                kind = "fence_stamped" if pending else "fence_cleared"
                pic.marks.append((who, op.time_s, kind, pending.replace("_", " ") if pending else ""))
                fence[run] = pending
            new_status = str(row.get("status", ""))
            if new_status != status.get(run):
                pic.marks.append((STORE, op.time_s, "status", f"{run} {new_status}"))
                status[run] = new_status
        elif op.op == H.STORE and op.type is OpType.FAIL:
            pic.marks.append((STORE, op.time_s, "store_failed", str(v.get("transition", ""))))
        elif op.op == H.EVENT and op.type is not OpType.INVOKE:
            ok = op.type is OpType.OK
            label = "" if ok else str(v.get("kind", ""))
            pic.marks.append((lane(op.process), op.time_s, "audit_ok" if ok else "audit_failed", label))
        elif op.op == H.TOOL and op.type is OpType.INVOKE:
            pic.marks.append((lane(op.process), op.time_s, "tool_started", str(v.get("tool", ""))))
            open_tools[(op.run, str(v.get("call", "")))] = op.time_s
        elif op.op == H.LANDING:
            where = identity_lane.get(str(v.get("identity", "")), "store")
            pic.marks.append((where, op.time_s, "landed", f"#{v.get('execution', '')}"))
            call_start = open_tools.pop((op.run, str(v.get("call", ""))), None)
            if call_start is not None:
                pic.links.append((where, call_start, op.time_s))
        elif op.op == H.DECIDE:
            pic.marks.append((lane(op.process), op.time_s, "reaper", str(v.get("decision", ""))))
        elif op.op == H.DISPATCH and op.type is not OpType.INVOKE:
            pic.marks.append((BUS, op.time_s, "dispatch" if op.type is OpType.OK else "dispatch_failed", ""))
        elif op.op == H.DELIVER:
            pic.marks.append((BUS, op.time_s, "deliver", "dup" if v.get("duplicate") else ""))
        elif op.op == H.CRASH:
            pic.marks.append((lane(str(v.get("process", ""))), op.time_s, "crash", "crash"))
        elif op.op == H.FAULT:
            duration = float(v.get("duration_s") or v.get("slow_s") or 0.0)
            pic.faults.append((op.time_s, op.time_s + duration, f"{v.get('family')}/{v.get('kind')}"))
    for span in holder.values():
        span.end = max(span.start, min(pic.end, expires.get(span.run, pic.end)))
        if pic.end > span.end:
            span.zombie_end = working_until(span.lane, span.end)
    used = {m[0] for m in pic.marks} | {s.lane for s in pic.spans}
    order = [lane for lane in _lane_order(used)]
    for fixed in ("reaper", BUS, STORE):
        if fixed not in order:
            order.append(fixed)
    pic.lanes = _lane_order(set(order))
    return pic


def _lane_order(lanes: set[str]) -> list[str]:
    def key(name: str) -> tuple[int, str]:
        for rank, prefix in enumerate(("client", "worker", "approver", "reaper", BUS, STORE)):
            if name.startswith(prefix):
                return rank, name
        return 9, name

    return sorted(lanes, key=key)


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


def _axis(pic: Picture) -> _Compressed:
    times = [m[1] for m in pic.marks] + [s.start for s in pic.spans] + [s.end for s in pic.spans]
    times += [s.zombie_end for s in pic.spans if s.zombie_end is not None]
    times += [f[0] for f in pic.faults] + [f[1] for f in pic.faults] + [0.0]
    if pic.quiet_at is not None:
        times.append(pic.quiet_at)  # else the axis runs on uncompressed to the quiet phase's line
    return _Compressed(times, GAP_S)


def time_axis(history: Sequence[Op]) -> Callable[[float], float]:
    """The figure's x of a simulated time (idle gaps compressed): what is drawn beside the lanes
    (:mod:`reports.causality`) uses it to share their time axis."""
    return _axis(picture(history))


def figure(history: Sequence[Op], title: str = "") -> Figure:
    """The swim-lane figure of a history."""
    pic = picture(history)
    x = _axis(pic)
    y_of = {name: len(pic.lanes) - 1 - i for i, name in enumerate(pic.lanes)}
    fig, ax = plt.subplots(figsize=(11.5, 0.48 * len(pic.lanes) + 1.9))
    fault_labels: dict[float, list[str]] = {}
    for start, end, label in pic.faults:
        if end > start:
            ax.axvspan(x(start), x(end), color="#fbb4ae", alpha=0.3, lw=0)
        ax.axvline(x(start), color="#d6604d", lw=1.1, alpha=0.8, ls=(0, (2, 2)))
        fault_labels.setdefault(x(start), []).append(label)
    label_room = (x.dst[-1] or 1.0) / 150  # about one character of the 7-point font
    row_ends: list[float] = []
    for at, labels in sorted(fault_labels.items()):
        text = " ⚡" + ", ".join(labels)
        row = next((r for r, end in enumerate(row_ends) if end < at), len(row_ends))  # stack close labels
        if row == len(row_ends):
            row_ends.append(0.0)
        row_ends[row] = at + label_room * len(text)
        ax.text(at, len(pic.lanes) - 0.45 + 0.3 * row, text, fontsize=7, color="#b2182b", va="bottom", ha="left")
    for span in pic.spans:
        y = y_of[span.lane]
        ax.barh(
            y,
            x(span.end) - x(span.start),
            left=x(span.start),
            height=0.38,
            color="#9ecae1",
            edgecolor="#3182bd",
            lw=0.6,
        )
        ax.text(x(span.start), y + 0.24, f" lease {span.run}", fontsize=6.5, color="#08519c", va="bottom")
        if span.zombie_end is not None and span.zombie_end > span.end:
            ax.barh(
                y,
                x(span.zombie_end) - x(span.end),
                left=x(span.end),
                height=0.38,
                color="none",
                edgecolor="#d62728",
                hatch="////",
                lw=0.6,
            )
    for lane_name, start, landed in pic.links:
        y = y_of.get(lane_name, 0)
        ax.plot([x(start), x(landed)], [y - 0.28, y - 0.28], color="#ff7f0e", lw=1.2)
    label_ends: dict[tuple[str, int], float] = {}
    last_x: dict[str, float] = {}
    min_sep = (x.dst[-1] or 1.0) / 160
    per_char = (x.dst[-1] or 1.0) / 190
    for lane_name, t, kind, label in pic.marks:
        if lane_name not in y_of:
            continue
        marker, col, _ = MARKS[kind]
        y = y_of[lane_name]
        at = max(x(t), last_x.get(lane_name, -1e9) + min_sep)
        last_x[lane_name] = at
        ax.plot(
            [at],
            [y],
            marker=marker,
            color=col,
            ms=7 if kind != "status" else 12,
            ls="none",
            markeredgecolor="white" if kind not in ("status", "store_failed") else col,
            mew=0.5,
        )
        if label and kind in ("status", "reaper", "audit_failed", "store_failed", "tool_started", "crash"):
            for row in range(3):
                if label_ends.get((lane_name, row), -1e9) < at:
                    label_ends[(lane_name, row)] = at + per_char * (len(label) + 2)
                    ax.text(at, y - 0.28 - 0.2 * row, label, fontsize=6.3, ha="left", va="top", color="#333333")
                    break
    last_gap_label = -1e9
    for a, b in x.breaks:
        xm = x(a) + (x(b) - x(a)) / 2
        if xm - last_gap_label < per_char * 12:
            continue
        last_gap_label = xm
        for edge in (x(a), x(b)):
            ax.axvline(edge, color="#bbbbbb", lw=0.6, ls=":", zorder=0)
        ax.text(xm, -0.85, f"⋯ {b - a:,.0f} s ⋯", ha="center", fontsize=6.5, color="#666666")
    if pic.quiet_at is not None:
        ax.axvline(x(pic.quiet_at), color="#555555", lw=0.8, ls="--")
        ax.text(x(pic.quiet_at), len(pic.lanes) - 0.5, " quiet phase (faults healed)", fontsize=7, color="#555555")
    ticks = sorted({round(t, 1) for t in x.src})
    chosen: list[float] = []
    for t in ticks:
        if not chosen or x(t) - x(chosen[-1]) >= (x.dst[-1] or 1) / 14:
            chosen.append(t)
    ax.set_xticks([x(t) for t in chosen], [f"{t:g}" for t in chosen], fontsize=7)
    ax.set_yticks(range(len(pic.lanes)), pic.lanes[::-1])
    ax.set_ylim(-1.1, len(pic.lanes) - 0.1)
    ax.set_xlabel("simulated time (s); idle gaps between dotted lines are compressed (⋯ n s ⋯)")
    ax.grid(False)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    if title:
        ax.set_title(title, fontsize=9, loc="left", pad=6 + 10 * len(row_ends))  # above the fault labels
    handles: list[Any] = [
        Line2D([], [], marker=m, color=c, ls="none", label=text)
        for m, c, text in (
            MARKS[k]
            for k in (
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
        )
    ]
    handles += [
        Patch(facecolor="#9ecae1", edgecolor="#3182bd", label="lease held"),
        Patch(facecolor="none", edgecolor="#d62728", hatch="////", label="working after lease expired"),
        Patch(facecolor="#fbb4ae", alpha=0.6, label="fault period (dashed: fault instant)"),
        Line2D([], [], color="#ff7f0e", label="tool call to landing"),
    ]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=5, fontsize=7, frameon=False)
    fig.tight_layout()
    return fig
