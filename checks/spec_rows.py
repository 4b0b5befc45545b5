"""Promises of the spec about the rows the store writes and the reaper selects, that a sweep of automatic
mutants showed no invariant judged (with :mod:`checks.spec_rules` and :mod:`checks.spec_claims`).

Each is judged from the rows the store wrote and the world's records, never from the runtime's labels:

- ``inserted_row_per_spec`` (spec 2 T1: "status=running, claimed_by=given identity, lease_expires=given,
  started_at=now, totals 0, reason ''", and "`begin()` called with no identity gives ''/0"; T2:
  "status=queued, queued_request=encrypted payload, started_at=0, claim/lease/fence from DB defaults
  (''/0/''), requeue_count 0"; spec 1.1's column defaults): every row an INSERT creates holds exactly
  those columns, the identity being the inserting process's and ``now`` its clock reading.
- ``settled_totals_per_spec`` (spec 2 T7: "`settleCompleted` (COMPLETED, totals + reason from loop
  result), `settleFailed` (FAILED, zero totals, ...)", and every other FAILED settle of T7 with zero
  totals; spec 1.1: totals are "written only by a settle"): a T7 that completes a run writes the tokens its
  segment's provider answered; one that fails it writes zero totals.
- ``payload_failure_has_cause`` (spec 3.1: "rehydrate request from the pre-claim row (failure, incl.
  configuration deleted ⇒ unguarded settleFailed, FAILED)"; the resume's "position/decode failure after
  the claim"; spec 3.5): a run is failed for an unreadable stored payload only when the payload the world
  stored cannot be read. The world stores only payloads its runtime can read (no scenario can ask for an
  undecodable request or state, or delete a configuration), so no such settle has a cause in a simulation.
- ``stale_selection_per_spec`` (spec 2 T12 findStaleRunning: "status=running AND lease_expires>0 AND
  lease_expires<now; ORDER BY lease_expires ASC; LIMIT n"): every stale row the reaper's SELECT returns
  was RUNNING under a lease in the store, and they come oldest lease first (uid breaking ties), as the
  store held them at the read.

Pure checkers over the shared index of one history; they know only the history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from checks.fused import Key, Machine
from checks.history import INDEX, OP, PLAN, PROVIDER, READ, RUN, TYPE, VALUE, Op, OpType
from checks.index import Index, row_of
from checks.judgement import ADR_PROMISE, Finding, Tally, invariant
from checks.verdict import Kind
from model.statements import ENQUEUE_RUN, FINISH_RUN, START_RUN

# ---- settled totals --------------------------------------------------------------------------------


@invariant(
    "settled_totals_per_spec",
    Kind.ALWAYS,
    "a T7 that completes a run writes the tokens its segment's provider calls answered; one that fails it "
    "writes zero totals (spec 2 T7, 1.1)",
    tags=(ADR_PROMISE,),
)
class SettledTotalsPerSpec(Machine):
    """Every matched T7 ``finishRun``: COMPLETED writes ``total_tokens`` equal to the tokens the provider
    answered in the settling segment before it (the world's record of each answer: a segment's loop
    result counts its own calls); FAILED writes ``iterations`` 0 and ``total_tokens`` 0. A settle issued
    outside any segment of its run is judged on FAILED's zero totals only."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for settle in ix.rows_of(FINISH_RUN):
            row = row_of(settle)
            status = row.get("status")
            if status == "failed":
                wrong = {c: row.get(c) for c in ("iterations", "total_tokens") if row.get(c) not in (0, None)}
                if not wrong:
                    tally.hold()
                    continue
                tally.violate((settle.index,), f"run {settle.run!r} was settled FAILED at {settle.index} with "
                              f"totals {wrong}; spec T7 fails a run with zero totals", at=settle.index)  # fmt: skip
                continue
            span = ix.span_at(settle)
            if status != "completed" or span is None or span.run != settle.run:
                continue
            answered = 0
            for op in span.records:
                if op[INDEX] >= settle[INDEX]:
                    break
                if op[OP] == PROVIDER and op[TYPE] is OpType.OK:
                    answered += int(op[VALUE].get("tokens") or 0)
            if row.get("total_tokens") == answered:
                tally.hold()
                continue
            tally.violate((settle.index,), f"run {settle.run!r} was settled COMPLETED at {settle.index} with "
                          f"{row.get('total_tokens')} tokens; its segment's provider answered {answered}",
                          at=settle.index)  # fmt: skip
        return tally.finding("settles")


# ---- payload failures ------------------------------------------------------------------------------

PAYLOAD_FAILURES: Mapping[str, str] = {
    "RunRehydrationException": "its stored request",
    "SuspendedStateException": "its suspended state",
}
"""Spec 3.1: the error classes of a settle for a stored payload that cannot be read -> the payload."""


@invariant(
    "payload_failure_has_cause",
    Kind.ALWAYS,
    "a run is failed for an unreadable stored request or state only when the payload the world stored cannot be "
    "read; the world stores none such (spec 3.1, 3.5)",
    tags=(ADR_PROMISE,),
)
def payload_failure_has_cause(ix: Index) -> Finding:
    """No matched T7 writes a payload failure's error class (:data:`PAYLOAD_FAILURES`) unless the run's plan
    says the world stored an unreadable payload (a ``plan`` record's ``payload`` naming it): the world
    writes none, so every such settle is a failure with no cause."""
    tally = Tally()
    bad = {op.run for op in ix.of_type(PLAN, OpType.OK) if op[VALUE].get("payload")}
    for settle in ix.rows_of(FINISH_RUN):
        error = str(row_of(settle).get("error_class") or "")
        if error not in PAYLOAD_FAILURES:
            tally.hold()
            continue
        if settle.run in bad:
            tally.hold()
            continue
        tally.violate((settle.index,), f"run {settle.run!r} was settled FAILED at {settle.index} with {error!r}, "
                      f"but {PAYLOAD_FAILURES[error]} as the world stored it can be read", at=settle.index)  # fmt: skip
    return tally.finding("settles")


# ---- the reaper's selection ----------------------------------------------------------------------


@invariant(
    "stale_selection_per_spec",
    Kind.ALWAYS,
    "the reaper's SELECT returns only rows the store held RUNNING under a lease, oldest lease first (spec 2 T12)",
    tags=(ADR_PROMISE,),
)
class StaleSelectionPerSpec(Machine):
    """Every SelectStale answer that returned rows: each row, as the store held it just before the read
    (its latest matched row), is RUNNING with ``lease_expires`` > 0, and the rows come in ascending
    (``lease_expires``, ``uid``) order. (Staleness against the reaper's ``now`` is not judged: the read
    does not record the clock reading it used.)"""

    __slots__ = ("reads",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"reads": (READ, OpType.OK)}
    reads: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for read in self.reads:
            if read[RUN]:
                continue  # a read of one run (FindRun, MaxSequence, ...): the SELECT reads no run
            value = read[VALUE]
            if value.get("what") != "SelectStale" or not value.get("result"):
                continue
            previous: tuple[int, int] | None = None
            why = ""
            for uuid in value["result"]:
                before = ix.row_before(uuid, read[INDEX])
                row = {} if before is None else row_of(before)
                lease = row.get("lease_expires") or 0
                if row.get("status") != "running" or not lease > 0:
                    why = f"run {uuid!r} was {row.get('status')!r} with lease {lease} in the store"
                    break
                key = (lease, row.get("uid") or 0)
                if previous is not None and key < previous:
                    why = f"run {uuid!r} (lease {lease}) comes after a row whose lease is {previous[0]}"
                    break
                previous = key
            if not why:
                tally.hold()
                continue
            tally.violate((read.index,), f"the reaper's SELECT at {read.index} returned {why}; spec T12 returns "
                          "running leased rows, oldest lease first", at=read.index)  # fmt: skip
        return tally.finding("stale selections")


# ---- inserted rows ---------------------------------------------------------------------------------

_FRESH: Mapping[str, object] = {
    "requeue_count": 0,
    "pending_effect": "",
    "has_state": False,
    "termination_reason": "",
    "error_class": "",
    "iterations": 0,
    "total_tokens": 0,
    "finished_at": 0,
}
"""Spec 1.1: the columns neither INSERT sets, at their DB defaults (totals 0, reason '', no fence)."""
_ENQUEUED: Mapping[str, object] = {
    **_FRESH,
    "status": "queued",
    "claimed_by": "",
    "lease_expires": 0,
    "has_request": True,
    "started_at": 0,
}
"""Spec 2 T2."""


@invariant(
    "inserted_row_per_spec",
    Kind.ALWAYS,
    "a row startRun inserts is RUNNING under its process's identity from its clock (or unleased), one enqueueRun "
    "inserts is QUEUED with its request and unclaimed; every other column at its default (spec 2 T1, T2)",
    tags=(ADR_PROMISE,),
)
class InsertedRowPerSpec(Machine):
    """Every row a T1 ``startRun`` inserts: status running, ``claimed_by`` the inserting process's identity
    (the one its call began with, or the one it holds at the insert after an ``identity`` fault made it
    take another's; or '' with lease 0: a begin() given no identity), ``started_at`` its clock reading,
    no stored request, the rest at spec 1.1's defaults (``lease_is_the_specs`` judges the lease). Every row a T2
    ``enqueueRun`` inserts: status queued with its request, claim ''/0, ``started_at`` 0, the rest at the
    defaults. Judged from the row the store wrote and the process that issued the insert."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for op in ix.rows_of(START_RUN):
            row = row_of(op)
            clock = op[VALUE].get("clock_s")
            span = ix.span_at(op)
            identities = {op[VALUE].get("identity"), None if span is None else span.identity}
            unleased = row.get("claimed_by") == "" and row.get("lease_expires") == 0
            expected = {**_FRESH, "status": "running", "has_request": False}
            if not unleased and row.get("claimed_by") not in identities:
                expected["claimed_by"] = op[VALUE].get("identity")
            if isinstance(clock, (int, float)):
                expected["started_at"] = clock
            _judge_insert(tally, op, row, expected)
        for op in ix.rows_of(ENQUEUE_RUN):
            _judge_insert(tally, op, row_of(op), _ENQUEUED)
        return tally.finding("inserted rows")


def _judge_insert(tally: Tally, op: Op, row: Mapping[str, object], expected: Mapping[str, object]) -> None:
    if tuple(map(row.get, expected)) == tuple(expected.values()):
        tally.hold()  # every column as the spec says (the common case, without building a message)
        return
    wrong = [f"{column}={row.get(column)!r} (the spec's {value!r})" for column, value in expected.items()
             if column in row and row.get(column) != value]  # fmt: skip
    if not wrong:
        tally.hold()
        return
    tally.violate((op.index,), f"{op[VALUE].get('transition')!r} at {op.index} inserted run {op.run!r} with "
                  f"{', '.join(wrong)}", at=op.index)  # fmt: skip


__all__ = ["PAYLOAD_FAILURES"]
