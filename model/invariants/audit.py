"""Invariants of the audit trail (ADR-104, ADR-111, ADR-132): writes are recorded, audit
failures are judged by the step's true effect, event sequences do not collide, and an
approved write turn runs only after its approval was recorded.

Pure checkers over the shared index of one history; they know only the history, never the
runtime or the world that produced it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model.history import EVENT, LANDING, PROVIDER, TOOL, Op, OpType
from model.invariants.index import AUDIT_FAILED, WRITE_EFFECTS, Index, Span, merged, row_of
from model.invariants.judgement import Finding, Tally

_TOOL_KIND = "tool"
_APPROVAL_KIND = "approval"
_APPROVE_ENTRY = "approve"
_AUDITABLE_FAILURES = WRITE_EFFECTS | {"unknown"}
_INVOKE, _OK = OpType.INVOKE, OpType.OK


def _records_unaudited_write(row: Mapping[str, Any]) -> bool:
    """A final FAILED row that admits a write may be unaudited (audit failure or fenced dead-letter)."""
    if row.get("status") != "failed":
        return False
    if row.get("error_class") == AUDIT_FAILED:
        return True
    return row.get("termination_reason") == "not_retryable" and row.get("pending_effect") in WRITE_EFFECTS


def every_write_accounted(ix: Index) -> Finding:
    """Every landing has its run's tool event of the same execution, or a final row that admits it."""
    # ``op.value.get`` rather than ``op.get`` in the loops over whole buckets: one call less per record
    audited = {
        (e.run, e.value.get("execution")) for e in ix.of_type(EVENT, OpType.OK) if e.value.get("kind") == _TOOL_KIND
    }
    tally = Tally()
    for landing in ix.of_type(LANDING, OpType.OK):
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


def no_success_over_unrecorded_write(ix: Index) -> Finding:
    """No run reaches a COMPLETED row after a landed write execution of it failed its audit."""
    tainted: dict[str, Op] = {}
    tally = Tally()
    failed_audits = [op for op in ix.of_type(EVENT, OpType.FAIL) if _is_failed_write_audit(op, ix.landed)]
    for op in merged(failed_audits, ix.rows):
        if op.op == EVENT:
            if op.run not in tainted:
                tainted[op.run] = op
                tally.hold()  # a case: a run with a landed write whose audit failed
            continue
        row = op[6].get("row")
        if (row if type(row) is dict else row_of(op)).get("status") != "completed":
            continue
        failed_audit = tainted.get(op.run)
        if failed_audit is None:
            tally.hold()
            continue
        tally.violate(
            (failed_audit.index, op.index),
            f"run {op.run!r} settled completed at {op.index} after the audit of landed execution "
            f"{failed_audit.get('execution')} failed at {failed_audit.index}",
        )
    return tally.finding("completed rows")


def unique_event_sequence(ix: Index) -> Finding:
    """No two stored events of one run share a sequence number."""
    first: dict[tuple[str, Any], Op] = {}
    tally = Tally()
    for event in ix.of_type(EVENT, OpType.OK):
        key = (event.run, event.value.get("seq"))
        earlier = first.setdefault(key, event)
        if earlier is event:
            tally.hold()
            continue
        tally.violate(
            (earlier.index, event.index),
            f"run {event.run!r} stored two events with sequence {key[1]} at {earlier.index} and {event.index}",
        )
    return tally.finding("stored events")


def approved_write_turn_recorded(ix: Index) -> Finding:
    """On an approve segment, every write of the pending turn follows a stored approval event.

    The pending turn is what the segment executes before its first provider call; a later
    round's write is a new turn with its own gate (it suspends again, or needs no approval),
    so it is not judged here. A denial executes nothing of the turn, so any write executed
    in it stands on an approving decision, which must have been recorded (ADR-132).
    Walks each approve segment's own records (the index lists them) up to its first provider call.
    """
    tally = Tally()
    for span in ix.spans:
        if span.entry != _APPROVE_ENTRY:
            continue
        approval: Op | None = None
        for op in span.records:
            name, type_ = op[3], op[5]
            if name == PROVIDER:
                if type_ is _INVOKE:
                    break  # the turn is over
            elif name == EVENT:
                if type_ is _OK and approval is None and op.value.get("kind") == _APPROVAL_KIND:
                    approval = op
            elif name == TOOL and type_ is _INVOKE and op.value.get("true_effect") in _AUDITABLE_FAILURES:
                _judge_approved_write(tally, span, op, approval)
    return tally.finding("writes of approved turns")


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


def builtin_write_approved(ix: Index) -> Finding:
    """A builtin (non-remote) tool declaring a write executes only on an approve segment (ADR-134).

    ADR-134 couples writes to approval: such a call suspends its run before anything of the
    turn executes, so the only segment that can run it is the resume an approver started.
    Tool invokes that do not say whether the tool is remote are not judged.
    """
    tally = Tally()
    for op in ix.of_type(TOOL, OpType.INVOKE):
        if op.value.get("remote", True) or op.value.get("true_effect") not in WRITE_EFFECTS:
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
    "approved_write_turn_recorded",
    "builtin_write_approved",
    "every_write_accounted",
    "no_success_over_unrecorded_write",
    "unique_event_sequence",
]
