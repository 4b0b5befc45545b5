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
from dataclasses import dataclass

from checks import history as H
from checks.history import Op, OpType
from model.constants import LEASE_S
from register.chains_clocks import (
    reaper_ahead_cleared_fence,
    reaper_ahead_cleared_fence_trails,
    reaper_ahead_new_fence,
    reaper_ahead_new_fence_trails,
    reaper_ahead_spent_budget,
    reaper_ahead_spent_budget_trails,
)
from register.chains_stalls import stale_suspend, stale_suspend_trails, stalled_clear, stalled_clear_trails
from register.trails import CLAIMS, struck
from register.trails import Trail as _Trail
from register.trails import deepest as _deepest
from register.trails import earliest as _earliest
from register.trails import number as _number
from register.trails import stall as _stall

POSITION_SITES = frozenset({"run_queued.position", "resume.position"})


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


def _quiet_s(history: Sequence[Op]) -> float:
    """When the nemesis went quiet (true seconds; infinity if the history never got there): no fault
    strikes after it. The moment is the scenario's chaos phase, the same in every branch of a run."""
    for op in reversed(history):
        if op.op == H.PHASE and op.value.get("phase") == "quiet":
            return float(op.time_s)
    return float("inf")


def _stalled_position_read(history: Sequence[Op]) -> list[_Trail]:
    """F-15's chain: (1) a segment claims a run (T3, T10); (2) its first statement after the claim, the
    post-claim position read, stalls past the claim's lease; while it is stalled (3) the reaper requeues
    the run (T13) and (4) another segment claims it; (5) the stalled read returns to the run's row, still
    ``running`` under that other segment. What is left is the next position read failing (the unguarded
    settle follows).

    The claim is a step of its own so that a branch cut right after it has the position read, the very
    next request, decided at raised fault rates: a stall there is the chain's first rare event.
    Conditions keep the explorer off states that cannot go on: the stall must end before the nemesis
    goes quiet (:func:`_quiet_s`: every route left needs one more store fault, and none strikes after
    that), so a claim within a lease of it is no step; and the read must return to a row still
    ``running`` (the settle fails a RUNNING row; one the other segment suspended or requeued is settled
    by nobody's rule)."""
    trails: list[_Trail] = []
    rows: dict[str, dict[str, object]] = {}
    quiet = _quiet_s(history)
    for op in history:
        v = op.value
        if op.op == H.FAULT:
            target = str(v.get("target", ""))
            stall = _stall(op)
            for trail in trails:
                if trail.done or len(trail.marks) != 1 or trail.process != target:
                    continue
                claim = history[trail.marks[0]]
                if stall and claim.time_s + LEASE_S < op.time_s + stall < quiet:
                    trail.marks.append(op.index)
                    trail.until = op.time_s + stall
                else:
                    trail.done = True  # the first statement after the claim did not stall past the lease
            continue
        if op.op == H.STORE and op.type is OpType.OK and isinstance(v.get("row"), dict):
            rows[op.run] = v["row"]
        for trail in trails:
            if trail.done or op.run != trail.run:
                continue
            level = len(trail.marks)
            if op.process == trail.process:
                if (
                    level == 4
                    and op.op == H.READ
                    and op.type is OpType.OK
                    and v.get("site") in POSITION_SITES
                    and rows.get(op.run, {}).get("status") == "running"
                ):
                    trail.marks.append(op.index)
                trail.done = True  # the segment went on without a stall, or the stalled one is back
            elif op.op == H.STORE and op.type is OpType.OK:
                if level == 2 and _number(op) == "T13":
                    trail.marks.append(op.index)
                elif level == 3 and _number(op) in CLAIMS:
                    trail.marks.append(op.index)
                    trail.other = op.process
        if (
            op.op == H.STORE
            and op.type is OpType.OK
            and _number(op) in CLAIMS
            and v.get("matched")
            and op.time_s + LEASE_S < quiet
        ):
            trails.append(_Trail(op.run, op.process, [op.index]))
    return trails


def _stale_snapshot_requeue(history: Sequence[Op]) -> list[_Trail]:
    """F-18's chain: (1) a fence stamp (T5 at ``executor.fence``) stalls past its lease; while it is
    pending (2) the reaper decides to requeue the run on a snapshot without a fence and (3) its requeue
    (T13) stalls past the moment the stamp will commit; (4) the stamp commits while the requeue is
    still pending. What is left is the write still in flight when the requeue clears the fence, and the
    next attempt running it again."""
    trails: list[_Trail] = []
    for op, before in struck(history):
        v = op.value
        if op.op == H.FAULT:
            target = str(v.get("target", ""))
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


def stalled_position_read(history: Sequence[Op]) -> tuple[int, ...]:
    """F-15's steps as the furthest trail took them (see :func:`_stalled_position_read`)."""
    return _deepest(_stalled_position_read(history))


def stale_snapshot_requeue(history: Sequence[Op]) -> tuple[int, ...]:
    """F-18's steps as the furthest trail took them (see :func:`_stale_snapshot_requeue`)."""
    return _deepest(_stale_snapshot_requeue(history))


def lagging_clock_fence(history: Sequence[Op]) -> tuple[int, ...]:
    """F-16's steps as the furthest trail took them (see :func:`_lagging_clock_fence`)."""
    return _deepest(_lagging_clock_fence(history))


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
STEPS = {"F-13": 4, "F-15": 5, "F-16": 2, "F-18": 4, "F-19": 4, "F-20": 3, "F-21": 4, "F-22": 4}
"""How many steps each chain has (a history at the last one is one decision from the finding, or, for a
timed chain, one coincidence)."""
NEEDS: dict[str, dict[int, str]] = {"F-15": {1: "slow", 2: "", 3: "", 4: "", 5: "fail"}}
"""Per chain and level, what the request right after a cut there must be for the next step
(:data:`sim.explore.profiles.NEEDS`): F-15's claimed segment's position read stalling past the lease; then
no fault (the requeue, the other claim and the read's return are timing, which a raised fault only
breaks: a stalled reaper read delays the requeue); at the last step the next position read failing. A
chain or level not named: every enabled family raised, as a cut always had. Measured on F-15's
footholds (the first eight of each search, seeds 10-23, 12 branches each): from the last step 132 of
156 branches met the finding so decided, 90 of 168 with every family raised (a raised store fault is a stall
one time in three); from the claim 221 of 264 went a step deeper or more so decided, 97 of 252 raised."""
COMMON = {"F-15": 1}
"""Per chain, how many of its first steps nearly every run takes (F-15's claim): a foothold there gets
:data:`sim.explore.footholds.COMMON_BRANCHES` branches, as the next fresh draw brings another."""


Chain = Callable[[Sequence[Op]], tuple[int, ...]]
Trails = Callable[[Sequence[Op]], list[_Trail]]

# F-13's and F-21's chains are read in register.chains_stalls, F-19's, F-20's and F-22's in
# register.chains_clocks (on the trails of register.trails).
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
    "F-21": stalled_clear_trails,
    "F-13": stale_suspend_trails,
    "F-19": reaper_ahead_spent_budget_trails,
    "F-20": reaper_ahead_cleared_fence_trails,
    "F-22": reaper_ahead_new_fence_trails,
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
    "COMMON",
    "NEEDS",
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
