"""F-21's and F-13's chains (:mod:`register.precursors`): a statement stalled in the store past a lease,
then what the reaper and the other segments do while it is pending, read off each finding's recogniser
(:func:`register.recognisers.stalls.stalled_clear_dead_letter`,
:func:`register.recognisers.writes.stale_suspend_reruns_write`) and its counterexample.

Ground truth only: store faults as the nemesis recorded them, snapshots and rows as the store returned
and wrote them. Knows the history's records; draws and runs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from checks import history as H
from checks.history import Op, OpType
from model.constants import LEASE_S
from register.trails import Trail, deepest, number, stall, struck


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


def stalled_clear_trails(history: Sequence[Op]) -> list[Trail]:
    """F-21's chain: (1) a fence clear (T5 at ``executor.boundary``, the write's boundary) stalls in the
    store past the lease it computed when issued; while it is pending (2) the reaper's snapshot (T12)
    lists the run with the non-idempotent fence still standing, on which it decides ``not_retryable``,
    and (3) a statement of that reaper invocation stalls past the moment the clear will commit (its
    dead-letter, or an earlier row's statement ahead of it); (4) the clear commits while the
    dead-letter is still pending, with a lease already past. What is left is the segment not renewing
    before the dead-letter applies (its next statement fails, or it dies): a branch from the clear's
    commit draws its next request at raised rates."""
    trails: list[Trail] = []
    for op, before in struck(history):
        v = op.value
        if op.op == H.FAULT:
            target = str(v.get("target", ""))
            stalled = stall(op)
            if (
                stalled
                and before is not None
                and before.op == H.STORE
                and before.type is OpType.INVOKE
                and number(before) == "T5"
                and before.value.get("site") == "executor.boundary"
                and op.time_s + stalled > before.time_s + LEASE_S
            ):
                trails.append(Trail(op.run, target, [op.index], until=op.time_s + stalled))
            for trail in trails:
                if (
                    not trail.done
                    and len(trail.marks) == 2
                    and target == trail.other
                    and before is not None
                    and before.op == H.STORE
                    and before.type is OpType.INVOKE
                    and op.time_s + stalled > trail.until
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
                if level == 3 and op.type is OpType.OK and number(op) == "T5":
                    trail.marks.append(op.index)
                trail.done = True  # the clear is back: before the dead-letter is stalled, the fence went
            elif level >= 2 and op.process == trail.other and op.op == H.STORE and op.type is not OpType.INVOKE:
                trail.done = level < 4  # the dead-letter applied before the clear: the reason was right
    return trails


def stale_suspend_trails(history: Sequence[Op]) -> list[Trail]:
    """F-13's chain: (1) a segment's suspend (T9 at ``executor.suspend``) stalls in the store past a
    lease; while it is pending (2) the reaper requeues the run (T13) and (3) a later attempt, another
    process, lands the run's non-idempotent write; (4) the stale suspend commits over a row whose fence
    still stands (that attempt stopped before clearing it), putting the run back to waiting for the
    approval of a turn already executed. What is left is that approval being granted, which reruns the
    write. Step 3's branches decide the writer's next request (its fence clear) at raised rates: a
    failure or a death there leaves the fence standing."""
    trails: list[Trail] = []
    for op, before in struck(history):
        v = op.value
        if op.op == H.FAULT:
            target = str(v.get("target", ""))
            stalled = stall(op)
            if (
                stalled >= LEASE_S
                and before is not None
                and before.op == H.STORE
                and before.type is OpType.INVOKE
                and number(before) == "T9"
                and before.value.get("site") == "executor.suspend"
            ):
                trails.append(Trail(op.run, target, [op.index], until=op.time_s + stalled))
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
                    and number(op) == "T9"
                    and isinstance(row, dict)
                    and row.get("pending_effect") == "non_idempotent_write"
                ):
                    trail.marks.append(op.index)
                trail.done = True  # the suspend is back: the chain ends here either way
            elif (level == 1 and op.op == H.STORE and op.type is OpType.OK and number(op) == "T13") or (
                level == 2
                and op.op == H.LANDING
                and v.get("effect") == "non_idempotent_write"
                and v.get("process") != trail.process
            ):
                trail.marks.append(op.index)  # the requeue, then another attempt's write landing
    return trails


def stalled_clear(history: Sequence[Op]) -> tuple[int, ...]:
    """F-21's steps as the furthest trail took them (see :func:`stalled_clear_trails`)."""
    return deepest(stalled_clear_trails(history))


def stale_suspend(history: Sequence[Op]) -> tuple[int, ...]:
    """F-13's steps as the furthest trail took them (see :func:`stale_suspend_trails`)."""
    return deepest(stale_suspend_trails(history))


__all__ = ["stale_suspend", "stale_suspend_trails", "stalled_clear", "stalled_clear_trails"]
