"""Invariants judged against the world's ground truth, never against the runtime's own account.

The runtime attaches labels to what it asks for (the effect it resolved, the site of a
statement, the "decide" notes of its deciders); a wrong resolver, classifier or recordStep
writes wrong labels too, so a checker that reads them can only agree with the bug. These
checkers read what the world recorded physically: the statements the store applied and the
rows they left, the fences the store's reads returned, the real effect of the tool code a
process loaded (``true_effect``), the kind of process that issued a statement (``actor``) and
the workload's script (``plan``).

- ``unknown_name_is_strictest`` (ADR-111): a tool step for a name no loaded tool has is fenced
  and cleared as a non_idempotent_write (a T5, never a plain T4 renewal), and when its audit
  fails the segment does not carry on.
- ``fence_matches_inflight_write`` (ADR-122): every write fence a read returns was stamped
  after the run's latest claim.
- ``settles_by_owner``: a RUNNING row is settled only by its claimant, by a user's cancel (T8), or by
  the reaper's dead-letter (T14) of a row whose lease the store held already past in true time (the
  row just before the statement, not the reaper's WHERE, decides).
- ``read_only_audit_fail_soft`` (ADR-081/111): a failed audit of a read-only or non-tool step
  never ends the run: the segment's next statement does not fail, dead-letter or requeue it.

Pure checkers over the shared index of one history; they know only the history.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from operator import attrgetter
from typing import Any, ClassVar

from checks.fused import Key, Machine
from checks.history import DISPATCH, EVENT, INDEX, OP, PLAN, PROVIDER, READ, RUN, STORE, TOOL, TYPE, VALUE, Op, OpType
from checks.index import WRITE_EFFECTS, Index, merged, row_of
from checks.judgement import Finding, Tally, invariant
from checks.verdict import Kind
from model.statements import CANCEL, CLAIMS, DEAD_LETTER_STALE, MARK_PENDING_EFFECT, RENEW_LEASE, REQUEUES, SETTLES

_UNKNOWN = "unknown"
_STRICTEST = "non_idempotent_write"
_UNRESTRICTED_SETTLES = frozenset({("user", CANCEL)})
"""(actor, transition) pairs that may settle a row another process holds: a user's cancel is unguarded
by design (T8). The reaper's dead-letter (T14) is not exempt for what its WHERE re-checks: it may settle
another's row only when the row the store held just before it had a lease already past in true time."""
_SETTLE_NUMBERS = tuple(sorted(SETTLES))
_by_index = attrgetter("index")
_FAIL_CLOSED_KINDS = frozenset({"approval"})
"""Event kinds whose failed insert legitimately changes the course of a run: an approval of a
write turn that cannot be recorded releases the run back to waiting (ADR-132)."""


# ---- unknown names ------------------------------------------------------------------------------


@invariant(
    "unknown_name_is_strictest",
    Kind.ALWAYS,
    "a tool step for a name the running code does not know is treated as non_idempotent_write (ADR-111)",
)
class UnknownNameIsStrictest(Machine):
    """A tool step for a name the process's loaded code lacks is treated as non_idempotent_write.

    Judged from the statements the store applied in the step's segment: the boundary before the
    step's audit insert must be a T5 (fence clear), as for any write, not a T4 renewal; and after
    its audit insert fails the segment calls no provider and no tool again (fail-closed). A step
    whose boundary made no statement (an unleased segment, a cancelled run) is not judged on the
    first count. Only segments with an audit of an unknown tool can hold a case: found among the
    audits the pass kept, and each walked alone at the end.
    """

    __slots__ = ("failed", "invoked")
    STREAMS: ClassVar[Mapping[str, Key]] = {"invoked": (EVENT, OpType.INVOKE), "failed": (EVENT, OpType.FAIL)}
    invoked: list[Op]
    failed: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        steps = [
            op
            for ops in (self.invoked, self.failed)
            for op in ops
            if op[VALUE].get("true_effect") == _UNKNOWN and op[VALUE].get("kind") == "tool"  # = _unknown(op)
        ]
        for span in ix.spans_of(steps):
            last_statement: Op | None = None
            failed: Op | None = None
            for op in span.records:
                name, type_ = op[OP], op[TYPE]
                if name == STORE:
                    if type_ is OpType.OK or type_ is OpType.FAIL:
                        last_statement = op
                elif name == EVENT:
                    if type_ is OpType.FAIL:
                        if _unknown(op):
                            failed = op
                    elif type_ is OpType.INVOKE:
                        statement, last_statement = last_statement, None  # only this step's boundary counts
                        if _unknown(op):
                            _judge_boundary(tally, op, statement)
                elif name in (PROVIDER, TOOL) and type_ is OpType.INVOKE and failed is not None:
                    tally.violate(
                        (failed.index, op.index),
                        f"the audit of unknown tool {failed.get('tool')!r} of run {op.run!r} failed at "
                        f"{failed.index}, yet its segment went on to a {op.op} call at {op.index}",
                        at=op.index,
                    )
                    failed = None
        return tally.finding("steps of unknown tools")


def _unknown(event: Op) -> bool:
    """An audit insert of a tool step whose name no loaded tool has (the world's ground truth)."""
    return bool(event.get("kind") == "tool" and event.get("true_effect") == _UNKNOWN)


def _judge_boundary(tally: Tally, event: Op, statement: Op | None) -> None:
    if statement is None:
        return
    number = str(statement.get("transition", "")).partition(" ")[0]
    if number == MARK_PENDING_EFFECT:
        tally.hold()
    elif number == RENEW_LEASE:
        tally.violate(
            (statement.index, event.index),
            f"step of unknown tool {event.get('tool')!r} of run {event.run!r} at {event.index} was renewed "
            f"as a read-only step (T4 at {statement.index}), not cleared as a {_STRICTEST}",
            at=event.index,
        )


# ---- fences -------------------------------------------------------------------------------------


@invariant(
    "fence_matches_inflight_write",
    Kind.ALWAYS,
    "a decider that reads a write fence sees a write stamped in the current attempt (ADR-122)",
)
class FenceMatchesInflightWrite(Machine):
    """Every write fence a store read returns was stamped (T5) after the run's latest claim.

    Most reads return no write fence (the reaper's scans return every row, mostly none); for each
    that does, the run's matched rows before it are read backwards for its latest claim and its
    latest stamp of that fence. A FindRun read carries one ``fence``; a scan ``fences``."""

    __slots__ = ("reads",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"reads": (READ, OpType.OK)}
    reads: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        fenced_reads: list[Op] = []
        write_effects = WRITE_EFFECTS
        for read in self.reads:
            value = read[VALUE]
            fence = value.get("fence", _ABSENT)
            if fence is _ABSENT:
                fences = value.get("fences")
                if fences and isinstance(fences, (list, tuple)) and not write_effects.isdisjoint(fences):
                    fenced_reads.append(read)
            elif fence in write_effects:
                fenced_reads.append(read)
        if not fenced_reads:
            return tally.finding("reads of a write fence")
        for read in fenced_reads:
            for run, fence in _fences(read):
                if fence in WRITE_EFFECTS:
                    claim, stamp = _claim_and_stamp(ix, run, fence, read[INDEX])
                    _judge_fence(tally, read, run, fence, claim, stamp)
        return tally.finding("reads of a write fence")


_ABSENT = object()


def _claim_and_stamp(ix: Index, run: str, fence: str, before: int) -> tuple[Op | None, Op | None]:
    """The run's latest claim (T1, T3, T10) and latest stamp (T5) of ``fence`` before history index
    ``before``, read backwards from there over the run's matched rows."""
    rows = ix.rows_by_run.get(run, ())
    numbers = ix.numbers
    claim: Op | None = None
    stamp: Op | None = None
    for i in range(bisect_left(rows, before, key=_by_index) - 1, -1, -1):
        op = rows[i]
        number = numbers[op[INDEX]]
        if number in CLAIMS:
            if claim is None:
                claim = op
                if stamp is not None:
                    break
        elif number == MARK_PENDING_EFFECT and stamp is None and row_of(op).get("pending_effect") == fence:
            stamp = op
            if claim is not None:
                break
    return claim, stamp


def _fences(read: Op) -> list[tuple[str, Any]]:
    if "fence" in read.value:
        return [(read.run, read.get("fence"))]
    runs, fences = read.get("result"), read.get("fences")
    if not isinstance(runs, (list, tuple)) or not isinstance(fences, (list, tuple)):
        return []
    return list(zip(runs, fences, strict=False))


def _judge_fence(tally: Tally, read: Op, run: str, fence: str, claim: Op | None, stamp: Op | None) -> None:
    if stamp is not None and (claim is None or claim.index <= stamp.index):
        tally.hold()
        return
    who = f"{read.get('what')} by {read.process} at {read.index}"
    if stamp is None:
        witness = (read.index,) if claim is None else (claim.index, read.index)
        tally.violate(witness, f"{who} read a {fence!r} fence of run {run!r} that no T5 ever stamped")
    elif claim is not None and claim.index > stamp.index:
        tally.violate(
            (stamp.index, claim.index, read.index),
            f"{who} read the {fence!r} fence of run {run!r} stamped at {stamp.index}, before the latest "
            f"claim at {claim.index}: a previous attempt's write",
        )


# ---- settles ------------------------------------------------------------------------------------


@invariant(
    "settles_by_owner",
    Kind.ALWAYS,
    "a running row is settled only by the segment that holds it, or by a path the spec marks unguarded",
)
class SettlesByOwner(Machine):
    """A RUNNING row is settled (T7/T8/T14) only by its claimant, a user's cancel, or a reaper
    dead-letter of a row whose lease was past in true time when it applied (the store's row just
    before it, not the reaper's staleness re-check); who issued it is the world's ``actor``.
    Judged once the pass is over, each settle (the index's rows of T7, T8, T14, in history order)
    against the run's row before it: a handler per settle cost more than reading them back."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        numbers = ix.numbers
        for op in merged(*[ix.rows_of(number) for number in _SETTLE_NUMBERS]):
            prior = ix.row_before(op[RUN], op[INDEX])
            if prior is None:
                tally.unknown((op.index,), f"settle of run {op.run!r} at {op.index} has no earlier row to judge")
                continue
            _judge_settle(tally, prior, op, numbers[op[INDEX]], ix.epoch_s)
        return tally.finding("settles")


def _judge_settle(tally: Tally, prior: Op, settle: Op, number: str, epoch_s: int) -> None:
    """``epoch_s`` puts the row's ``lease_expires`` (a clock reading) on the records' time axis."""
    row = row_of(prior)
    owner = row.get("claimed_by")
    identity = settle.get("identity")
    actor = settle.get("actor")
    if row.get("status") != "running" or not owner or owner == identity or (actor, number) in _UNRESTRICTED_SETTLES:
        tally.hold()
        return
    lease = row.get("lease_expires")
    leased = isinstance(lease, (int, float)) and lease > 0
    shown = lease - epoch_s if isinstance(lease, (int, float)) and leased else lease  # on the records' axis
    expired = isinstance(shown, (int, float)) and leased and shown < settle.time_s
    if actor == "reaper" and number == DEAD_LETTER_STALE and expired:
        tally.hold()
        return
    still = f" with its lease to {shown} (true time {settle.time_s:.2f})" if number == DEAD_LETTER_STALE else ""
    tally.violate(
        (prior.index, settle.index),
        f"{settle.get('transition')!r} by {identity!r} (a {actor or 'unrecorded'} process) at {settle.index} "
        f"settled run {settle.run!r}, running under {owner!r}{still} (row of {prior.index})",
    )


# ---- fail-soft audit ----------------------------------------------------------------------------


@invariant(
    "read_only_audit_fail_soft",
    Kind.ALWAYS,
    "an audit failure of a read-only or non-tool step never fails a run (ADR-111)",
)
class ReadOnlyAuditFailSoft(Machine):
    """After a failed audit of a read-only or non-tool step, the segment's next statement of the
    run does not end it: no FAILED settle, no dead-letter, no requeue.

    "Read-only" is the world's ``true_effect`` (the tool's definition), never the effect the
    runtime resolved. The next request of the same segment decides: a provider or tool call, a
    read, a dispatch or a statement leaving the row alive means the failure was absorbed. Steps
    of a round the workload scripts to stop in the pipeline (the ``plan`` record's ``stops``)
    and approval events (fail-closed by ADR-132) are not judged. Only segments with a failed
    audit of their run can hold a case: found among the failed audits the pass kept, and each
    walked alone at the end.
    """

    __slots__ = ("failed", "plans")
    STREAMS: ClassVar[Mapping[str, Key]] = {"failed": (EVENT, OpType.FAIL), "plans": (PLAN, OpType.OK)}
    failed: list[Op]
    plans: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        spans = ix.spans_of(self.failed)
        if not spans:
            return tally.finding("failed read-only audits")
        stops = {plan.run: frozenset(plan.get("stops") or ()) for plan in self.plans}
        for span in spans:
            pending: Op | None = None
            for op in span.records:
                name, type_ = op[OP], op[TYPE]
                if name == EVENT:
                    if type_ is OpType.FAIL:
                        if _is_soft(op, stops.get(op.run, frozenset())):
                            pending = op
                        continue
                    if type_ is not OpType.INVOKE:
                        continue
                elif name in (STORE, READ):
                    if type_ is not OpType.OK and type_ is not OpType.FAIL:
                        continue
                elif name not in _NEXT_REQUESTS or type_ is not OpType.INVOKE:
                    continue
                if pending is None:
                    continue
                failure, pending = pending, None
                if name != STORE:
                    tally.hold()
                    continue
                _judge_next_statement(tally, failure, op)
        return tally.finding("failed read-only audits")


_NEXT_REQUESTS = frozenset({PROVIDER, TOOL, DISPATCH})
"""Besides audits, statements and reads: the invokes that show a segment went on after a failed audit."""


def _is_soft(event: Op, stops: frozenset[int]) -> bool:
    if event.get("kind") in _FAIL_CLOSED_KINDS or event.get("round") in stops:
        return False
    return event.get("true_effect") not in WRITE_EFFECTS and event.get("true_effect") != _UNKNOWN


def _judge_next_statement(tally: Tally, failure: Op, invoke: Op) -> None:
    """``invoke`` is the completion of the segment's next statement (a store ok or fail)."""
    row: Mapping[str, Any] | None = None
    if invoke.type is OpType.OK and invoke.get("matched"):
        row = invoke.get("row")
    number = str(invoke.get("transition", "")).partition(" ")[0]
    if row is None:
        tally.hold()  # the statement failed or matched nothing: another cause decides the run
        return
    ended = row.get("status") == "failed" or number in REQUEUES
    if not ended:
        tally.hold()
        return
    effect = failure.get("true_effect") or f"a non-tool {failure.get('kind')!r} step"
    tally.violate(
        (failure.index, invoke.index),
        f"the audit of {effect!r} of run {invoke.run!r} failed at {failure.index} and the segment's next "
        f"statement {invoke.get('transition')!r} at {invoke.index} left the run {row.get('status')!r} "
        f"(reason {row.get('termination_reason')!r})",
        at=invoke.index,
    )


__all__ = ["FenceMatchesInflightWrite", "ReadOnlyAuditFailSoft", "SettlesByOwner", "UnknownNameIsStrictest"]
