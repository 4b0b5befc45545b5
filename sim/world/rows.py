"""The row store and the event stream: every statement the runtime issues against the database.

Answers the reads (``FindRun``, ``MaxSequence``, ``CountEvents``, ``SelectStale``), the guarded
writes (``Update`` with one of the model's transitions, ``InsertRun``), the audit inserts
(``InsertEvent``; the ``audit`` family and outage windows make them fail) and the observer's
``EmitStep``, and applies a user's cancel. The interpreter waits each statement's latency
(:meth:`RowStore.store_delay`, where a ``store`` fault strikes) before calling these; each
returns ``(value, error)`` and records what the store really did: a write's record holds the
row after it, which every row invariant judges. Also tracks which runs are terminal and wakes
the approvers when a run starts waiting. Knows the database and the recorder, not simpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checks import history as H
from model import entrypoints
from model.failures import StoreError
from model.records import Registry
from model.requests import FindRun, InsertRun, Update
from model.segment import Context
from model.statements import ENQUEUE_RUN, NAMES, START_RUN
from model.vocab import RunStatus
from sim.world.clocks import EPOCH_S, Proc
from sim.world.faults import Fault
from sim.world.recorder import FAIL, INVOKE, OK
from sim.world.store import Database

if TYPE_CHECKING:
    from sim.world.interpreter import World

_AWAITING = (RunStatus.WAITING_FOR_APPROVAL, RunStatus.WAITING_FOR_INPUT)
_TERMINAL = (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED)
"""``RunStatus.is_awaiting`` / ``is_terminal`` as tuples: a membership test by identity, without
the enum property and hash (``note_status`` runs for every matched store statement)."""

Answer = tuple[Any, StoreError | None]
_NO_TOOLS = Registry()


class RowStore:
    """The database of one world, as the runtime's statements reach it."""

    def __init__(self, world: World, db: Database) -> None:
        self.world = world
        self.db = db
        self.env = world.env
        self.recorder = world.recorder
        self.tools = world.tools
        self.terminal: set[str] = set()
        self.waiting_signal = world.env.event()
        """Succeeds when a run starts waiting for a decision; the approvers replace it once woken."""
        cfg = world.scenario.world
        self.store_latency_s = cfg.store_latency_s
        self._chaos_s = cfg.chaos_s
        self._outages = world.scenario.faults.audit.outages
        self._user = Proc("user", "user", "user", "h0")
        """The user who cancels: one process, its own identity, a true clock."""
        if db.collation != "binary":  # bound once: a binary world's writes pay nothing for it
            self.write_apply = self._write_apply_collated  # type: ignore[method-assign]

    def store_delay(self, proc: Proc, uuid: str, fault: Fault | None) -> float:
        """Statement latency; a store fault is recorded here, when it strikes (before any wait)."""
        delay = self.store_latency_s
        if fault is not None and fault.family == "store":
            self.recorder.fault("store", fault.kind, proc.name, uuid, {"request": fault.at, "slow_s": fault.value})
            if fault.kind == "slow":
                delay += fault.value
        return delay

    # ---- reads: called once the statement's latency has passed ----------------------------------

    def _read_failed(self, proc: Proc, what: str, site: str, uuid: str) -> tuple[None, StoreError]:
        self.recorder.add(proc.name, H.READ, uuid, FAIL, {"what": what, "site": site, "error": "StoreError"})
        return None, StoreError("read failed")

    def find_run(self, proc: Proc, request: Any, fault: Fault | None) -> Answer:
        uuid = request.uuid
        if fault is not None and fault.family == "store" and fault.kind == "fail":
            return self._read_failed(proc, "FindRun", request.site, uuid)
        row = self.db.rows.get(uuid)
        if row is None:
            value = {"what": "FindRun", "site": request.site, "result": None}
        else:
            value = {"what": "FindRun", "site": request.site, "result": row.status._value_, "fence": row.pending_effect}
        self.recorder.add(proc.name, H.READ, uuid, OK, value)
        return row, None

    def max_sequence(self, proc: Proc, request: Any, fault: Fault | None) -> Answer:
        uuid = request.uuid
        if fault is not None and fault.family == "store" and fault.kind == "fail":
            return self._read_failed(proc, "MaxSequence", request.site, uuid)
        result = self.db.max_sequence(uuid)
        self.recorder.add(proc.name, H.READ, uuid, OK, {"what": "MaxSequence", "site": request.site, "result": result})
        return result, None

    def count_events(self, proc: Proc, request: Any, fault: Fault | None) -> Answer:
        uuid = request.uuid
        if fault is not None and fault.family == "store" and fault.kind == "fail":
            return self._read_failed(proc, "CountEvents", "", uuid)
        result = self.db.count_events(uuid)
        self.recorder.add(proc.name, H.READ, uuid, OK, {"what": "CountEvents", "site": "", "result": result})
        return result, None

    def select_stale(self, proc: Proc, request: Any, fault: Fault | None) -> Answer:
        if fault is not None and fault.family == "store" and fault.kind == "fail":
            return self._read_failed(proc, "SelectStale", "", "")
        rows = self.db.select_stale(request.now, request.limit)
        if rows:
            uuids, fences = [r.uuid for r in rows], [r.pending_effect for r in rows]
            value = {"what": "SelectStale", "site": "", "result": uuids, "fences": fences}
        else:  # most reaper ticks find nothing: held, to fold into the tick's ``idle`` record
            value = {"what": "SelectStale", "site": "", "result": [], "fences": []}
            if self.recorder.hold_empty_read(proc.name, value):
                return rows, None
        self.recorder.add(proc.name, H.READ, "", OK, value)
        return rows, None

    # ---- writes: the statement is recorded, its latency waited, then it is applied --------------

    def write_invoke(self, proc: Proc, request: Any) -> tuple[str, dict[str, Any]]:
        if type(request) is InsertRun:
            uuid = request.row.uuid
            name = NAMES[START_RUN] if request.row.status is RunStatus.RUNNING else NAMES[ENQUEUE_RUN]
        else:
            uuid, name = request.uuid, request.transition.name
        base = {
            "transition": name,
            "site": request.site,
            "identity": proc.identity,
            "actor": proc.kind,
            "clock_s": proc.read_s,
        }
        self.recorder.add(proc.name, H.STORE, uuid, INVOKE, base)
        return uuid, base

    def write_apply(self, proc: Proc, request: Any, fault: Fault | None, uuid: str, base: dict[str, Any]) -> Answer:
        rec = self.recorder
        if fault is not None and fault.family == "store" and fault.kind == "fail":
            rec.add(proc.name, H.STORE, uuid, FAIL, {**base, "error": "StoreError"})
            return None, StoreError("statement failed")
        if type(request) is InsertRun:
            row = self.db.insert(request.row)
            rec.add(proc.name, H.STORE, uuid, OK, {**base, "matched": True, "changed": True, "row": H.row_value(row)})
            self.note_status(uuid, row.status)
            return row, None
        # One guarded UPDATE: its outcome, and the row after it when it matched.
        result, after = self.db.update(uuid, request.transition)
        if result.matched:
            assert after is not None
            value = {**base, "matched": True, "changed": result.changed, "row": H.row_value(after)}
            rec.add(proc.name, H.STORE, uuid, OK, value)
            self.note_status(uuid, after.status)
        else:
            rec.add(proc.name, H.STORE, uuid, OK, {**base, "matched": False, "changed": result.changed, "row": None})
        return result, None

    def _write_apply_collated(
        self, proc: Proc, request: Any, fault: Fault | None, uuid: str, base: dict[str, Any]
    ) -> Answer:
        """:meth:`write_apply` on a store whose collation can equate distinct identities: a guarded
        UPDATE that matched only because it did records ``guard``, the identity its WHERE carried, and
        ``equated``, the distinct identity that held the row (the store's ground truth: the record's
        ``identity`` is the issuing process's, which a Sync transport's nested attempt does not carry)."""
        if type(request) is InsertRun or (fault is not None and fault.family == "store" and fault.kind == "fail"):
            return RowStore.write_apply(self, proc, request, fault, uuid, base)
        result, after = self.db.update(uuid, request.transition)
        if not result.matched:
            refused = {**base, "matched": False, "changed": result.changed, "row": None}
            self.recorder.add(proc.name, H.STORE, uuid, OK, refused)
            return result, None
        assert after is not None
        value = {**base, "matched": True, "changed": result.changed, "row": H.row_value(after)}
        equated = self.db.equated
        if equated is not None:
            value["guard"], value["equated"] = equated
        self.recorder.add(proc.name, H.STORE, uuid, OK, value)
        self.note_status(uuid, after.status)
        return result, None

    def note_status(self, uuid: str, status: RunStatus) -> None:
        """Keep ``terminal`` in step with a row's new status, and wake the approvers when it waits."""
        if status in _TERMINAL:
            self.terminal.add(uuid)
            return
        if status in _AWAITING and not self.waiting_signal.triggered:
            self.waiting_signal.succeed()
        self.terminal.discard(uuid)

    # ---- the event stream ----------------------------------------------------------------------

    def insert_event(self, proc: Proc, request: Any, fault: Fault | None) -> tuple[None, StoreError | None]:
        """``InsertEvent`` (the audit): fails under an ``audit`` fault or inside an outage window."""
        rec = self.recorder
        event = request.event
        step = event.step
        kind = step.kind._value_
        value = {
            "seq": event.sequence,
            "kind": kind,
            "round": step.round_no,
            "tool": step.tool,
            "call": step.call_id,
            "execution": step.execution,
            "effect": request.effect,
            "true_effect": self.tools.true_effect(proc, step.tool) if kind == "tool" else "",
            "identity": proc.identity,
        }
        uuid = request.uuid
        rec.add(proc.name, H.EVENT, uuid, INVOKE, value)
        outage = False
        now = self.env._now
        if now < self._chaos_s:  # outage windows hold in the chaos phase only
            for lo, hi in self._outages:
                if lo <= now < hi:
                    outage = True
                    break
        if outage or (fault is not None and fault.family == "audit"):
            rec.fault("audit", "outage" if outage else "fail", proc.name, uuid, {"request": self.world.requests - 1})
            rec.add(proc.name, H.EVENT, uuid, FAIL, {**value, "error": "StoreError"})
            return None, StoreError("event insert failed")
        self.db.insert_event(uuid, event)
        rec.add(proc.name, H.EVENT, uuid, OK, value)
        return None, None

    def emit(self, proc: Proc, request: Any, fault: Fault | None) -> tuple[None, None]:
        """``EmitStep``: the interactive observer's stream; it never fails."""
        self.recorder.add(proc.name, H.EMIT, request.uuid, OK, {"round": request.round_no, "kind": request.kind})
        return None, None

    # ---- the user ------------------------------------------------------------------------------

    def cancel_now(self, uuid: str) -> None:
        """A user cancels an existing run, instantly and without faults: the runtime's ``cancel`` entry
        point (read, then T8) driven to its end at once, recorded as a segment of process ``user``
        whose outcome is what ``cancel`` returned."""
        if self.db.find(uuid) is None:
            return
        user = self._user
        rec = self.recorder
        rec.add(user.name, H.SEGMENT, uuid, INVOKE, {"entry": "cancel", "identity": user.identity})
        gen = entrypoints.cancel(Context(self.world.policy, _NO_TOOLS, user.identity), uuid)  # looked up per call
        value: Any = None
        while True:
            try:
                request = gen.send(value)
            except StopIteration as stop:
                rec.add(user.name, H.SEGMENT, uuid, OK, {"outcome": bool(stop.value)})
                return
            if type(request) is FindRun:
                value, _ = self.find_run(user, request, None)
            elif type(request) is Update:
                target, base = self.write_invoke(user, request)
                value, _ = self.write_apply(user, request, None, target, base)
            else:
                value = user.read_s = EPOCH_S + int(self.env.now)  # the user's clock is true
