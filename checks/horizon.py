"""The horizon: a run left QUEUED or RUNNING at the end was *stranded*, or the horizon *cut* it short.

A simulation ends at a horizon (the chaos phase, the quiet phase and its grace). A run the horizon
finds unfinished has not hung: it hangs only when no process will ever move it. From the history alone
(the world's own records: dispatches, deliveries, crashes, segments, the reaper's ticks), something
still moves a run when, at the end,

- a *segment* of the run is still open in a process that did not crash (a worker, client or approver
  at work on it: a segment invoke with no completion);
- a *wake-up* is still on its way: the wake-ups sent for the run (dispatches that succeeded, the late
  copy of each ``duplicate`` fault, and the redelivery of a wake-up whose worker crashed with it in
  hand, before its segment completed: the bus delivers it again, at least once) outnumber the
  deliveries recorded;
- its row is RUNNING under a *lease the reaper has yet to find*: a lease (``lease_expires`` > 0,
  the reaper covers only leased rows) that has not expired, or expired after the reaper's last tick
  began (the reaper's next tick requeues or dead-letters it: spec 5.1).

A run nothing moves is stranded (``every_run_terminates`` violated); a run something still moves was
cut by the horizon, and its verdict is unknown, never violated. Pure: reads the history only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from checks.history import (
    CRASH,
    DELIVER,
    DISPATCH,
    FAULT,
    IDLE,
    OP,
    PROCESS,
    RUN,
    SEGMENT,
    TIME_S,
    TYPE,
    VALUE,
    Op,
    OpType,
)

_REAP = "reap"


@dataclass
class Movers:
    """What the history says could still move each run at its end."""

    end_s: float = 0.0
    open_segments: dict[str, int] = field(default_factory=dict)
    """run -> segments open at the end in processes that did not crash."""
    sent: dict[str, int] = field(default_factory=dict)
    received: dict[str, int] = field(default_factory=dict)
    last_tick_s: float = float("-inf")
    """When the reaper's last tick began (true time)."""

    def pending_wakeups(self, run: str) -> int:
        return self.sent.get(run, 0) - self.received.get(run, 0)

    def mover(self, final: Op, epoch_s: int) -> str | None:
        """What still moves the run of ``final`` (a sentence), or None: stranded."""
        run = final.run
        row: Mapping[str, Any] = final.value.get("row") or {}
        if self.open_segments.get(run):
            return "a segment is still at work on it"
        if self.pending_wakeups(run) > 0:
            return f"{self.pending_wakeups(run)} wake-up(s) still on the bus"
        lease = row.get("lease_expires") or 0
        if row.get("status") == "running" and lease:
            expires_s = float(lease) - epoch_s
            if expires_s >= self.end_s:
                return f"its lease runs {expires_s - self.end_s:.0f} s past the end; the reaper finds it then"
            if expires_s >= self.last_tick_s:
                return "its lease expired after the reaper's last tick began; the next tick finds it"
        return None


def movers(history: Iterable[Op]) -> Movers:
    """One walk over ``history`` (see the module docstring)."""
    out = Movers()
    open_by_process: dict[str, list[str]] = {}
    in_hand: dict[str, str] = {}
    """worker process -> the run of the wake-up it took and has not finished a segment of."""
    crashed: set[str] = set()
    for op in history:
        out.end_s = op[TIME_S]
        process, name, run, type_ = op[PROCESS], op[OP], op[RUN], op[TYPE]
        if name == SEGMENT:
            stack = open_by_process.setdefault(process, [])
            if type_ is OpType.INVOKE:
                stack.append(run)
                if op[VALUE].get("entry") == _REAP:
                    out.last_tick_s = op[TIME_S]
            elif stack:
                stack.pop()
                if type_ is not OpType.INFO and not stack:
                    in_hand.pop(process, None)
        elif name == IDLE:
            out.last_tick_s = float(op[VALUE].get("invoked_s", op[TIME_S]))
        elif name == DISPATCH and type_ is OpType.OK:
            out.sent[run] = out.sent.get(run, 0) + 1
        elif name == DELIVER and type_ is OpType.OK:
            out.received[run] = out.received.get(run, 0) + 1
            if not op[VALUE].get("inline"):
                in_hand[process] = run
        elif name == FAULT and op[VALUE].get("family") == "duplicate" and run:
            out.sent[run] = out.sent.get(run, 0) + 1
        elif name == CRASH:
            dead = str(op[VALUE].get("process", ""))
            crashed.add(dead)
            open_by_process.pop(dead, None)
            held = in_hand.pop(dead, None)
            if held is not None:  # the worker's wake-up goes back on the bus (at least once)
                out.sent[held] = out.sent.get(held, 0) + 1
    for process, stack in open_by_process.items():
        if process not in crashed:
            for run in stack:
                if run:
                    out.open_segments[run] = out.open_segments.get(run, 0) + 1
    return out


__all__ = ["Movers", "movers"]
