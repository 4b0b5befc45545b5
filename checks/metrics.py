"""Per-simulation run metrics for sweep rows, computed in one pass over a history.

What a reliability report needs beyond the verdicts: how often runs were requeued and
dead-lettered (and why), how many dead-letters had no write really in flight (the cost of a
fence that was not needed), how long runs took to settle, how many writes were repeated, and
which request kinds the faults struck, and the liveness costs of :mod:`checks.liveness` (segments
reaped while making progress, dead-letters with no fatal fault, FAILED runs whose only faults were
slowness). Everything comes from the ground-truth records of
:mod:`checks.history` (matched store rows, tool invokes and completions, world landings,
nemesis fault records) plus the world's list of request types by global request index (the
index a fault record carries); nothing is read from the runtime's own view of itself.

Knows the history vocabulary and the runtime's call-site names; not the world, not sweeps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from checks import history as H
from checks.columns import (
    DL,
    HIT,
    STAT_DEAD_LETTERS,
    STAT_DEAD_LETTERS_NO_WRITE,
    STAT_DUPLICATE_IDEMPOTENT_WRITES,
    STAT_REQUEUES,
    STAT_SETTLE_LATENCIES_S,
    STAT_WASTED_TOOL_EXECUTIONS,
)
from checks.history import OP, PROCESS, RUN, VALUE, Op, OpType
from checks.liveness import Liveness, liveness
from model.statements import CLAIMS, CREATES, REQUEUES

WRITE_EFFECTS = frozenset({"idempotent_write", "non_idempotent_write"})
TERMINAL = frozenset({"completed", "failed", "cancelled"})
DEAD_LETTER_SITES = frozenset({"reaper.dead_letter", "recovery.dead_letter", "reaper.dispatch_failed"})
"""The call sites whose FAILED settle the runtime itself counts as a dead-letter (the reaper's
T14 and its failed re-dispatch, in-process recovery's refusal); a provider failure settled by the
executor is an ordinary failure, not a dead-letter."""

UNKNOWN_REQUEST = "Request"

_OP_REQUEST = {
    H.PROVIDER: "CallProvider",
    H.TOOL: "InvokeTool",
    H.EVENT: "InsertEvent",
    H.DISPATCH: "Dispatch",
    H.EMIT: "EmitStep",
}
# Fault records without a request index: where to find the request that received them.
_FROM_LAST = frozenset({"slow", "duplicate"})  # recorded right after the request's own record
_FROM_NEXT = frozenset({"clock_skew", "identity"})  # recorded before it, by the same process
_FROM_NEXT_ANY = frozenset({"deploy"})  # recorded before it, by the world on the process's behalf


def _number(op: Op) -> str:
    name = op.value.get("transition")
    return name.partition(" ")[0] if isinstance(name, str) else ""


def request_kind(op: Op) -> str | None:
    """The request class a record answers ('Update', 'FindRun', ...), None for a non-request record."""
    if op.op == H.STORE:
        return "InsertRun" if _number(op) in CREATES else "Update"
    if op.op == H.READ:
        what = op.value.get("what")
        return what if isinstance(what, str) else UNKNOWN_REQUEST
    return _OP_REQUEST.get(op.op)


@dataclass
class RunMetrics:
    """The history-derived statistics of one simulation (see the sweep row contract)."""

    requeues: int = 0
    dead_letters: Counter[str] = field(default_factory=Counter)
    dead_letters_no_write: int = 0
    settle_latencies_s: list[float] = field(default_factory=list)
    duplicate_idempotent_writes: int = 0
    wasted_tool_executions: int = 0
    hits: Counter[tuple[str, str]] = field(default_factory=Counter)
    liveness: Liveness = field(default_factory=Liveness)
    """What the safety mechanisms took from runs doing well (:mod:`checks.liveness`)."""

    def columns(self) -> dict[str, Any]:
        """The row columns: fixed ``stat.*`` ones, and ``dl.*`` / ``hit.*`` only where nonzero."""
        out: dict[str, Any] = {
            STAT_REQUEUES: self.requeues,
            STAT_DEAD_LETTERS: sum(self.dead_letters.values()),
            STAT_DEAD_LETTERS_NO_WRITE: self.dead_letters_no_write,
            STAT_SETTLE_LATENCIES_S: list(self.settle_latencies_s),
            STAT_DUPLICATE_IDEMPOTENT_WRITES: self.duplicate_idempotent_writes,
            STAT_WASTED_TOOL_EXECUTIONS: self.wasted_tool_executions,
            **self.liveness.columns(),
        }
        for reason, count in sorted(self.dead_letters.items()):
            out[f"{DL}{reason}"] = count
        for (family, kind), count in sorted(self.hits.items()):
            out[f"{HIT}{family}.{kind}"] = count
        return out


@dataclass
class _Pass:
    """The state of the single pass; kept apart so :func:`run_metrics` reads as a dispatch.

    Only the records a metric counts are visited (matched store rows, tool records, landings and
    fault records); the request a fault without a request index struck is found by looking
    around the fault record (see :meth:`fault`), not by tracking every request record."""

    history: Sequence[Op]
    request_types: Sequence[type[Any] | str]
    out: RunMetrics = field(default_factory=RunMetrics)
    status: dict[str, str] = field(default_factory=dict)
    created_s: dict[str, float] = field(default_factory=dict)
    inflight: dict[str, set[int]] = field(default_factory=dict)  # run -> open write invokes, this attempt
    open_tool: dict[str, Op] = field(default_factory=dict)  # process -> its outstanding tool invoke
    executions: Counter[tuple[str, Any]] = field(default_factory=Counter)
    idempotent_landings: Counter[tuple[str, Any]] = field(default_factory=Counter)

    def store(self, op: Op) -> None:
        if op.type is not OpType.OK or not op.value.get("matched"):
            return
        row = op.value.get("row")
        if not isinstance(row, dict):
            return
        number, run = _number(op), op.run
        if number in CREATES:
            self.created_s.setdefault(run, op.time_s)
        if number in CLAIMS:
            self.inflight[run] = set()
        if number in REQUEUES:
            self.out.requeues += 1
        before, after = self.status.get(run, ""), str(row.get("status", ""))
        self.status[run] = after
        if after in TERMINAL and before not in TERMINAL:
            created = self.created_s.get(run)
            if created is not None:
                self.out.settle_latencies_s.append(round(op.time_s - created, 3))
            if after == "failed" and op.value.get("site") in DEAD_LETTER_SITES:
                self.out.dead_letters[str(row.get("termination_reason", ""))] += 1
                if not self.inflight.get(run):
                    self.out.dead_letters_no_write += 1

    def tool(self, op: Op) -> None:
        if op.type is OpType.INVOKE:
            self.open_tool[op.process] = op
            self.executions[(op.run, op.value.get("call"))] += 1
            if op.value.get("true_effect") in WRITE_EFFECTS:
                self.inflight.setdefault(op.run, set()).add(op.index)
            return
        invoke = self.open_tool.pop(op.process, None)
        if invoke is None:
            return
        if op.type is OpType.OK and op.value.get("replayed"):
            self.executions[(invoke.run, invoke.value.get("call"))] -= 1  # served from the dedup store
        if op.type is not OpType.INFO:  # info = the caller crashed: the write's outcome stays unknown
            self.inflight.get(invoke.run, set()).discard(invoke.index)

    def fault(self, op: Op, at: int) -> None:
        """Attribute the fault record at position ``at`` to the request class it struck."""
        family = str(op.value.get("family", ""))
        index = op.value.get("request")
        target = str(op.value.get("target", ""))
        if isinstance(index, int) and 0 <= index < len(self.request_types):
            kind = self.request_types[index]
            self.out.hits[(family, kind if isinstance(kind, str) else kind.__name__)] += 1
        elif family in _FROM_LAST:
            self.out.hits[(family, self._request_kind(range(at - 1, -1, -1), target))] += 1
        elif family in _FROM_NEXT:
            self.out.hits[(family, self._request_kind(range(at + 1, len(self.history)), target))] += 1
        elif family in _FROM_NEXT_ANY:
            self.out.hits[(family, self._request_kind(range(at + 1, len(self.history)), None))] += 1
        else:
            self.out.hits[(family, UNKNOWN_REQUEST)] += 1

    def _request_kind(self, positions: range, process: str | None) -> str:
        """The class of the first request record at ``positions`` (of ``process``, or of any process
        when None); UNKNOWN_REQUEST when there is none. Request records are those of the runtime's
        processes: not the nemesis, the world or a user's cancel."""
        history = self.history
        for i in positions:
            op = history[i]
            who = op[PROCESS]
            if who in _NOT_REQUESTERS or (process is not None and who != process):
                continue
            kind = request_kind(op)
            if kind is not None:
                return kind
        return UNKNOWN_REQUEST

    def finish(self) -> RunMetrics:
        self.out.wasted_tool_executions = sum(n - 1 for n in self.executions.values() if n > 1)
        self.out.duplicate_idempotent_writes = sum(n - 1 for n in self.idempotent_landings.values() if n > 1)
        return self.out


_NOT_REQUESTERS = frozenset({H.NEMESIS, H.WORLD, "user"})


def run_metrics(history: Iterable[Op], request_types: Sequence[type[Any] | str] = ()) -> RunMetrics:
    """The metrics of one history; ``request_types`` maps a global request index to its class.

    A fault record carrying a request index is attributed through ``request_types``; the
    families recorded without one are attributed to the request record next to them (``slow``
    and ``duplicate`` follow their request's record, ``clock_skew`` and ``identity`` precede the
    same process's next one, ``deploy`` precedes the next request record of any process, which is
    exact while reads have no store latency).
    """
    records = history if isinstance(history, (list, tuple)) else list(history)
    state = _Pass(records, request_types)
    nemesis, world, store, tool, fault, landing = H.NEMESIS, H.WORLD, H.STORE, H.TOOL, H.FAULT, H.LANDING
    idempotent_landings = state.idempotent_landings
    for at, op in enumerate(records):
        process, name = op[PROCESS], op[OP]
        if name is store or name == store:
            if process != nemesis and process != world:
                state.store(op)
        elif name is tool or name == tool:
            if process != nemesis and process != world:
                state.tool(op)
        elif process == nemesis:
            if name == fault:
                state.fault(op, at)
        elif process == world and name == landing and op[VALUE].get("effect") == "idempotent_write":
            idempotent_landings[(op[RUN], op[VALUE].get("call"))] += 1
    metrics = state.finish()
    metrics.liveness = liveness(records)
    return metrics
