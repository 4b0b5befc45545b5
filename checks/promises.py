"""ADR promises that had no invariant of their own, judged from what the segment physically did.

- ``lost_lease_stops`` (ADR-104, "a worker that lost its lease stops without settling"): once a
  renewal or fence statement of a segment (T4, T5, the proposal's lease extension) failed or matched
  nothing, the segment issues no further statement, audit insert, provider call or tool call on
  that run.
- ``cancel_observed_at_boundary`` (ADR-103, "cancellation is observed at the next step boundary; the
  boundary step is still persisted; no further provider call or tool starts"; spec 3.3 step 3): when
  a segment's cancellation probe (the boundary's read of the row) returns it CANCELLED, the
  segment's next request on the run is the insert of that boundary's step, it starts no provider or
  tool call afterwards, and it returns CANCELLED. (The read is known by its call site; what it
  returned and what followed are physical.)
- ``lease_within_bound`` (spec T1/T3/T4/T5/T10, LEASE_SECONDS): no statement sets a lease past the
  ``now`` its process's clock showed (the world records that reading on every statement) plus
  LEASE_S, or, for a fence stamp or a deadline extension, plus the longest operation deadline the
  deployed code declares (the chaos ``phase`` record carries both).

Checkers fed by the single pass (machines judging once it is over); they know only the history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from checks.fused import Key, Machine
from checks.history import EVENT, INDEX, OP, PHASE, PROVIDER, READ, RUN, STORE, TOOL, TYPE, VALUE, Op, OpType
from checks.index import Index, Span, merged
from checks.judgement import ADR_PROMISE, Finding, Tally, invariant
from checks.own import matched, number, spans_of_entries
from checks.verdict import Kind
from model.statements import (
    CANCEL,
    CLAIM_FOR_RESUME,
    CLAIM_QUEUED,
    EXTEND_LEASE,
    MARK_PENDING_EFFECT,
    RENEW_LEASE,
    RENEWALS,
    START_RUN,
)

_RENEWALS = RENEWALS | {EXTEND_LEASE}
_STOPPED = frozenset({STORE, EVENT, PROVIDER, TOOL})
_PROBE = "executor.cancellation_probe"
_EXECUTING = frozenset({"run_queued", "run_interactive", "approve", "submit_input"})
_LEASES = (START_RUN, CLAIM_QUEUED, RENEW_LEASE, MARK_PENDING_EFFECT, CLAIM_FOR_RESUME, EXTEND_LEASE)
_DEADLINED = frozenset({MARK_PENDING_EFFECT, EXTEND_LEASE})
_DEFAULT_LEASE_S = 900


@invariant(
    "lost_lease_stops",
    Kind.ALWAYS,
    "after a failed or refused renewal or fence statement a segment makes no further request on the run (ADR-104)",
    tags=(ADR_PROMISE,),
)
class LostLeaseStops(Machine):
    """After its first renewal or fence statement that failed or matched nothing, a segment makes no
    further request on the run: the segments of the refused statements (the index lists them) and of
    the failed ones (the pass keeps them), each walked once the pass is over."""

    __slots__ = ("failed",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"failed": (STORE, OpType.FAIL)}
    failed: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        refused = [op for op in ix.refused if number(op) in _RENEWALS]
        failed = [op for op in self.failed if number(op) in _RENEWALS]
        if not refused and not failed:
            return tally.finding("lost leases")
        for span in ix.spans_of(merged(refused, failed)):
            lost: Op | None = None
            for op in span.records:
                name, type_ = op[OP], op[TYPE]
                if lost is None:
                    if name == STORE and number(op) in _RENEWALS and type_ is not OpType.INVOKE and not matched(op):
                        lost = op
                    continue
                if name in _STOPPED and type_ is OpType.INVOKE:
                    how = "failed" if lost.type is OpType.FAIL else "matched nothing"
                    tally.violate(
                        (lost[INDEX], op[INDEX]),
                        f"the {span.entry} segment of run {span.run!r} lost its lease at {lost.index} "
                        f"({lost.value.get('transition')!r} {how}) "
                        f"and went on to a {name} request at {op[INDEX]}",
                        at=op[INDEX],
                    )
                    break
            else:
                if lost is not None:
                    tally.hold()
        return tally.finding("lost leases")


@invariant(
    "cancel_observed_at_boundary",
    Kind.ALWAYS,
    "a boundary that reads its run cancelled still persists its step, starts no call and reports CANCELLED (ADR-103)",
    tags=(ADR_PROMISE,),
)
class CancelObservedAtBoundary(Machine):
    """A cancellation probe that reads the run CANCELLED is followed by the insert of its boundary
    step, by no provider or tool call, and by the outcome CANCELLED: only a run a cancel (T8) took
    can be read cancelled, so once the pass is over the segments of those runs are walked."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        cancelled = {op[RUN] for op in ix.rows_of(CANCEL)}
        if not cancelled:
            return tally.finding("cancellations observed")
        for span in spans_of_entries(ix, _EXECUTING):
            if span.run not in cancelled:
                continue
            records = span.records
            for i, op in enumerate(records):
                probe = op[OP] == READ and op[TYPE] is OpType.OK and op[VALUE].get("site") == _PROBE
                if probe and op[VALUE].get("result") == "cancelled":
                    _judge_probe(tally, span, op, records[i + 1 :])
                    break
        return tally.finding("cancellations observed")


def _judge_probe(tally: Tally, span: Span, probe: Op, after: list[Op]) -> None:
    requests = [op for op in after if op[TYPE] is OpType.INVOKE and op[OP] != "emit"]
    done = span.completion
    if not requests and (done is None or done[TYPE] is OpType.INFO):
        return  # the process died right after the read: nothing of what follows can be judged
    why = ""
    witness = [probe[INDEX]]
    if not requests or requests[0][OP] != EVENT:
        nxt = requests[0] if requests else None
        why = "its next request was " + (f"a {nxt[OP]} at {nxt[INDEX]}" if nxt else "none") + ", not the step's insert"
        witness += [nxt[INDEX]] if nxt else []
    calls = [op for op in requests if op[OP] in (PROVIDER, TOOL)]
    if not why and calls:
        why, witness = f"it started a {calls[0][OP]} call at {calls[0][INDEX]}", [*witness, calls[0][INDEX]]
    if not why and done is not None and done[TYPE] is not OpType.INFO:
        told = done[VALUE].get("outcome") if done[TYPE] is OpType.OK else done[VALUE].get("error")
        if told != "cancelled":
            why, witness = f"it returned {told!r} at {done[INDEX]}", [*witness, *_insert(requests), done[INDEX]]
    if not why:
        tally.hold()
        return
    tally.violate(
        witness,
        f"the {span.entry} segment of run {span.run!r} read the run cancelled at its boundary ({probe.index}), "
        f"but {why}",
        at=probe[INDEX],
    )


def _insert(requests: list[Op]) -> list[int]:
    return [requests[0][INDEX]] if requests and requests[0][OP] == EVENT else []


@invariant(
    "lease_within_bound",
    Kind.ALWAYS,
    "no statement sets a lease past its process's clock reading plus LEASE_S (or a declared deadline)",
    tags=(ADR_PROMISE,),
)
class LeaseWithinBound(Machine):
    """No matched statement sets ``lease_expires`` past its process's clock reading plus LEASE_S (or,
    for a fence stamp or an extension, plus the longest declared operation deadline): the phases the
    pass kept give the bounds, the index's rows of each leasing transition are judged once it is over."""

    __slots__ = ("phases",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"phases": (PHASE, OpType.INFO)}
    phases: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        lease_s, deadline_s = _DEFAULT_LEASE_S, 0
        for phase in self.phases:
            if phase[VALUE].get("phase") == "chaos":
                lease_s = int(phase[VALUE].get("lease_s") or _DEFAULT_LEASE_S)
                deadline_s = int(phase[VALUE].get("deadline_s") or 0)
        for transition in _LEASES:
            extension = max(lease_s, deadline_s) if transition in _DEADLINED else lease_s
            renewal = transition in _RENEWALS  # may clear the lease to 0
            for op in ix.rows_of(transition):
                value = op[VALUE]
                clock = value.get("clock_s")
                if not isinstance(clock, (int, float)):
                    continue
                lease = value["row"].get("lease_expires")
                if not isinstance(lease, (int, float)) or (not renewal and lease == 0):
                    continue
                if lease <= clock + extension:
                    tally.held += 1  # the common case, inline: one judged case held
                    continue
                _violated(tally, op, lease, clock, clock + extension)
        return tally.finding("leases set")


def _violated(tally: Tally, op: Op, lease: float, clock: float, bound: float) -> None:
    tally.violate(
        (op[INDEX],),
        f"{op[VALUE].get('transition')!r} at {op[INDEX]} set run {op[RUN]!r}'s lease to {lease}, past the issuing "
        f"process's clock ({clock}) plus {bound - clock} s",
        at=op[INDEX],
    )


__all__ = ["CancelObservedAtBoundary", "LeaseWithinBound", "LostLeaseStops"]
