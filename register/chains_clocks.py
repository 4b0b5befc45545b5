"""F-19's, F-20's and F-22's chains (:mod:`register.precursors`): a reaper whose clock runs ahead lists a
run that is live in true time, and what the run's holder and the other segments do before the reaper's
statement on it, read off each finding's recogniser (:mod:`register.recognisers.clocks`) and its
counterexample.

Ground truth only: clock faults as the nemesis recorded them, snapshots and rows as the store returned and
wrote them, leases on the true clock's axis (the chaos phase's epoch). Knows the history's records; draws
and runs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from checks import history as H
from checks.history import Op, OpType
from model.constants import MAX_REQUEUES
from register.trails import CLAIMS, REQUEUES, Trail, deepest, number


def _ahead_snapshots(history: Sequence[Op], fence: str) -> list[Trail]:
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
    trails: list[Trail] = []
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
                    trail = Trail(str(run), op.process, [ahead[op.process], op.index], other=last.process)
                    trail.extra["requeues"] = float(last.value["row"].get("requeue_count") or 0)
                    trails.append(trail)
    return trails


def reaper_ahead_cleared_fence_trails(history: Sequence[Op]) -> list[Trail]:
    """F-20's chain: (1) a reaper's clock runs ahead; (2) its snapshot lists a live run with the
    non-idempotent fence standing (:func:`_ahead_snapshots`); (3) the run's holder
    clears the fence (T5 at ``executor.boundary``) before the reaper's next statement on the run. What
    is left is the run staying RUNNING under that lease until the reaper's dead-letter (the holder's next
    statement fails, or it dies): a branch from the clear draws the holder's next request at raised
    rates."""
    return _after_snapshot(history, _ahead_snapshots(history, "non_idempotent_write"), "executor.boundary", "")


def reaper_ahead_new_fence_trails(history: Sequence[Op]) -> list[Trail]:
    """F-22's chain: (1, 2) a reaper's clock is set ahead of true time and a run is claimed with its budget
    spent (a claim writing requeue_count :data:`MAX_REQUEUES`, status running), the earlier of the two
    step 1 and the later step 2 (with the clock still ahead); (3) that reaper's snapshot lists the run live
    without a fence (it decides ``retries_exhausted``, :func:`_ahead_snapshots`); (4) the run's holder
    stamps a non-idempotent fence (T5 at ``executor.fence``) before the reaper's next statement on the
    run. What is left is the dead-letter applying while the stamped write is in flight. Either of the
    first two is common (a reaper clock ahead in about a quarter of the bench's fresh draws, a spent
    budget still running in about a tenth); the two together are what is rare, and the snapshot follows
    at the reaper's next tick once both hold."""
    listed = [t for t in _ahead_snapshots(history, "") if t.extra.get("requeues", 0.0) >= MAX_REQUEUES]
    spent: dict[str, int] = {}
    for op in history:
        row = op.value.get("row")
        if (
            op.op == H.STORE
            and op.type is OpType.OK
            and number(op) in CLAIMS
            and isinstance(row, dict)
            and row.get("status") == "running"
            and int(row.get("requeue_count") or 0) >= MAX_REQUEUES
        ):
            spent.setdefault(op.run, op.index)
    trails: list[Trail] = []
    for fault, process, end in _ahead_spans(history):
        for run, claim in spent.items():
            if max(fault, claim) >= end:
                continue
            trail = Trail(run, process, sorted((fault, claim)))
            snapshot = next(
                (t for t in listed if t.process == process and t.run == run and t.marks[0] == fault),
                None,
            )
            if snapshot is not None and snapshot.marks[1] > trail.marks[-1]:
                trail.marks.append(snapshot.marks[1])
                trail.other = snapshot.other
            trails.append(trail)
    _after_snapshot(history, [t for t in trails if len(t.marks) == 3], "executor.fence", "non_idempotent_write")
    return trails


def _ahead_spans(history: Sequence[Op]) -> list[tuple[int, str, int]]:
    """Each span of records over which a process's clock ran ahead: (the ``clock_skew`` fault that set it,
    the process, the record that ended it or the history's length)."""
    open_: dict[str, int] = {}
    spans: list[tuple[int, str, int]] = []
    for op in history:
        v = op.value
        if op.op == H.PHASE and v.get("phase") == "quiet":
            spans.extend((fault, process, op.index) for process, fault in open_.items())
            open_.clear()
        elif op.op == H.FAULT and v.get("family") == "clock_skew":
            target, offset = str(v.get("target", "")), v.get("offset_s")
            if target in open_:
                spans.append((open_.pop(target), target, op.index))
            if isinstance(offset, (int, float)) and offset > 0:
                open_[target] = op.index
    spans.extend((fault, process, len(history)) for process, fault in open_.items())
    return spans


def reaper_ahead_spent_budget_trails(history: Sequence[Op]) -> list[Trail]:
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
                len(trail.marks) == 2 and number(op) in REQUEUES and int(row.get("requeue_count") or 0) >= MAX_REQUEUES
            ):
                trail.marks.append(op.index)
            elif len(trail.marks) == 3 and number(op) in CLAIMS and row.get("status") == "running":
                trail.marks.append(op.index)
                trail.done = True
    return trails


def _after_snapshot(history: Sequence[Op], trails: list[Trail], site: str, fence: str) -> list[Trail]:
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
                and number(op) == "T5"
                and op.value.get("site") == site
                and isinstance(row, dict)
                and row.get("pending_effect") == fence
            ):
                trail.marks.append(op.index)
                trail.done = True
    return trails


def reaper_ahead_cleared_fence(history: Sequence[Op]) -> tuple[int, ...]:
    """F-20's steps as the furthest trail took them (see :func:`reaper_ahead_cleared_fence_trails`)."""
    return deepest(reaper_ahead_cleared_fence_trails(history))


def reaper_ahead_new_fence(history: Sequence[Op]) -> tuple[int, ...]:
    """F-22's steps as the furthest trail took them (see :func:`reaper_ahead_new_fence_trails`)."""
    return deepest(reaper_ahead_new_fence_trails(history))


def reaper_ahead_spent_budget(history: Sequence[Op]) -> tuple[int, ...]:
    """F-19's steps as the furthest trail took them (see :func:`reaper_ahead_spent_budget_trails`)."""
    return deepest(reaper_ahead_spent_budget_trails(history))


__all__ = [
    "reaper_ahead_cleared_fence",
    "reaper_ahead_cleared_fence_trails",
    "reaper_ahead_new_fence",
    "reaper_ahead_new_fence_trails",
    "reaper_ahead_spent_budget",
    "reaper_ahead_spent_budget_trails",
]
