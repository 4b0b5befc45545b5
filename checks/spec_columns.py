"""Promises of the spec about the values a statement or an audit step writes, that a sweep of automatic
mutants showed no invariant judged (with :mod:`checks.spec_rows`, :mod:`checks.spec_rules` and
:mod:`checks.spec_claims`).

Each is judged from the rows the store wrote and the world's records, never from the runtime's labels:

- ``requeued_row_per_spec`` (spec 2.1: "RUNNING ─requeue(T11, owner) / requeueStale(T13, reaper)─▶ QUEUED
  (count+1, claim/lease/fence cleared)"): every requeue that took effect leaves the row QUEUED, unclaimed,
  unleased, and with a ``requeue_count`` one more than the row the store held just before it. (The fence
  is judged by the fence invariants: a historic preset keeps it, KB-9.)
- ``fence_stamps_a_write`` (spec 3.4 step 1: "Read-only ⇒ return (no write, no renewal)"; step 3: "T5
  stamp with the effect value"; 3.3 step 4: "T5 with ''"): the fence (T5 ``markPendingEffect``) is only
  ever stamped with a write effect or cleared: no statement stores ``read_only`` (or any other value) as
  a pending effect.
- ``audit_step_execution_true`` (spec 3.2: "invoke → tool step", the tool step records the call's
  result; the request, llm, context, approval and input steps record no tool result): an audit step
  names a tool execution only when it is a tool step and the world's tool server performed that
  execution for the run; every other step names none.

Pure checkers over the shared index of one history; they know only the history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from checks.fused import Key, Machine
from checks.history import EVENT, RUN, TOOL, VALUE, Op, OpType
from checks.index import Index, row_of
from checks.judgement import ADR_PROMISE, Finding, Tally, invariant
from checks.verdict import Kind
from model.statements import MARK_PENDING_EFFECT, REQUEUE, REQUEUE_STALE

# ---- requeued rows ---------------------------------------------------------------------------------

_REQUEUED: Mapping[str, object] = {"status": "queued", "claimed_by": "", "lease_expires": 0}
"""Spec 2.1: what a requeue (T11, T13) leaves besides the count."""


@invariant(
    "requeued_row_per_spec",
    Kind.ALWAYS,
    "a requeue (T11, T13) leaves the row QUEUED, unclaimed and unleased, its requeue count one more than the "
    "store held (spec 2.1)",
    tags=(ADR_PROMISE,),
)
class RequeuedRowPerSpec(Machine):
    """Every matched T11 ``requeue`` and T13 ``requeueStale``: the row the store wrote is QUEUED with
    ``claimed_by`` '' and ``lease_expires`` 0, and its ``requeue_count`` is the count of the row the store
    held just before the statement (its latest matched row) plus one. A requeue of a row with no earlier
    matched row in the history is judged on the columns only."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for number in (REQUEUE, REQUEUE_STALE):
            for op in ix.rows_of(number):
                _judge_requeue(ix, tally, op)
        return tally.finding("requeues")


def _judge_requeue(ix: Index, tally: Tally, op: Op) -> None:
    row = row_of(op)
    wrong = [f"{column}={row.get(column)!r}" for column, value in _REQUEUED.items() if row.get(column) != value]
    before = ix.row_before(op[RUN], op.index)
    if before is not None:
        count = int(row_of(before).get("requeue_count") or 0)
        if row.get("requeue_count") != count + 1:
            wrong.append(f"requeue_count={row.get('requeue_count')!r} after {count}")
    if not wrong:
        tally.hold()
        return
    witness = (op.index,) if before is None else (before.index, op.index)
    tally.violate(witness, f"{op[VALUE].get('transition')!r} at {op.index} left run {op.run!r} with "
                  f"{', '.join(wrong)}; spec 2.1 requeues to QUEUED, count+1, claim and lease cleared",
                  at=op.index)  # fmt: skip


# ---- the fence's values ----------------------------------------------------------------------------

FENCE_VALUES = frozenset({"", "idempotent_write", "non_idempotent_write"})
"""Spec 3.3 step 4 and 3.4 step 3: a stamp holds the call's write effect; a clear holds ''."""


@invariant(
    "fence_stamps_a_write",
    Kind.ALWAYS,
    "the fence (T5) is stamped only with a write effect, or cleared: a read-only call stamps nothing (spec 3.4, 3.3)",
    tags=(ADR_PROMISE,),
)
class FenceStampsAWrite(Machine):
    """Every matched T5 ``markPendingEffect`` writes a ``pending_effect`` of ``idempotent_write``,
    ``non_idempotent_write`` or '' (the boundary's clear). The pre-tool hook returns for a read-only
    effect before any write, so ``read_only`` is never stored as a fence."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for op in ix.rows_of(MARK_PENDING_EFFECT):
            effect = row_of(op).get("pending_effect")
            if effect in FENCE_VALUES:
                tally.hold()
                continue
            tally.violate((op.index,), f"{op[VALUE].get('transition')!r} at {op.index} stamped run {op.run!r}'s "
                          f"fence with {effect!r}; spec 3.4 stamps only a write effect", at=op.index)  # fmt: skip
        return tally.finding("fence stamps")


# ---- audit steps and tool executions ----------------------------------------------------------------


@invariant(
    "audit_step_execution_true",
    Kind.ALWAYS,
    "an audit step names a tool execution only when it is a tool step and the world's tool server performed "
    "that execution for the run (spec 3.2)",
    tags=(ADR_PROMISE,),
)
class AuditStepExecutionTrue(Machine):
    """Every audit insert the store answered (an ``event`` completion, stored or refused): a step of
    another kind than ``tool`` names execution 0; a ``tool`` step names 0 (nothing executed: a refused,
    unknown or denied call) or an execution the world's tool server reported for the same run (a ``tool``
    completion: returned, replayed under its idempotency key, or crashed after landing) before the insert."""

    __slots__ = ("crashed", "refused", "returned", "stored")
    STREAMS: ClassVar[Mapping[str, Key]] = {
        "stored": (EVENT, OpType.OK),
        "refused": (EVENT, OpType.FAIL),
        "returned": (TOOL, OpType.OK),
        "crashed": (TOOL, OpType.INFO),
    }
    stored: list[Op]
    refused: list[Op]
    returned: list[Op]
    crashed: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        performed: dict[tuple[str, int], int] = {}
        for op in (*self.returned, *self.crashed):
            execution = op[VALUE].get("execution")
            if isinstance(execution, int) and execution:
                key = (op[RUN], execution)
                performed[key] = min(performed.get(key, op.index), op.index)
        for op in sorted((*self.stored, *self.refused), key=_index):
            value = op[VALUE]
            execution = value.get("execution") or 0
            if execution == 0:
                tally.hold()
                continue
            kind = value.get("kind")
            seen = performed.get((op[RUN], execution)) if kind == "tool" else None
            if seen is not None and seen < op.index:
                tally.hold()
                continue
            why = (
                "which is not a tool step"
                if kind != "tool"
                else "but the tool server performed no such execution for the run before it"
            )
            tally.violate((op.index,), f"the {kind!r} step audited at {op.index} for run {op.run!r} names "
                          f"execution {execution}, {why}", at=op.index)  # fmt: skip
        return tally.finding("audit steps")


def _index(op: Op) -> int:
    return op.index


__all__ = ["FENCE_VALUES"]
