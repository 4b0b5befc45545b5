"""``terminal_reason_names_cause``: every reason and error class a settle writes names a cause that
physically occurred in the segment that settled (spec 3.1, 3.2, 3.5, 3.6, 5.1 3e, 5.2, C2, T2).

For each settle that matched and left the row COMPLETED or FAILED (T7, and the reaper's T14), the
settling segment is the call of the process that issued it; its records of the run before the
settle are the evidence:

- COMPLETED ``completed``: its last provider call was an ordinary one and returned, and the script
  stops at no round it reached; ``max_iterations``: its last provider call was the synthesis round
  and returned; ``budget_exhausted`` / ``context_truncated``: the script (the ``plan`` record's
  ``stop_kinds``) stops through that stage at a round it reached. No error class.
- FAILED ``policy_denied`` / ``approval_denied``: the script stops through a guardrail denial /
  approval requirement at a round it reached. No error class.
- FAILED with an error class (``provider_failed`` and the recovery's dead-letters): the class names a
  failure of the segment before the settle: a provider failure of exactly that class; an audit insert
  of a write step (true effect) that failed (AuditPersistenceFailedException); a dispatch that threw
  (TransportException); a read that failed (RunPositionException); a suspend or release (T9) that
  failed or matched nothing (SuspendFailedException, ReleaseFailedException); a budget stop (C2,
  BudgetExceededException); a statement, read or insert that failed (DBALException); a segment with
  no lease (WriteWithoutDurableExecutionException). Rehydration and suspended-state failures depend
  on stored payloads the history does not show: accepted from run_queued / resume segments.
- The reaper's T14 writes no error class and a dead-letter reason (which one is
  ``dead_letter_reason_matches_cause``'s to judge).

A reason or class outside these is one the spec does not give. A checker fed by the single pass (a
machine judging once it is over); history only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import ClassVar

from checks.fused import Key, Machine
from checks.history import DISPATCH, EVENT, INDEX, OP, PLAN, PROVIDER, READ, RUN, STORE, TYPE, VALUE, Op, OpType
from checks.index import TERMINAL_STATUSES, WRITE_EFFECTS, Index, merged, row_of
from checks.judgement import OUTCOME_ORACLE, Finding, Tally, invariant
from checks.own import UNKNOWN_EFFECT, matched, number, records_in
from checks.verdict import Kind
from model.statements import DEAD_LETTER_STALE, FINISH_RUN, SUSPEND_RUN

_POLICY_KINDS = {"policy_denied": "guardrail_denied", "approval_denied": "guardrail_approval"}
_TRUNCATION_KINDS = {"budget_exhausted": "budget_exhausted", "context_truncated": "context_truncated"}
_DEAD_LETTER = frozenset({"not_retryable", "retries_exhausted"})
_SUSPEND_FAILURES = frozenset({"SuspendFailedException", "ReleaseFailedException"})
_PAYLOAD_CAUSES = {"RunRehydrationException": frozenset({"run_queued"}),
                   "SuspendedStateException": frozenset({"approve", "submit_input"})}  # fmt: skip


@invariant(
    "terminal_reason_names_cause",
    Kind.ALWAYS,
    "every reason and error class a settle writes names a cause the settling segment really met",
    tags=(OUTCOME_ORACLE,),
)
class TerminalReasonNamesCause(Machine):
    """Every COMPLETED or FAILED settle's reason and error class name a cause its segment met: the
    settles among the index's rows, each judged once the pass is over against the records its
    segment made before it and the plans the pass kept."""

    __slots__ = ("plans",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"plans": (PLAN, OpType.OK)}
    plans: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        plans: dict[str, dict[int, str]] | None = None
        for settle in merged(ix.rows_of(FINISH_RUN), ix.rows_of(DEAD_LETTER_STALE)):
            row = row_of(settle)
            if row.get("status") not in TERMINAL_STATUSES or row.get("status") == "cancelled":
                continue
            span = ix.span_at(settle)
            if span is None:
                continue
            if number(settle) == DEAD_LETTER_STALE:  # judged on the row alone: not on what the tick did before it
                why = _reaper_reason(row)
            else:
                if plans is None:
                    plans = _stop_kinds(self.plans)
                if settle[RUN] == span.run:
                    before = span.records_before(settle)
                else:
                    before = [op for op in records_in(ix, span, settle[RUN]) if op[INDEX] < settle[INDEX]]
                why = _unnamed(settle, row, before, plans.get(settle[RUN], {}), span.entry)
            if why is None:
                tally.hold()
                continue
            witness, words = why
            tally.violate(
                (*witness, settle[INDEX]),
                f"{settle.value.get('transition')!r} at {settle.index} left run {settle.run!r} "
                f"{row.get('status')!r} with reason {row.get('termination_reason')!r} and error class "
                f"{row.get('error_class')!r}, but {words}",
                at=settle[INDEX],
            )
        return tally.finding("settle reasons")


def _stop_kinds(plans: Sequence[Op]) -> dict[str, dict[int, str]]:
    found: dict[str, dict[int, str]] = {}
    for plan in plans:
        rounds, kinds = plan[VALUE].get("stops") or (), plan[VALUE].get("stop_kinds") or ()
        found[plan[RUN]] = dict(zip(rounds, kinds, strict=False))
    return found


def _reaper_reason(row: Mapping[str, object]) -> tuple[tuple[int, ...], str] | None:
    """Why a reaper's dead-letter (T14) names no cause it may give, else None."""
    if row.get("termination_reason") in _DEAD_LETTER and not str(row.get("error_class") or ""):
        return None
    return (), "a reaper's dead-letter writes a dead-letter reason and no error class"


def _unnamed(
    settle: Op, row: Mapping[str, object], before: Sequence[Op], stops: Mapping[int, str], entry: str
) -> tuple[tuple[int, ...], str] | None:
    """Why a segment's settle's reason or class names no cause the segment met (witness, words), else None."""
    reason, error = row.get("termination_reason"), str(row.get("error_class") or "")
    # the rounds reached matter only against the run's scripted stops: most runs script none
    reached = _rounds_reached(before) if stops else _NOTHING_REACHED
    if row.get("status") == "completed":
        return _completion_cause(reason, error, before, stops, reached)
    if reason in _POLICY_KINDS:
        kind = _POLICY_KINDS[str(reason)]
        if not error and _stops_at(stops, reached, kind):
            return None
        rounds = sorted(map(str, reached if stops else _rounds_reached(before)))
        return (), f"the script stops through {kind} at no round the segment reached ({rounds})"
    if reason not in (*_DEAD_LETTER, "provider_failed"):
        return (), "a FAILED settle gives no such reason"
    cause = _failure_named(str(error), before, stops, reached, entry)
    return None if cause else ((), f"no failure of the settling {entry} segment before it is a {error!r}")


def _rounds_reached(before: Sequence[Op]) -> set[object]:
    """The rounds whose step the segment began (its audit inserts' ``round``)."""
    return {op[VALUE].get("round") for op in before if op[OP] == EVENT and op[TYPE] is OpType.INVOKE}


_NOTHING_REACHED: AbstractSet[object] = frozenset()


def _completion_cause(
    reason: object, error: str, before: Sequence[Op], stops: Mapping[int, str], reached: AbstractSet[object]
) -> tuple[tuple[int, ...], str] | None:
    if error:
        return (), "a COMPLETED settle writes no error class"
    if reason in _TRUNCATION_KINDS:
        kind = _TRUNCATION_KINDS[str(reason)]
        if _stops_at(stops, reached, kind):
            return None
        return (), f"the script stops through {kind} at no round the segment reached"
    last: Op | None = None
    at = len(before) - 1
    while at >= 0:  # the last provider call is near the settle: read backwards to it
        op = before[at]
        if op[OP] == PROVIDER and op[TYPE] is OpType.INVOKE:
            last = op
            break
        at -= 1
    if last is None:
        return (), "the segment made no provider call"
    returned = any(op[OP] == PROVIDER and op[TYPE] is OpType.OK for op in before[at + 1 :])
    synthesis = bool(last[VALUE].get("synthesis"))
    if reason == "max_iterations" and synthesis and returned:
        return None
    stopped = [r for r in reached if r in stops]
    if reason == "completed" and not synthesis and returned and not stopped:
        return None
    return (last[INDEX],), (
        f"its last provider call (at {last.index}, synthesis {synthesis}) "
        f"{'returned' if returned else 'did not return'}"
        + (f" and the script stops at round {stopped[0]}" if stopped else "")
    )


def _failure_named(
    error: str, before: Sequence[Op], stops: Mapping[int, str], reached: AbstractSet[object], entry: str
) -> bool:
    """Whether the segment met a failure of the class ``error`` before the settle (read backwards: the
    failure that led to the settle is most often just before it)."""
    for op in reversed(before):
        name, type_ = op[OP], op[TYPE]
        if type_ is OpType.FAIL:
            if name == PROVIDER and op[VALUE].get("error") == error:
                return True
            if name == EVENT and error == "AuditPersistenceFailedException" and _write_step(op):
                return True
            if name == DISPATCH and error == "TransportException":
                return True
            if name == READ and error == "RunPositionException":
                return True
            if name in (STORE, READ, EVENT) and error == "DBALException":
                return True
        refused = type_ is OpType.FAIL or (type_ is OpType.OK and not matched(op))
        if name == STORE and refused and error in _SUSPEND_FAILURES and number(op) == SUSPEND_RUN:
            return True
    if error == "BudgetExceededException":
        return _stops_at(stops, reached, "budget_exhausted")
    if error == "WriteWithoutDurableExecutionException":
        claims = [op for op in before if op[OP] == STORE and matched(op)]
        return bool(claims) and not row_of(claims[0]).get("claimed_by")
    return entry in _PAYLOAD_CAUSES.get(error, frozenset())


def _stops_at(stops: Mapping[int, str], reached: AbstractSet[object], kind: str) -> bool:
    """Whether the script stops through ``kind`` at one of the rounds the segment reached."""
    return any(isinstance(r, int) and stops.get(r) == kind for r in reached)


def _write_step(event: Op) -> bool:
    return event[VALUE].get("kind") == "tool" and event[VALUE].get("true_effect") in (*WRITE_EFFECTS, UNKNOWN_EFFECT)


__all__ = ["TerminalReasonNamesCause"]
