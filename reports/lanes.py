"""What the swim lanes of one history (a counterexample) show, as plain data: :class:`Picture`.

One lane per worker, client and approver process, the reaper, the message bus and the run
store. On each lane: the lease a worker holds (and where its segment went on working after the
lease expired, the zombie window), the write fence stamped and cleared, tool calls started and
the side effect landed, audit inserts stored or failed, reaper decisions, crashes; faults as
periods or instants. Beyond what the history draws by itself, a caller adds :class:`LaneMarker`
records (the checker's witness records, later anything else worth pointing at); each record of
the history knows its lane and time (``Picture.record_at``), so a marker can name a record only.

:mod:`reports.swimlane` draws a Picture. Reads only :mod:`checks.history` records: knows nothing
of the simulator that produced them, nor of matplotlib.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from checks import history as H
from checks.history import Op, OpType

BUS = "bus"
STORE = "store"
MAX_CLIENT_LANES = 4


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
    record_at: dict[int, tuple[str, float]] = field(default_factory=dict)
    """History index -> (lane, time) where that record is drawn, for markers that name a record."""


@dataclass(frozen=True)
class LaneMarker:
    """An extra mark on the lanes: a record of the history (drawn on its lane at its time) or a time.

    ``style`` is a key of :data:`reports.swimlane.MARKER_STYLES` ('violation', 'witness', 'cited',
    'moment', 'note'); ``label`` is written beside the mark, in the lane's label rows."""

    label: str
    record: int | None = None
    time_s: float | None = None
    lane: str | None = None
    """For a time marker: the lane it belongs on (None: the top band, above every lane)."""
    style: str = "note"

    def place(self, pic: Picture) -> tuple[str | None, float] | None:
        """(lane, time) of this marker in ``pic``: its record's, else (a record the picture lacks, e.g. one of
        a run the figure leaves out) its time when it has one, else None."""
        if self.record is not None and self.record in pic.record_at:
            return pic.record_at[self.record]
        if self.time_s is None:
            return None
        return (self.lane if self.lane in pic.lanes else None), self.time_s


def witness_markers(witness: Sequence[int], invariant: str, cited: Iterable[int] = ()) -> list[LaneMarker]:
    """Markers for a violation: each witness record and each record the checker's text cites, by number.

    The last witness record is the violating event (the record that made the violation certain: the
    second landing, the settle after a failed audit, the write under a stale row), named with the
    invariant; the others are labelled with their number only, as the text cites them."""
    if not witness:
        return []
    violating = max(witness)
    records = sorted(set(witness) | set(cited))
    return [
        LaneMarker(
            f"#{r} violates {invariant}" if r == violating else f"#{r}",
            record=r,
            style="violation" if r == violating else "witness" if r in witness else "cited",
        )
        for r in records
    ]


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
    epoch_s = H.epoch_of(history)  # lease_expires is a clock reading: minus this, a time on the lanes' axis
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
        elif op.op == H.IDLE:  # a reaper tick that found nothing: a segment too
            segments.setdefault(lane(op.process), []).append((op.value["invoked_s"], op.time_s))

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
        pic.record_at[op.index] = (_record_lane(op, lane, identity_lane), op.time_s)
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
                lease = row.get("lease_expires")
                expires[run] = float(lease) - epoch_s if lease else op.time_s
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
            label = "" if ok else f"{v.get('kind', '')} event not stored"
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
    order = [lane for lane in lane_order(used)]
    for fixed in ("reaper", BUS, STORE):
        if fixed not in order:
            order.append(fixed)
    pic.lanes = lane_order(set(order))
    return pic


def _record_lane(op: Op, lane: Callable[[str], str], identity_lane: dict[str, str]) -> str:
    """The lane a record belongs on: a landing on its caller's, a crash on the crashed process's, a fault
    or a world record on the store's, anything else on the lane of the process that issued it."""
    if op.op == H.LANDING:
        return identity_lane.get(str(op.value.get("identity", "")), STORE)
    if op.op == H.CRASH:
        return lane(str(op.value.get("process", "")))
    if op.process in (H.NEMESIS, H.WORLD):
        return STORE
    return lane(op.process)


def lane_order(lanes: set[str]) -> list[str]:
    def key(name: str) -> tuple[int, str]:
        for rank, prefix in enumerate(("client", "worker", "approver", "reaper", BUS, STORE)):
            if name.startswith(prefix):
                return rank, name
        return 9, name

    return sorted(lanes, key=key)


def only_runs(history: Sequence[Op], runs: Iterable[str]) -> list[Op]:
    """The records of ``runs`` plus those of no run (phases, crashes, reaper passes); all when empty."""
    keep = set(runs)
    return [op for op in history if not keep or not op.run or op.run in keep]
