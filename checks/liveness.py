"""Liveness costs of one simulation: what the safety mechanisms took from runs that were doing well.

Three counts, each from ground truth in one pass over a history (liveness costs judged, not only
safety); the report's cost section shows them beside the spec sentences that make them
costs rather than violations:

- ``progressing_reaped``: reaper statements (T13 requeue or T14 dead-letter that matched) on a row
  whose holder was alive and making progress: a segment still open under the row's claim, whose
  process had not crashed, whose call in flight at the reap (provider, tool or statement, if any)
  returned within a lease of starting, and which had made a request or received an answer within
  the last lease. (Spec 7.2 records the reap of a call longer than the lease: not counted.)
- ``dead_letters_no_fatal``: dead-letters (the reaper's T14, its settle after a failed re-dispatch,
  recovery's FAILED not_retryable / retries_exhausted) of a run in which no fault the spec treats as
  fatal occurred before it: no provider failure of a non-retryable true class, no failed audit of a
  write step, no non-idempotent (or unknown-name) write in flight, no spent budget, no death of the
  process that held the row (ADR-141's abandoned segment).
- ``failed_by_slowness``: runs whose final row is FAILED and whose only faults were slowness (the
  ``slow`` family and ``store`` commit stalls).

Knows the history vocabulary and the runtime's call-site names; not the world, not sweeps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from checks import history as H
from checks.columns import STAT_DEAD_LETTERS_NO_FATAL, STAT_FAILED_BY_SLOWNESS, STAT_PROGRESSING_REAPED
from checks.history import OP, PROCESS, RUN, TYPE, VALUE, Op, OpType
from model.statements import LEASE_SETTING, REAPER_STATEMENTS

RETRYABLE = frozenset({"connection", "rateLimit", "serverError", "circuitOpen"})
STRICT = frozenset({"non_idempotent_write", "unknown"})
WRITES = frozenset({"idempotent_write", "non_idempotent_write", "unknown"})
DEAD_LETTER_SITES = frozenset({"reaper.dead_letter", "recovery.dead_letter", "reaper.dispatch_failed"})
_DEFAULT_LEASE_S = 900.0
_CALLS = frozenset({H.PROVIDER, H.TOOL, H.STORE})


@dataclass
class Liveness:
    progressing_reaped: int = 0
    dead_letters_no_fatal: int = 0
    failed_by_slowness: int = 0

    def columns(self) -> dict[str, int]:
        return {
            STAT_PROGRESSING_REAPED: self.progressing_reaped,
            STAT_DEAD_LETTERS_NO_FATAL: self.dead_letters_no_fatal,
            STAT_FAILED_BY_SLOWNESS: self.failed_by_slowness,
        }


@dataclass
class _Pass:
    out: Liveness = field(default_factory=Liveness)
    lease_s: float = _DEFAULT_LEASE_S
    stacks: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """process -> (identity, run) of its open segments (innermost last)."""
    holder: dict[str, str] = field(default_factory=dict)
    """identity -> the process of the latest segment that presented it."""
    open_under: dict[tuple[str, str], str] = field(default_factory=dict)
    """(identity, run) -> the process with a segment of that run open under that identity."""
    dead: set[str] = field(default_factory=set)
    rows: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    fatal: set[str] = field(default_factory=set)
    inflight: dict[str, set[int]] = field(default_factory=dict)
    open_tool: dict[str, Op] = field(default_factory=dict)
    faults: dict[str, list[str]] = field(default_factory=dict)
    final: dict[str, str] = field(default_factory=dict)
    calls: dict[str, list[list[float]]] = field(default_factory=dict)
    """process -> [start, end] of each of its calls (end = inf while in flight)."""
    reaps: list[tuple[float, str]] = field(default_factory=list)
    """(time, holder process) of each reap of a row whose holder was alive: judged at the end."""

    def calls_of(self, history: Iterable[Op], processes: set[str]) -> None:
        """The calls of ``processes`` (provider, tool and store requests, not a crash's info record):
        only the processes a reap struck while alive need them, so this walk runs only when there is one."""
        for op in history:
            if op.process in processes and op.op in _CALLS and op.type is not OpType.INFO:
                mine = self.calls.setdefault(op.process, [])
                if op.type is OpType.INVOKE:
                    mine.append([op.time_s, float("inf")])
                elif mine and mine[-1][1] == float("inf"):
                    mine[-1][1] = op.time_s

    def progressing(self, at: float, process: str) -> bool:
        """At ``at`` the process's call in flight (if any) returned within a lease, and its latest call
        started or ended within the last lease."""
        latest = float("-inf")
        for start, end in self.calls.get(process, ()):
            if start > at:
                break
            if end > at and end - start > self.lease_s:
                return False
            latest = max(latest, start, end if end <= at else start)
        return latest >= at - self.lease_s

    def segment(self, op: Op) -> None:
        stack = self.stacks.setdefault(op.process, [])
        if op.type is OpType.INVOKE:
            key = (str(op.value.get("identity", "")), op.run)
            stack.append(key)
            self.holder[key[0]] = self.open_under[key] = op.process
        elif stack:
            key = stack.pop()
            if self.open_under.get(key) == op.process and key not in stack:
                del self.open_under[key]

    def store(self, op: Op) -> None:
        value = op.value
        row = value.get("row")
        if op.type is not OpType.OK or not value.get("matched") or not isinstance(row, dict):
            return
        number = str(value.get("transition", "")).partition(" ")[0]
        before = self.rows.get(op.run, {})
        if number in REAPER_STATEMENTS and value.get("actor") == "reaper":
            self._reaped(op, before)
        failed = row.get("status") == "failed" and before.get("status") != "failed"
        if failed and value.get("site") in DEAD_LETTER_SITES:
            self._dead_letter(op.run, before)
        if number in LEASE_SETTING:
            self.inflight[op.run] = set()
        self.rows[op.run] = row

    def _reaped(self, op: Op, before: Mapping[str, Any]) -> None:
        process = self.open_under.get((str(before.get("claimed_by", "")), op.run))
        if process is not None and process not in self.dead:
            self.reaps.append((op.time_s, process))

    def _dead_letter(self, run: str, before: Mapping[str, Any]) -> None:
        holder = self.holder.get(str(before.get("claimed_by", "")))
        spent = int(before.get("requeue_count") or 0) >= 3
        if run in self.fatal or self.inflight.get(run) or spent or (holder is not None and holder in self.dead):
            return
        self.out.dead_letters_no_fatal += 1

    def tool(self, op: Op) -> None:
        if op.type is OpType.INVOKE:
            self.open_tool[op.process] = op
            if op.value.get("true_effect") in STRICT:
                self.inflight.setdefault(op.run, set()).add(op.index)
            return
        invoke = self.open_tool.pop(op.process, None)
        if invoke is not None and op.type is not OpType.INFO:
            self.inflight.get(invoke.run, set()).discard(invoke.index)

    def failure(self, op: Op) -> None:
        value = op.value
        non_retryable = op.op == H.PROVIDER and value.get("true_class") not in RETRYABLE
        write_audit = op.op == H.EVENT and value.get("kind") == "tool" and value.get("true_effect") in WRITES
        if non_retryable or write_audit:
            self.fatal.add(op.run)

    def nemesis(self, op: Op) -> None:
        if op.op == H.CRASH:
            self.dead.add(str(op.value.get("process", "")))
        elif op.op == H.FAULT and op.run:
            family, kind = op.value.get("family"), op.value.get("kind")
            slow = family == "slow" or (family == "store" and kind == "slow")
            self.faults.setdefault(op.run, []).append("slow" if slow else str(family))
        elif op.op == H.PHASE and op.value.get("lease_s"):
            self.lease_s = float(op.value["lease_s"])


def liveness(history: Iterable[Op]) -> Liveness:
    """The liveness costs of one history (see the module docstring)."""
    records = history if isinstance(history, (list, tuple)) else list(history)
    state = _Pass()
    # Records by position (process 2, op 3, run 4, type 5, value 6): a NamedTuple's field names are
    # descriptors, and this walk visits every record of every simulation a sweep runs.
    nemesis, world, final, segment, store, tool = H.NEMESIS, H.WORLD, H.FINAL, H.SEGMENT, H.STORE, H.TOOL
    fail, failing = OpType.FAIL, (H.PROVIDER, H.EVENT)
    for op in records:
        process, name = op[PROCESS], op[OP]
        if process == nemesis:
            state.nemesis(op)
        elif process == world:
            if name == final:
                state.final[op[RUN]] = str(op[VALUE].get("row", {}).get("status", ""))
        elif name == segment:
            if op[RUN]:  # a segment of no run (the reaper's tick) holds no row: no reap or dead-letter asks for it
                state.segment(op)
        elif name == store:
            state.store(op)
        elif name == tool:
            state.tool(op)
        elif op[TYPE] is fail and name in failing:
            state.failure(op)
    if state.reaps:
        state.calls_of(records, {process for _at, process in state.reaps})
    state.out.progressing_reaped = sum(1 for at, process in state.reaps if state.progressing(at, process))
    state.out.failed_by_slowness = sum(
        1
        for run, status in state.final.items()
        if status == "failed" and state.faults.get(run) and set(state.faults[run]) == {"slow"}
    )
    return state.out


__all__ = ["Liveness", "liveness"]
