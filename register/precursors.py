"""Precursors: how far a history got along a registered finding's chain, read off its recogniser.

A finding's recogniser (:mod:`register.recognisers`) accepts a whole history; the guided explorer
(:mod:`sim.explore.footholds`) needs to know, of a history that did *not* show the finding, how many
of the chain's steps it took, and at which record each step was taken, so that it can cut the
history right after the deepest step and draw the rest afresh many times (multilevel splitting). Each
chain below is the recogniser's conditions in the order the world meets them; a step names the record
that takes it. Cutting right after that record keeps what the step decided (a stall's length is drawn
when the fault fires) and leaves the next decision (the next fault, a statement's latency) to the
branch.

The first steps of a chain are common (a stall past the lease strikes a third of fresh draws at
deployment ranges); the deeper ones are what is rare (a requeue and a new owner's claim while that
stall is still pending, the stalled segment returning to a row another segment still holds). A level
is the number of steps taken, so the explorer can prefer the deepest footholds.

Ground truth only: faults as the nemesis recorded them, store rows as they were written, the reaper's
recorded decisions. Knows the history's records; draws and runs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from checks import history as H
from checks.history import Op, OpType
from model.constants import LEASE_S, MAX_REQUEUES

CLAIMS = ("T3", "T10")
REQUEUES = ("T11", "T13")
POSITION_SITES = frozenset({"run_queued.position", "resume.position"})
TERMINAL = frozenset({"completed", "failed", "cancelled"})


@dataclass(frozen=True, slots=True)
class Progress:
    """How far one history got along one finding's chain: ``marks[k]`` is the record that took step
    ``k + 1`` (so the level is ``len(marks)``)."""

    finding: str
    marks: tuple[int, ...]

    @property
    def level(self) -> int:
        return len(self.marks)

    @property
    def cut(self) -> int:
        """Records a branch keeps: up to and including the deepest step's record."""
        return self.marks[-1] + 1 if self.marks else 0


def _number(op: Op) -> str:
    return str(op.value.get("transition", "")).partition(" ")[0]


def _stall(op: Op) -> float:
    """A store slow fault's length in seconds (0 when ``op`` is none)."""
    v = op.value
    if op.op != H.FAULT or v.get("family") != "store" or v.get("kind") != "slow":
        return 0.0
    raw = v.get("slow_s")
    return float(raw) if isinstance(raw, (int, float)) else 0.0


@dataclass
class _Trail:
    """One candidate binding of a chain (a run and the processes its steps name)."""

    run: str
    process: str
    marks: list[int]
    until: float = 0.0
    """When the first step's stall ends (true seconds)."""
    other: str = ""
    done: bool = False
    extra: dict[str, float] = field(default_factory=dict)


def _deepest(trails: Sequence[_Trail]) -> tuple[int, ...]:
    """The marks of the trail that got furthest (the earliest of equal ones)."""
    best: tuple[int, ...] = ()
    for trail in trails:
        if len(trail.marks) > len(best):
            best = tuple(trail.marks)
    return best


def _earliest(trails: Sequence[_Trail]) -> tuple[int, ...]:
    """Per level, the first record at which any trail reached it: a stopping time (decided by the history
    up to that record), which an unbiased splitting estimate needs (:mod:`sim.explore.splitting`)."""
    out: list[int] = []
    while True:
        at = [t.marks[len(out)] for t in trails if len(t.marks) > len(out)]
        if not at:
            return tuple(out)
        out.append(min(at))


def _stalled_position_read(history: Sequence[Op]) -> list[_Trail]:
    """F-15's chain: (1) a segment's first statement after its claim (T3, T10), the post-claim position
    read, stalls past the claim's lease; while it is stalled (2) the reaper requeues the run (T13) and
    (3) another segment claims it; (4) the stalled read returns 'running' while that other segment still
    holds the run. What is left is the next position read failing (the unguarded settle follows)."""
    last: dict[str, Op] = {}
    trails: list[_Trail] = []
    rows: dict[str, dict[str, object]] = {}
    for op in history:
        v = op.value
        if op.op == H.FAULT:
            target = str(v.get("target", ""))
            before = last.get(target)
            stall = _stall(op)
            if (
                stall
                and before is not None
                and before.op == H.STORE
                and before.type is OpType.OK
                and _number(before) in CLAIMS
                and op.time_s + stall > before.time_s + LEASE_S
            ):
                trails.append(_Trail(op.run, target, [op.index], until=op.time_s + stall))
            continue
        if op.op == H.STORE and op.type is OpType.OK and isinstance(v.get("row"), dict):
            rows[op.run] = v["row"]
        for trail in trails:
            if trail.done or op.run != trail.run:
                continue
            level = len(trail.marks)
            if op.process == trail.process:
                if (
                    level == 3
                    and op.op == H.READ
                    and op.type is OpType.OK
                    and v.get("site") in POSITION_SITES
                    and str(rows.get(op.run, {}).get("status", "")) not in TERMINAL
                ):
                    trail.marks.append(op.index)
                trail.done = True  # the stalled segment is back: the chain ends here either way
            elif op.op == H.STORE and op.type is OpType.OK:
                if level == 1 and _number(op) == "T13":
                    trail.marks.append(op.index)
                elif level == 2 and _number(op) in CLAIMS:
                    trail.marks.append(op.index)
                    trail.other = op.process
        last[op.process] = op
    return trails


def _stale_snapshot_requeue(history: Sequence[Op]) -> list[_Trail]:
    """F-18's chain: (1) a fence stamp (T5 at ``executor.fence``) stalls past its lease; while it is
    pending (2) the reaper decides to requeue the run on a snapshot without a fence and (3) its requeue
    (T13) stalls past the moment the stamp will commit; (4) the stamp commits while the requeue is
    still pending. What is left is the write still in flight when the requeue clears the fence, and the
    next attempt running it again."""
    last: dict[str, Op] = {}
    trails: list[_Trail] = []
    for op in history:
        v = op.value
        if op.op == H.FAULT:
            target = str(v.get("target", ""))
            before = last.get(target)
            stall = _stall(op)
            if (
                stall >= LEASE_S / 2
                and before is not None
                and before.op == H.STORE
                and before.type is OpType.INVOKE
                and _number(before) == "T5"
                and before.value.get("site") == "executor.fence"
            ):
                trails.append(_Trail(op.run, target, [op.index], until=op.time_s + stall))
            for trail in trails:
                if (
                    not trail.done
                    and len(trail.marks) == 2
                    and target == trail.other
                    and op.run == trail.run
                    and before is not None
                    and _number(before) == "T13"
                    and op.time_s + stall > trail.until
                ):
                    trail.marks.append(op.index)
            continue
        for trail in trails:
            if trail.done or op.run != trail.run:
                continue
            level = len(trail.marks)
            if op.process == trail.process and op.op == H.STORE and op.type is not OpType.INVOKE:
                if level == 3 and op.type is OpType.OK and _number(op) == "T5":
                    trail.marks.append(op.index)
                trail.done = True  # the stamp is back: before the requeue's decision it ends the route
            elif (
                level == 1
                and op.op == H.DECIDE
                and v.get("decider") == "reaper"
                and v.get("decision") == "requeue"
                and not v.get("pending_effect")
            ):
                trail.marks.append(op.index)
                trail.other = op.process
            elif level >= 2 and op.process == trail.other and op.op == H.STORE and op.type is not OpType.INVOKE:
                trail.done = level < 4  # the requeue came back before the stamp: not this route
        last[op.process] = op
    return trails


def _lagging_clock_fence(history: Sequence[Op]) -> list[_Trail]:
    """F-16's chain: (1) a process's clock lags true time by more than a lease; (2) while it lags, it
    stamps a non-idempotent fence (T5 at ``executor.fence``), so the lease it stamps is already past.
    What is left is a coincidence of timing, which no later step splits: the write must return and the
    live segment clear the fence (or renew) between the reaper's snapshot, which reads the fence, and
    its dead-letter's commit, a window of about one statement's latency at a reaper tick. The call's
    duration is drawn when it starts, right after the stamp, so a branch from the stamp draws it afresh;
    a step after it (the reaper's decision to dead-letter on the fence) would keep a duration already
    drawn, and its branches would only repeat it (measured: 0 of 72 branches from that step met F-16,
    against 86 of 300 fresh draws taking it)."""
    lag: dict[str, int] = {}
    first: int | None = None
    trails: list[_Trail] = []
    for op in history:
        v = op.value
        if op.op == H.FAULT and v.get("family") == "clock_skew":
            target = str(v.get("target", ""))
            offset = v.get("offset_s")
            if isinstance(offset, (int, float)) and offset < -LEASE_S:
                lag[target] = op.index
                first = op.index if first is None else first
            else:
                lag.pop(target, None)
            continue
        if op.op == H.PHASE and v.get("phase") == "quiet":
            lag.clear()
        if (
            op.op == H.STORE
            and op.type is OpType.OK
            and _number(op) == "T5"
            and v.get("site") == "executor.fence"
            and op.process in lag
            and isinstance(v.get("row"), dict)
            and v["row"].get("pending_effect") == "non_idempotent_write"
        ):
            trails.append(_Trail(op.run, op.process, [lag[op.process], op.index]))
    if first is not None:
        trails.insert(0, _Trail("", "", [first]))  # the first lag, which every trail below began from
    return trails


def _fenced_in_snapshot(op: Op, run: str) -> bool:
    """Whether ``op`` is a reaper's snapshot (T12, ``SelectStale``) listing ``run`` with the
    non-idempotent fence standing: the reaper will decide ``not_retryable`` on it (spec 5.1 3a)."""
    v = op.value
    if op.op != H.READ or op.type is not OpType.OK or v.get("what") != "SelectStale":
        return False
    listed, fences = v.get("result"), v.get("fences")
    if not isinstance(listed, list) or not isinstance(fences, list) or run not in listed:
        return False
    at = listed.index(run)
    return at < len(fences) and fences[at] == "non_idempotent_write"


def _stalled_clear(history: Sequence[Op]) -> list[_Trail]:
    """F-21's chain: (1) a fence clear (T5 at ``executor.boundary``, the write's boundary) stalls in the
    store past the lease it computed when issued; while it is pending (2) the reaper's snapshot (T12)
    lists the run with the non-idempotent fence still standing, on which it decides ``not_retryable``,
    and (3) a statement of that reaper invocation stalls past the moment the clear will commit (its
    dead-letter, or an earlier row's statement ahead of it); (4) the clear commits while the
    dead-letter is still pending, with a lease already past. What is left is the segment not renewing
    before the dead-letter applies (its next statement fails, or it dies): a branch from the clear's
    commit draws its next request at raised rates."""
    last: dict[str, Op] = {}
    trails: list[_Trail] = []
    for op in history:
        v = op.value
        if op.op == H.FAULT:
            target = str(v.get("target", ""))
            before = last.get(target)
            stall = _stall(op)
            if (
                stall
                and before is not None
                and before.op == H.STORE
                and before.type is OpType.INVOKE
                and _number(before) == "T5"
                and before.value.get("site") == "executor.boundary"
                and op.time_s + stall > before.time_s + LEASE_S
            ):
                trails.append(_Trail(op.run, target, [op.index], until=op.time_s + stall))
            for trail in trails:
                if (
                    not trail.done
                    and len(trail.marks) == 2
                    and target == trail.other
                    and before is not None
                    and before.op == H.STORE
                    and before.type is OpType.INVOKE
                    and op.time_s + stall > trail.until
                ):
                    trail.marks.append(op.index)
            continue
        for trail in trails:
            if not trail.done and len(trail.marks) == 1 and _fenced_in_snapshot(op, trail.run):
                trail.marks.append(op.index)
                trail.other = op.process
                continue
            if trail.done or op.run != trail.run:
                continue
            level = len(trail.marks)
            if op.process == trail.process and op.op == H.STORE and op.type is not OpType.INVOKE:
                if level == 3 and op.type is OpType.OK and _number(op) == "T5":
                    trail.marks.append(op.index)
                trail.done = True  # the clear is back: before the dead-letter is stalled, the fence went
            elif level >= 2 and op.process == trail.other and op.op == H.STORE and op.type is not OpType.INVOKE:
                trail.done = level < 4  # the dead-letter applied before the clear: the reason was right
        last[op.process] = op
    return trails


def _stale_suspend(history: Sequence[Op]) -> list[_Trail]:
    """F-13's chain: (1) a segment's suspend (T9 at ``executor.suspend``) stalls in the store past a
    lease; while it is pending (2) the reaper requeues the run (T13) and (3) a later attempt, another
    process, lands the run's non-idempotent write; (4) the stale suspend commits over a row whose fence
    still stands (that attempt stopped before clearing it), putting the run back to waiting for the
    approval of a turn already executed. What is left is that approval being granted, which reruns the
    write. Step 3's branches decide the writer's next request (its fence clear) at raised rates: a
    failure or a death there leaves the fence standing."""
    last: dict[str, Op] = {}
    trails: list[_Trail] = []
    for op in history:
        v = op.value
        if op.op == H.FAULT:
            target = str(v.get("target", ""))
            before = last.get(target)
            stall = _stall(op)
            if (
                stall >= LEASE_S
                and before is not None
                and before.op == H.STORE
                and before.type is OpType.INVOKE
                and _number(before) == "T9"
                and before.value.get("site") == "executor.suspend"
            ):
                trails.append(_Trail(op.run, target, [op.index], until=op.time_s + stall))
            continue
        for trail in trails:
            if trail.done or op.run != trail.run:
                continue
            level = len(trail.marks)
            if op.process == trail.process and op.op == H.STORE and op.type is not OpType.INVOKE:
                row = v.get("row")
                if (
                    level == 3
                    and op.type is OpType.OK
                    and _number(op) == "T9"
                    and isinstance(row, dict)
                    and row.get("pending_effect") == "non_idempotent_write"
                ):
                    trail.marks.append(op.index)
                trail.done = True  # the suspend is back: the chain ends here either way
            elif (level == 1 and op.op == H.STORE and op.type is OpType.OK and _number(op) == "T13") or (
                level == 2
                and op.op == H.LANDING
                and v.get("effect") == "non_idempotent_write"
                and v.get("process") != trail.process
            ):
                trail.marks.append(op.index)  # the requeue, then another attempt's write landing
        last[op.process] = op
    return trails


def _ahead_snapshots(history: Sequence[Op], fence: str) -> list[_Trail]:
    """The first two steps of F-20's and F-22's chains: (1) a ``clock_skew`` fault sets a process's clock
    ahead of true time; (2) while it is ahead, that process's reaper snapshot (T12) lists a run that is
    live in true time (its last row's lease still ahead) with ``fence`` in the snapshot. A true clock
    would not have listed it. The window before the reaper's statement on the run is what its branches
    draw: an earlier row's handling (on the Sync transport, an attempt run inline) or, the next request
    being the reaper's, a stall of its statement at raised rates. One trail per such listing, bound to the
    run and the reaper's process, with the run's holder (the process of its last row) as ``other``."""
    ahead: dict[str, int] = {}
    rows: dict[str, Op] = {}
    epoch = 0.0
    trails: list[_Trail] = []
    for op in history:
        v = op.value
        if op.op == H.PHASE:
            if v.get("phase") == "chaos":
                raw = v.get("epoch_s")
                epoch = float(raw) if isinstance(raw, (int, float)) else 0.0
            elif v.get("phase") == "quiet":
                ahead.clear()
            continue
        if op.op == H.FAULT and v.get("family") == "clock_skew":
            target, offset = str(v.get("target", "")), v.get("offset_s")
            if isinstance(offset, (int, float)) and offset > 0:
                ahead[target] = op.index
            else:
                ahead.pop(target, None)
            continue
        if op.op == H.STORE and op.type is OpType.OK and isinstance(v.get("row"), dict):
            rows[op.run] = op
        if (
            op.process in ahead
            and op.op == H.READ
            and op.type is OpType.OK
            and v.get("what") == "SelectStale"
            and isinstance(v.get("result"), list)
            and isinstance(v.get("fences"), list)
        ):
            for run, standing in zip(v["result"], v["fences"], strict=False):
                last = rows.get(str(run))
                if standing != fence or last is None:
                    continue
                lease = last.value["row"].get("lease_expires")
                if isinstance(lease, (int, float)) and lease - epoch > op.time_s:
                    trail = _Trail(str(run), op.process, [ahead[op.process], op.index], other=last.process)
                    trail.extra["requeues"] = float(last.value["row"].get("requeue_count") or 0)
                    trails.append(trail)
    return trails


def _reaper_ahead_cleared_fence(history: Sequence[Op]) -> list[_Trail]:
    """F-20's chain: (1) a reaper's clock runs ahead; (2) its snapshot lists a live run with the
    non-idempotent fence standing (:func:`_ahead_snapshots`); (3) the run's holder
    clears the fence (T5 at ``executor.boundary``) before the reaper's next statement on the run. What
    is left is the run staying RUNNING under that lease until the reaper's dead-letter (the holder's next
    statement fails, or it dies): a branch from the clear draws the holder's next request at raised
    rates."""
    return _after_snapshot(history, _ahead_snapshots(history, "non_idempotent_write"), "executor.boundary", "")


def _reaper_ahead_new_fence(history: Sequence[Op]) -> list[_Trail]:
    """F-22's chain: (1) a reaper's clock runs ahead; (2) its snapshot lists a live run without a fence
    whose budget is spent (requeue_count at :data:`MAX_REQUEUES`: the reaper decides
    ``retries_exhausted``, :func:`_ahead_snapshots`); (3) the run's holder stamps
    a non-idempotent fence (T5 at ``executor.fence``) before the reaper's next statement on the run. What
    is left is the dead-letter applying while the stamped write is in flight."""
    spent = [t for t in _ahead_snapshots(history, "") if t.extra.get("requeues", 0.0) >= MAX_REQUEUES]
    return _after_snapshot(history, spent, "executor.fence", "non_idempotent_write")


def _reaper_ahead_spent_budget(history: Sequence[Op]) -> list[_Trail]:
    """F-19's chain: (1) a reaper's clock runs ahead; (2) its snapshot lists a live run without a fence
    and under the budget (it decides ``requeue``, :func:`_ahead_snapshots`); before the reaper's next
    statement on the run, (3) other requeues (the owner's T11 after retryable failures) bring the run's
    requeue_count to :data:`MAX_REQUEUES` and (4) a new claim (T3) stamps a lease that only the
    reaper's clock sees as past. What is left is the reaper's requeue (T13, no budget predicate)
    applying before that lease is renewed past the reaper's clock."""
    trails = [t for t in _ahead_snapshots(history, "") if t.extra.get("requeues", 0.0) < MAX_REQUEUES]
    if not trails:
        return trails
    for op in history[min(t.marks[-1] for t in trails) :]:
        if op.op != H.STORE or op.type is not OpType.OK:
            continue
        row = op.value.get("row")
        for trail in trails:
            if trail.done or op.run != trail.run or op.index <= trail.marks[-1]:
                continue
            if op.process == trail.process:
                trail.done = True  # the reaper reached the run first
            elif not isinstance(row, dict):
                continue
            elif (
                len(trail.marks) == 2 and _number(op) in REQUEUES and int(row.get("requeue_count") or 0) >= MAX_REQUEUES
            ):
                trail.marks.append(op.index)
            elif len(trail.marks) == 3 and _number(op) in CLAIMS and row.get("status") == "running":
                trail.marks.append(op.index)
                trail.done = True
    return trails


def _after_snapshot(history: Sequence[Op], trails: list[_Trail], site: str, fence: str) -> list[_Trail]:
    """The last step of F-20's and F-22's chains: the listed run's holder writes ``fence`` (T5 at
    ``site``) after the snapshot and before the reaper's next statement on the run."""
    if not trails:
        return trails
    for op in history[min(t.marks[-1] for t in trails) :]:
        if op.op != H.STORE or op.type is OpType.INVOKE:
            continue
        for trail in trails:
            if trail.done or op.run != trail.run or op.index <= trail.marks[-1]:
                continue
            row = op.value.get("row")
            if op.process == trail.process:
                trail.done = True  # the reaper reached the run first
            elif (
                op.type is OpType.OK
                and _number(op) == "T5"
                and op.value.get("site") == site
                and isinstance(row, dict)
                and row.get("pending_effect") == fence
            ):
                trail.marks.append(op.index)
                trail.done = True
    return trails


def stalled_position_read(history: Sequence[Op]) -> tuple[int, ...]:
    """F-15's steps as the furthest trail took them (see :func:`_stalled_position_read`)."""
    return _deepest(_stalled_position_read(history))


def stale_snapshot_requeue(history: Sequence[Op]) -> tuple[int, ...]:
    """F-18's steps as the furthest trail took them (see :func:`_stale_snapshot_requeue`)."""
    return _deepest(_stale_snapshot_requeue(history))


def lagging_clock_fence(history: Sequence[Op]) -> tuple[int, ...]:
    """F-16's steps as the furthest trail took them (see :func:`_lagging_clock_fence`)."""
    return _deepest(_lagging_clock_fence(history))


def stalled_clear(history: Sequence[Op]) -> tuple[int, ...]:
    """F-21's steps as the furthest trail took them (see :func:`_stalled_clear`)."""
    return _deepest(_stalled_clear(history))


def stale_suspend(history: Sequence[Op]) -> tuple[int, ...]:
    """F-13's steps as the furthest trail took them (see :func:`_stale_suspend`)."""
    return _deepest(_stale_suspend(history))


def reaper_ahead_cleared_fence(history: Sequence[Op]) -> tuple[int, ...]:
    """F-20's steps as the furthest trail took them (see :func:`_reaper_ahead_cleared_fence`)."""
    return _deepest(_reaper_ahead_cleared_fence(history))


def reaper_ahead_new_fence(history: Sequence[Op]) -> tuple[int, ...]:
    """F-22's steps as the furthest trail took them (see :func:`_reaper_ahead_new_fence`)."""
    return _deepest(_reaper_ahead_new_fence(history))


def reaper_ahead_spent_budget(history: Sequence[Op]) -> tuple[int, ...]:
    """F-19's steps as the furthest trail took them (see :func:`_reaper_ahead_spent_budget`)."""
    return _deepest(_reaper_ahead_spent_budget(history))


def lagging_stamps(history: Sequence[Op]) -> list[tuple[int, int]]:
    """Every lagging stamp of F-16's chain in ``history``, in order: (the lag's record, the stamp's record).
    Each is a place where the coincidence can still happen (:func:`lagging_stamp_gap`); the explorer
    aims branches at one whose write can return at a reaper tick (:mod:`sim.explore.aim`)."""
    return [(t.marks[0], t.marks[1]) for t in _lagging_clock_fence(history) if len(t.marks) == 2]


def reaper_ticks(history: Sequence[Op], after_s: float) -> list[float]:
    """When the reaper's ticks began (true seconds), those at or after ``after_s`` (see :func:`_reaper_ticks`)."""
    return _reaper_ticks(history, after_s)


def _reaper_ticks(history: Sequence[Op], after_s: float) -> list[float]:
    """When the reaper's ticks began (true seconds), those at or after ``after_s``: a tick that found
    something is a segment invoke, one that found nothing an ``idle`` record carrying its start."""
    out = []
    for op in history:
        if op.op == H.SEGMENT and op.type is OpType.INVOKE and op.value.get("entry") == "reap":
            at = op.time_s
        elif op.op == H.IDLE:
            raw = op.value.get("invoked_s")
            at = float(raw) if isinstance(raw, (int, float)) else op.time_s
        else:
            continue
        if at >= after_s:
            out.append(at)
    return out


def stamp_latency(history: Sequence[Op], stamp: Op) -> float:
    """A stamp's statement latency, its invoke to its commit: the width ``L`` of F-16's window."""
    issued = next(
        (
            op.time_s
            for op in reversed(history[max(0, stamp.index - 64) : stamp.index])
            if op.process == stamp.process and op.op == H.STORE and op.type is OpType.INVOKE
        ),
        stamp.time_s,
    )
    return max(stamp.time_s - issued, 1e-6)


def _stamp_gap(history: Sequence[Op], stamp: Op) -> tuple[float, float] | None:
    """One lagging stamp's distance from F-16's coincidence (see :func:`lagging_stamp_gap`)."""
    width = stamp_latency(history, stamp)
    returned = None
    for op in history[stamp.index + 1 :]:
        if op.process != stamp.process:
            continue
        if op.op == H.TOOL and op.type is not OpType.INVOKE:
            returned = op.time_s
            break
        if op.op == H.SEGMENT and op.type is not OpType.INVOKE:
            break
    if returned is None:
        return None
    ticks = _reaper_ticks(history, stamp.time_s)
    if not ticks:
        return None
    gap = min(max(tick - width - returned, returned - tick, 0.0) for tick in ticks)
    return gap, min(1.0, width / max(returned - stamp.time_s, width))


def lagging_stamp_gap(history: Sequence[Op], marks: Sequence[int]) -> tuple[float, float] | None:
    """How close a history that took F-16's last step (a lagging stamp at ``marks[-1]``) came to the
    coincidence that is left: (the least distance, in seconds, between a lagging stamp's write returning
    and the window of a reaper tick that would meet F-16, over that stamp and every later one, 0 inside
    a window; the window's width over the write's duration, at the closest stamp). None when no stamp's
    write returned before a tick.

    The window, from the finding's own counterexample: the write returns, the cancellation probe reads
    and the boundary's clear commits, one statement latency ``L`` each; the clear must commit after the
    tick's snapshot (one statement after the tick) and before its dead-letter (two), so the write must
    return within ``(tick - L, tick)``; ``L`` is read off the stamp (its invoke to its commit). Every
    later stamp by a lagging clock is another chance (a fast worker stamps many), so the distance is the
    least over them. A branch from the stamp redraws the write's duration and all after it: this
    distance is the continuous level the explorer ranks footholds by (:mod:`sim.explore.footholds`), and
    the width over the duration is about a branch's chance once its write may return at a tick."""
    if len(marks) < 2 or marks[-1] >= len(history):
        return None
    best: tuple[float, float] | None = None
    for trail in _lagging_clock_fence(history):
        if len(trail.marks) < 2 or trail.marks[-1] < marks[-1]:
            continue
        measured = _stamp_gap(history, history[trail.marks[-1]])
        if measured is not None and (best is None or measured[0] < best[0]):
            best = measured
    return best


Measure = Callable[[Sequence[Op], Sequence[int]], "tuple[float, float] | None"]
TIMED: dict[str, Measure] = {"F-16": lagging_stamp_gap}
"""The chains whose last step leaves a timing coincidence, and how close a history that took every
step came to it."""
STEPS = {"F-13": 4, "F-15": 4, "F-16": 2, "F-18": 4, "F-19": 4, "F-20": 3, "F-21": 4, "F-22": 3}
"""How many steps each chain has (a history at the last one is one decision from the finding, or, for a
timed chain, one coincidence)."""


Chain = Callable[[Sequence[Op]], tuple[int, ...]]
Trails = Callable[[Sequence[Op]], list[_Trail]]

PRECURSORS: dict[str, Chain] = {
    "F-15": stalled_position_read,
    "F-16": lagging_clock_fence,
    "F-18": stale_snapshot_requeue,
    "F-21": stalled_clear,
    "F-13": stale_suspend,
    "F-19": reaper_ahead_spent_budget,
    "F-20": reaper_ahead_cleared_fence,
    "F-22": reaper_ahead_new_fence,
}
_TRAILS: dict[str, Trails] = {
    "F-15": _stalled_position_read,
    "F-16": _lagging_clock_fence,
    "F-18": _stale_snapshot_requeue,
    "F-21": _stalled_clear,
    "F-13": _stale_suspend,
    "F-19": _reaper_ahead_spent_budget,
    "F-20": _reaper_ahead_cleared_fence,
    "F-22": _reaper_ahead_new_fence,
}


def reach(history: Sequence[Op], finding: str) -> tuple[int, ...]:
    """Per level of ``finding``'s chain, the first record of ``history`` at which some trail reached it
    (levels never reached left out): where a splitting estimate cuts."""
    return _earliest(_TRAILS[finding](history))


"""The findings whose chains the guided explorer climbs, and how far a history got along each."""


def progress(history: Sequence[Op], findings: Sequence[str] | None = None) -> list[Progress]:
    """How far ``history`` got along each chain (only those of ``findings`` when given); chains not
    begun are left out."""
    out = []
    for finding, chain in PRECURSORS.items():
        if findings is not None and finding not in findings:
            continue
        marks = chain(history)
        if marks:
            out.append(Progress(finding, marks))
    return out


__all__ = [
    "PRECURSORS",
    "STEPS",
    "TIMED",
    "Progress",
    "lagging_stamp_gap",
    "lagging_stamps",
    "progress",
    "reach",
    "reaper_ahead_cleared_fence",
    "reaper_ahead_new_fence",
    "reaper_ahead_spent_budget",
    "reaper_ticks",
    "stale_suspend",
    "stalled_clear",
    "stamp_latency",
]
