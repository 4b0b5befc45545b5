"""A tiny builder of hand-made histories for the invariant tests.

Each method appends one :class:`checks.history.Op` with the next index (time = index unless
given) and returns that index, so a test can name its witnesses. Store records carry the
full after-state row: the builder keeps each run's current row and applies the changes a
test names on top of it.
"""

from __future__ import annotations

from typing import Any

from checks import INVARIANTS, Verdict, coverage
from checks.history import (
    ACCOUNT,
    CRASH,
    DECIDE,
    DELIVER,
    DISPATCH,
    EVENT,
    FINAL,
    LANDING,
    NEMESIS,
    PHASE,
    PLAN,
    PROVIDER,
    READ,
    SEGMENT,
    STORE,
    TOOL,
    WORLD,
    Op,
    OpType,
)
from model.statements import CLAIM_QUEUED, ENQUEUE_RUN, FINISH_RUN, MARK_PENDING_EFFECT, NAMES, RENEW_LEASE, START_RUN

OK, FAIL, INFO, INVOKE = OpType.OK, OpType.FAIL, OpType.INFO, OpType.INVOKE

RUN = "r1"
WORKER = "worker:h:1"
OTHER = "worker:h:2"
LEASE = 10_000


def base_row(**changes: Any) -> dict[str, Any]:
    """A full row value (as :func:`checks.history.row_value` writes it), queued by default."""
    row: dict[str, Any] = {
        "uid": 1,
        "status": "queued",
        "claimed_by": "",
        "lease_expires": 0,
        "requeue_count": 0,
        "pending_effect": "",
        "has_request": True,
        "has_state": False,
        "termination_reason": "",
        "error_class": "",
        "iterations": 0,
        "total_tokens": 0,
        "finished_at": 0,
    }
    row.update(changes)
    return row


class History:
    """Appends records with increasing indexes; ``ops`` is the history so far."""

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.rows: dict[str, dict[str, Any]] = {}

    def add(
        self,
        op: str,
        type_: OpType,
        *,
        run: str = RUN,
        process: str = WORKER,
        time_s: float | None = None,
        **value: Any,
    ) -> int:
        return self.record(op, type_, value, run=run, process=process, time_s=time_s)

    def record(
        self,
        op: str,
        type_: OpType,
        value: dict[str, Any],
        *,
        run: str = RUN,
        process: str = WORKER,
        time_s: float | None = None,
    ) -> int:
        index = len(self.ops)
        self.ops.append(Op(index, float(index) if time_s is None else time_s, process, op, run, type_, value))
        return index

    # -- the row -------------------------------------------------------------------------

    def store(
        self,
        transition: str,
        *,
        run: str = RUN,
        identity: str = WORKER,
        site: str = "",
        matched: bool = True,
        process: str | None = None,
        time_s: float | None = None,
        actor: str | None = None,
        clock_s: int | None = None,
        **changes: Any,
    ) -> int:
        """A store ok; when matched its row is the run's current row with ``changes`` applied.
        ``actor`` (the kind of process that issued it, as the world records it) and ``clock_s`` (what the
        issuing process's clock showed) are added when given."""
        row = None
        if matched:
            row = {**self.rows.get(run, base_row()), **changes}
            self.rows[run] = row
        changes_actor: dict[str, Any] = {} if actor is None else {"actor": actor}
        if clock_s is not None:
            changes_actor["clock_s"] = clock_s
        return self.add(
            STORE,
            OK,
            run=run,
            process=process or identity,
            time_s=time_s,
            transition=transition,
            site=site,
            identity=identity,
            matched=matched,
            changed=matched,
            row=row,
            **changes_actor,
        )

    def start(self, *, run: str = RUN, identity: str = WORKER) -> int:
        """Statement T1: an interactive run inserted RUNNING under ``identity``."""
        return self.store(
            NAMES[START_RUN], run=run, identity=identity, status="running", claimed_by=identity, lease_expires=LEASE
        )

    def enqueue(self, *, run: str = RUN) -> int:
        return self.store(NAMES[ENQUEUE_RUN], run=run, identity="", site="enqueue.insert", status="queued")

    def claim(self, *, run: str = RUN, identity: str = WORKER) -> int:
        """Statement T3: a worker claims the queued run."""
        return self.store(
            NAMES[CLAIM_QUEUED], run=run, identity=identity, status="running", claimed_by=identity, lease_expires=LEASE
        )

    def stamp(self, effect: str, *, run: str = RUN, identity: str = WORKER) -> int:
        """Statement T5: the fence stamp ('' clears it)."""
        return self.store(NAMES[MARK_PENDING_EFFECT], run=run, identity=identity, pending_effect=effect)

    def settle(
        self, status: str = "completed", *, run: str = RUN, identity: str = WORKER, site: str = "", **changes: Any
    ) -> int:
        """Statement T7 finishRun."""
        return self.store(
            NAMES[FINISH_RUN],
            run=run,
            identity=identity,
            site=site,
            status=status,
            claimed_by="",
            lease_expires=0,
            **changes,
        )

    def final(self, *, run: str = RUN, **changes: Any) -> int:
        row = {**self.rows.get(run, base_row()), **changes}
        return self.add(FINAL, OK, run=run, process=WORLD, row=row)

    # -- tools, landings and events ------------------------------------------------------

    def tool(
        self,
        call: str,
        true_effect: str,
        *,
        run: str = RUN,
        identity: str = WORKER,
        process: str | None = None,
        time_s: float | None = None,
        remote: bool | None = None,
    ) -> int:
        extra = {} if remote is None else {"remote": remote}
        return self.add(
            TOOL,
            INVOKE,
            run=run,
            process=process or identity,
            time_s=time_s,
            call=call,
            tool=f"tool_{call}",
            effect=true_effect,
            true_effect=true_effect,
            identity=identity,
            **extra,
            key="",
        )

    def tool_done(
        self,
        type_: OpType = OK,
        *,
        execution: int = 1,
        run: str = RUN,
        process: str = WORKER,
        replayed: bool = False,
    ) -> int:
        if type_ is OK:
            return self.add(TOOL, OK, run=run, process=process, execution=execution, landed=True, replayed=replayed)
        if type_ is FAIL:
            return self.add(TOOL, FAIL, run=run, process=process, error="ToolFailure")
        return self.add(TOOL, INFO, run=run, process=process, crashed=True)

    def landing(self, call: str, effect: str, *, execution: int = 1, run: str = RUN, identity: str = WORKER) -> int:
        return self.add(
            LANDING,
            OK,
            run=run,
            process=WORLD,
            call=call,
            tool=f"tool_{call}",
            effect=effect,
            execution=execution,
            identity=identity,
        )

    def event(
        self,
        type_: OpType = OK,
        *,
        seq: int = 0,
        kind: str = "tool",
        call: str = "",
        execution: int = 0,
        true_effect: str = "",
        run: str = RUN,
        identity: str = WORKER,
    ) -> int:
        extra = {"error": "StoreError"} if type_ is FAIL else {}
        return self.add(
            EVENT,
            type_,
            run=run,
            process=identity,
            seq=seq,
            kind=kind,
            round=1,
            tool=f"tool_{call}" if call else "",
            call=call,
            execution=execution,
            effect=true_effect,
            true_effect=true_effect,
            identity=identity,
            **extra,
        )

    def write(
        self, call: str, effect: str, *, execution: int = 1, seq: int = 0, run: str = RUN, identity: str = WORKER
    ) -> dict[str, int]:
        """A well-behaved write: stamp, invoke, landing, completion, audit event, clear."""
        return {
            "stamp": self.stamp(effect, run=run, identity=identity),
            "invoke": self.tool(call, effect, run=run, identity=identity),
            "landing": self.landing(call, effect, execution=execution, run=run, identity=identity),
            "done": self.tool_done(execution=execution, run=run, process=identity),
            "event": self.event(
                seq=seq, call=call, execution=execution, true_effect=effect, run=run, identity=identity
            ),
            "clear": self.stamp("", run=run, identity=identity),
        }

    # -- everything else -----------------------------------------------------------------

    def decide(
        self,
        pending_effect: str,
        *,
        run: str = RUN,
        decider: str = "reaper",
        process: str = "reaper",
        decision: str = "dead_letter",
    ) -> int:
        return self.add(
            DECIDE,
            OK,
            run=run,
            process=process,
            decider=decider,
            pending_effect=pending_effect,
            requeue_count=0,
            has_request=True,
            decision=decision,
        )

    def select_stale(self, *runs: str, process: str = "reaper", fences: list[str] | None = None) -> int:
        """The reaper's SelectStale read: the runs it will decide on, with the fences the store returned
        (each run's current fence unless ``fences`` says otherwise)."""
        physical = fences if fences is not None else [self.rows.get(r, base_row())["pending_effect"] for r in runs]
        return self.add(
            READ,
            OK,
            run="",
            process=process,
            what="SelectStale",
            site="reaper.select",
            result=list(runs),
            fences=physical,
        )

    def find(self, *, run: str = RUN, process: str = WORKER, site: str = "recovery.reread") -> int:
        """A FindRun read returning the run's current row: its status and its physical fence."""
        row = self.rows.get(run, base_row())
        return self.add(
            READ,
            OK,
            run=run,
            process=process,
            what="FindRun",
            site=site,
            result=row["status"],
            fence=row["pending_effect"],
        )

    def renew(self, *, run: str = RUN, identity: str = WORKER) -> int:
        """Statement T4: a plain heartbeat (what a read-only step's boundary does)."""
        return self.store(NAMES[RENEW_LEASE], run=run, identity=identity)

    def provider(self, *, run: str = RUN, process: str = WORKER, round_no: int = 1) -> int:
        return self.add(PROVIDER, INVOKE, run=run, process=process, round=round_no, synthesis=False)

    def provider_fail(
        self, true_class: str | None, failure_class: str | None = None, *, run: str = RUN, process: str = WORKER
    ) -> int:
        """A provider call that failed; ``true_class`` None leaves the ADR-095 class unrecorded."""
        value: dict[str, Any] = {"error": "ProviderException", "failure_class": failure_class or true_class or ""}
        if true_class is not None:
            value["true_class"] = true_class
        return self.record(PROVIDER, FAIL, value, run=run, process=process)

    def segment(self, entry: str, *, run: str = RUN, process: str = WORKER) -> int:
        return self.add(SEGMENT, INVOKE, run=run, process=process, entry=entry, identity=process)

    def segment_done(
        self, type_: OpType = OK, *, outcome: str = "completed", run: str = RUN, process: str = WORKER
    ) -> int:
        if type_ is OK:
            return self.add(SEGMENT, OK, run=run, process=process, outcome=outcome)
        if type_ is FAIL:
            return self.add(SEGMENT, FAIL, run=run, process=process, error="Boom")
        return self.add(SEGMENT, INFO, run=run, process=process, crashed=True)

    def crash(self, process: str = WORKER) -> int:
        return self.record(CRASH, INFO, {"process": process, "identity": process}, run="", process=NEMESIS)

    def deliver(self, *, duplicate: bool, run: str = RUN, process: str = WORKER) -> int:
        return self.add(DELIVER, OK, run=run, process=process, duplicate=duplicate)

    # -- what the runtime tells -------------------------------------------------------------

    def store_fail(self, transition: str, *, run: str = RUN, identity: str = WORKER, process: str | None = None) -> int:
        """A statement that threw a store error (no row changed)."""
        return self.add(STORE, FAIL, run=run, process=process or identity, transition=transition, site="",
                        identity=identity, error="StoreError")  # fmt: skip

    def account(self, account: str, reason: str = "", *, run: str = RUN, process: str = "reaper") -> int:
        """The reaper's per-row account of what it did with ``run``."""
        return self.add(ACCOUNT, OK, run=run, process=process, account=account, reason=reason)

    def dispatch(self, type_: OpType = OK, *, run: str = RUN, process: str = WORKER) -> int:
        """A wake-up dispatch completion (ok: the bus took it; fail: it threw)."""
        if type_ is OK:
            return self.add(DISPATCH, OK, run=run, process=process)
        return self.add(DISPATCH, FAIL, run=run, process=process, error="TransportException")

    def probe(self, result: str, *, run: str = RUN, process: str = WORKER) -> int:
        """The boundary's cancellation probe (a FindRun at executor.cancellation_probe)."""
        return self.add(READ, OK, run=run, process=process, what="FindRun", site="executor.cancellation_probe",
                        result=result, fence="")  # fmt: skip

    def plan(self, stops: dict[int, str], *, run: str = RUN) -> int:
        """The workload's ground truth: the rounds the script stops through the pipeline, and how."""
        rounds = sorted(stops)
        return self.add(PLAN, OK, run=run, process=WORLD, kind="queued", stops=rounds,
                        stop_kinds=[stops[r] for r in rounds])  # fmt: skip

    def phase(self, *, lease_s: int = 900, deadline_s: int = 0, epoch_s: int | None = None) -> int:
        """The 'chaos' phase record; ``epoch_s`` (the world's true clock at time 0) when given, so row
        clock values (``lease_expires``, a statement's ``clock_s``) are unix seconds, as the world writes them."""
        value: dict[str, Any] = {"phase": "chaos", "lease_s": lease_s, "deadline_s": deadline_s}
        if epoch_s is not None:
            value["epoch_s"] = epoch_s
        return self.record(PHASE, INFO, value, run="", process=NEMESIS)


def judge(name: str, history: History) -> Verdict:
    """The verdict of one catalogued invariant over a built history."""
    (invariant,) = [inv for inv in INVARIANTS if inv.name == name]
    return invariant.check(history.ops)


def reached(name: str, history: History) -> bool:
    """Whether one coverage property holds over a built history."""
    return coverage(history.ops)[name]
