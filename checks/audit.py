"""Invariants of the audit trail (ADR-104, ADR-111, ADR-132): writes are recorded, audit
failures are judged by the step's true effect, event sequences do not collide, and an
approved write turn runs only after its approval was recorded.

Pure checkers over the shared index of one history; they know only the history, never the
runtime or the world that produced it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from checks.fused import Key, Machine
from checks.history import EVENT, LANDING, OP, PROVIDER, RUN, TYPE, VALUE, Op, OpType
from checks.index import AUDIT_FAILED, WRITE_EFFECTS, Index, Span, merged, row_of
from checks.judgement import Finding, Tally, invariant
from checks.verdict import Kind

_TOOL_KIND = "tool"
_APPROVAL_KIND = "approval"
_APPROVE_ENTRY = "approve"
_AUDITABLE_FAILURES = WRITE_EFFECTS | {"unknown"}
_INVOKE, _OK, _FAIL = OpType.INVOKE, OpType.OK, OpType.FAIL


def _records_unaudited_write(row: Mapping[str, Any]) -> bool:
    """A final FAILED row that admits a write may be unaudited (audit failure or fenced dead-letter)."""
    if row.get("status") != "failed":
        return False
    if row.get("error_class") == AUDIT_FAILED:
        return True
    return row.get("termination_reason") == "not_retryable" and row.get("pending_effect") in WRITE_EFFECTS


@invariant(
    "every_write_accounted",
    Kind.ALWAYS,
    "every write execution that landed has its own tool event, or its run ended FAILED in a way that "
    "records that a write may be unaudited (audit failure, or dead-lettered while fenced) "
    '— "no write runs unrecorded"',
)
class EveryWriteAccounted(Machine):
    """Every landing has its run's tool event of the same execution, or a final row that admits it.
    Reads the stored events and the landings the pass kept; judged once the final rows are known."""

    __slots__ = ("events", "landings")
    STREAMS: ClassVar[Mapping[str, Key]] = {"events": (EVENT, _OK), "landings": (LANDING, _OK)}
    events: list[Op]
    landings: list[Op]

    def finish(self, ix: Index) -> Finding:
        # ``op.value.get`` rather than ``op.get`` in the loops over whole streams: one call less per record
        # op[RUN], op[VALUE] rather than .run, .value in the loops over whole streams: a field by name is a
        # descriptor call per record
        audited = {(e[RUN], e[VALUE].get("execution")) for e in self.events if e[VALUE].get("kind") == _TOOL_KIND}
        tally = Tally()
        for landing in self.landings:
            execution = landing.get("execution")
            if (landing.run, execution) in audited:
                tally.hold()
                continue
            final = ix.finals.get(landing.run)
            if final is None:
                why = f"execution {execution} of run {landing.run!r} landed with no tool event and no final row"
                tally.unknown((landing.index,), why)
            elif _records_unaudited_write(row_of(final)):
                tally.hold()
            else:
                tally.violate(
                    (landing.index, final.index),
                    f"execution {execution} of run {landing.run!r} landed, has no tool event, and the final row "
                    f"({_describe_final(row_of(final))}) does not record that a write may be unaudited",
                )
        return tally.finding("landings")


def _describe_final(row: Mapping[str, Any]) -> str:
    return (
        f"status={row.get('status')!r} reason={row.get('termination_reason')!r} "
        f"error_class={row.get('error_class')!r} pending_effect={row.get('pending_effect')!r}"
    )


def _is_failed_write_audit(op: Op, landed: frozenset[tuple[str, Any]]) -> bool:
    return (
        op.get("kind") == _TOOL_KIND
        and op.get("true_effect") in WRITE_EFFECTS
        and (op.run, op.get("execution")) in landed
    )


@invariant(
    "no_success_over_unrecorded_write",
    Kind.ALWAYS,
    "no run settles COMPLETED after one of its write executions failed its audit (ADR-111)",
)
class NoSuccessOverUnrecordedWrite(Machine):
    """No run reaches a COMPLETED row after a landed write execution of it failed its audit.

    Reads the failed audits the pass kept, interleaved with the index's rows; judged at the end,
    when every landing is known (a failed audit counts from where it stands in the history)."""

    __slots__ = ("failed",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"failed": (EVENT, _FAIL)}
    failed: list[Op]

    def finish(self, ix: Index) -> Finding:
        tainted: dict[str, Op] = {}
        tally = Tally()
        failed_audits = [op for op in self.failed if _is_failed_write_audit(op, ix.landed)]
        if not failed_audits:  # the common case: every completed row is a case that holds
            for op in ix.rows:
                row = op[VALUE].get("row")
                if (row if type(row) is dict else row_of(op)).get("status") == "completed":
                    tally.held += 1
            return tally.finding("completed rows")
        for op in merged(failed_audits, ix.rows):
            if op[OP] == EVENT:
                if op[RUN] not in tainted:
                    tainted[op[RUN]] = op
                    tally.hold()  # a case: a run with a landed write whose audit failed
                continue
            row = op[VALUE].get("row")
            if (row if type(row) is dict else row_of(op)).get("status") != "completed":
                continue
            failed_audit = tainted.get(op[RUN])
            if failed_audit is None:
                tally.hold()
                continue
            tally.violate(
                (failed_audit.index, op.index),
                f"run {op.run!r} settled completed at {op.index} after the audit of landed execution "
                f"{failed_audit.get('execution')} failed at {failed_audit.index}",
            )
        return tally.finding("completed rows")


@invariant(
    "unique_event_sequence",
    Kind.ALWAYS,
    "no two events of one run share a sequence number (ADR-104)",
)
class UniqueEventSequence(Machine):
    """No two stored events of one run share a sequence number: the stored events the pass kept."""

    __slots__ = ("events",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"events": (EVENT, _OK)}
    events: list[Op]

    def finish(self, ix: Index) -> Finding:
        first: dict[tuple[str, Any], Op] = {}
        tally = Tally()
        for event in self.events:
            key = (event[RUN], event[VALUE].get("seq"))
            earlier = first.setdefault(key, event)
            if earlier is event:
                tally.hold()
                continue
            tally.violate(
                (earlier.index, event.index),
                f"run {event.run!r} stored two events with sequence {key[1]} at {earlier.index} and {event.index}",
            )
        return tally.finding("stored events")


@invariant(
    "approved_write_turn_recorded",
    Kind.ALWAYS,
    "a write turn executes on a resume only after its approval decision was recorded (ADR-132)",
)
class ApprovedWriteTurnRecorded(Machine):
    """On an approve segment, every write of the pending turn follows a stored approval event.

    The pending turn is what the segment executes before its first provider call; a later
    round's write is a new turn with its own gate (it suspends again, or needs no approval),
    so it is not judged here. A denial executes nothing of the turn, so any write executed
    in it stands on an approving decision, which must have been recorded (ADR-132).
    Once the pass is over, for each write invoke (the index lists them) on an approve segment the
    segment's own records before it are read back (the turn is over at the first provider call).
    """

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for invoke in ix.tool_invokes:
            if invoke[VALUE].get("true_effect") in _AUDITABLE_FAILURES:
                _judge_approved_turn(tally, ix, invoke)
        return tally.finding("writes of approved turns")


def _judge_approved_turn(tally: Tally, ix: Index, invoke: Op) -> None:
    span = ix.span_at(invoke)
    if span is None or span.run != invoke[RUN] or span.entry != _APPROVE_ENTRY:
        return
    approval: Op | None = None
    for op in span.records_before(invoke):
        name, type_ = op[OP], op[TYPE]
        if name == PROVIDER:
            if type_ is _INVOKE:
                return  # the turn is over
        elif name == EVENT and type_ is _OK and approval is None and op[VALUE].get("kind") == _APPROVAL_KIND:
            approval = op
    _judge_approved_write(tally, span, invoke, approval)


def _judge_approved_write(tally: Tally, span: Span, invoke: Op, approval: Op | None) -> None:
    if approval is not None:
        tally.hold()
        return
    tally.violate(
        (span.invoke.index, invoke.index),
        f"write {invoke.get('tool')!r} ({invoke.get('true_effect')}) of run {invoke.run!r} executed at "
        f"{invoke.index} on the approve segment of {span.invoke.index} with no approval event stored before it",
        at=invoke.index,
    )


@invariant(
    "builtin_write_approved",
    Kind.ALWAYS,
    "a builtin tool that declares a write executes only on a resume an approver started (ADR-134)",
)
class BuiltinWriteApproved(Machine):
    """A builtin (non-remote) tool declaring a write executes only on an approve segment (ADR-134).

    ADR-134 couples writes to approval: such a call suspends its run before anything of the
    turn executes, so the only segment that can run it is the resume an approver started.
    Tool invokes that do not say whether the tool is remote are not judged. Judged once the pass is
    over, from the tool invokes the index lists and the segment each ran in.
    """

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for op in ix.tool_invokes:
            value = op[VALUE]
            if value.get("remote", True) or value.get("true_effect") not in WRITE_EFFECTS:
                continue
            span = ix.span_at(op)
            if span is not None and span.entry == _APPROVE_ENTRY:
                tally.hold()
                continue
            where = f"the {span.entry} segment of {span.invoke.index}" if span is not None else "no segment"
            tally.violate(
                (op.index,) if span is None else (span.invoke.index, op.index),
                f"builtin write {op.get('tool')!r} of run {op.run!r} executed at {op.index} on {where}, "
                "not on an approved resume",
            )
        return tally.finding("builtin writes")


__all__ = [
    "ApprovedWriteTurnRecorded",
    "BuiltinWriteApproved",
    "EveryWriteAccounted",
    "NoSuccessOverUnrecordedWrite",
    "UniqueEventSequence",
]
