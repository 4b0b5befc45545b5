"""Pre-port references, frozen as they were at 9e85049: the ten machines that judged per tool invoke,
per settle or requeue row, or per landing with a handler (what the pass knew then), compared by
test_ported_checkers.py with the versions that judge once the pass is over. Fed alone by the current
pass; not used by the judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from checks.audit import _APPROVAL_KIND, _APPROVE_ENTRY, _AUDITABLE_FAILURES, _judge_approved_write
from checks.coverage import _REAP_NUMBERS
from checks.fencing import _lease_problems
from checks.fused import ROW, Key, Machine
from checks.ground import _SETTLE_NUMBERS, _judge_settle
from checks.history import CRASH, EVENT, LANDING, PLAN, PROVIDER, TOOL, Op, OpType
from checks.index import NON_IDEMPOTENT_WRITE, WRITE_EFFECTS, Index, Span, row_of
from checks.judgement import Finding, Tally
from checks.lifecycle import _REQUEUE_NUMBERS
from checks.rows import _is_dead_letter, _judge_dead_letter
from checks.writes import _blocks_retries, _judge_retry
from model.constants import MAX_REQUEUES
from model.statements import DEAD_LETTER_STALE, FINISH_RUN

_INVOKE, _OK = OpType.INVOKE, OpType.OK


class _Probe(Machine):
    """The coverage probes' base as it was: ``reached`` once a handler saw the property."""

    __slots__ = ("reached",)

    def __init__(self) -> None:
        self.reached = False

    def finish(self, ix: Index) -> bool:
        return self.reached


class WritesFencedUnderLease(Machine):
    """At every write invoke the run's current row is RUNNING, ours, leased and fenced with its effect.
    Judged at each write invoke against the run's latest matched row (what the pass knows then)."""

    __slots__ = ("tally",)

    def __init__(self) -> None:
        self.tally = Tally()

    HANDLERS: ClassVar[Mapping[Key, str]] = {(TOOL, OpType.INVOKE): "on_invoke"}

    def on_invoke(self, op: Op) -> None:
        effect = op[6].get("true_effect")
        if effect not in WRITE_EFFECTS:
            return
        tally = self.tally
        store = self.live.row_before(op[4])
        if store is None:
            tally.violate((op.index,), f"write {op.get('tool')!r} at {op.index} ran with no persisted row")
            return
        problems = _lease_problems(row_of(store), op, effect, self.live.epoch_s)
        if not problems:
            tally.hold()
            return
        tally.violate(
            (store.index, op.index),
            f"write {op.get('tool')!r} of run {op.run!r} at {op.index} ran under the row of {store.index}: "
            + "; ".join(problems),
        )

    def finish(self, ix: Index) -> Finding:
        return self.tally.finding("write invokes")


class ApprovedWriteTurnRecorded(Machine):
    """On an approve segment, every write of the pending turn follows a stored approval event.

    The pending turn is what the segment executes before its first provider call; a later
    round's write is a new turn with its own gate (it suspends again, or needs no approval),
    so it is not judged here. A denial executes nothing of the turn, so any write executed
    in it stands on an approving decision, which must have been recorded (ADR-132).
    Fed the write invokes; for one on an approve segment, the segment's own records before it
    are read back (the turn is over at the first provider call).
    """

    __slots__ = ("tally",)

    def __init__(self) -> None:
        self.tally = Tally()

    HANDLERS: ClassVar[Mapping[Key, str]] = {(TOOL, _INVOKE): "on_tool"}

    def on_tool(self, invoke: Op) -> None:
        if invoke[6].get("true_effect") not in _AUDITABLE_FAILURES:
            return
        span = self.live.own_span(invoke)
        if span is None or span.entry != _APPROVE_ENTRY:
            return
        approval: Op | None = None
        for op in span.records_before(invoke):
            name, type_ = op[3], op[5]
            if name == PROVIDER:
                if type_ is _INVOKE:
                    return  # the turn is over
            elif name == EVENT and type_ is _OK and approval is None and op[6].get("kind") == _APPROVAL_KIND:
                approval = op
        _judge_approved_write(self.tally, span, invoke, approval)

    def finish(self, ix: Index) -> Finding:
        return self.tally.finding("writes of approved turns")


class BuiltinWriteApproved(Machine):
    """A builtin (non-remote) tool declaring a write executes only on an approve segment (ADR-134).

    ADR-134 couples writes to approval: such a call suspends its run before anything of the
    turn executes, so the only segment that can run it is the resume an approver started.
    Tool invokes that do not say whether the tool is remote are not judged.
    """

    __slots__ = ("tally",)

    def __init__(self) -> None:
        self.tally = Tally()

    HANDLERS: ClassVar[Mapping[Key, str]] = {(TOOL, _INVOKE): "on_tool"}

    def on_tool(self, op: Op) -> None:
        value = op[6]
        if value.get("remote", True) or value.get("true_effect") not in WRITE_EFFECTS:
            return
        span = self.live.span_of(op)
        if span is not None and span.entry == _APPROVE_ENTRY:
            self.tally.hold()
            return
        where = f"the {span.entry} segment of {span.invoke.index}" if span is not None else "no segment"
        self.tally.violate(
            (op.index,) if span is None else (span.invoke.index, op.index),
            f"builtin write {op.get('tool')!r} of run {op.run!r} executed at {op.index} on {where}, "
            "not on an approved resume",
        )

    def finish(self, ix: Index) -> Finding:
        return self.tally.finding("builtin writes")


class NoRetryAfterFailedWriteAudit(Machine):
    """After a non-idempotent call's audit failed, no invoke of that call executes (replays only).

    Fed the failed audits and the tool invokes; an invoke of a blocked call is judged at the end,
    when its completion and any landing are known."""

    __slots__ = ("blocked", "retries", "tally")

    def __init__(self) -> None:
        self.blocked: dict[tuple[str, Any], Op] = {}
        self.retries: list[tuple[Op, Op]] = []
        self.tally = Tally()

    HANDLERS: ClassVar[Mapping[Key, str]] = {
        (EVENT, OpType.FAIL): "on_failed_audit",
        (TOOL, OpType.INVOKE): "on_invoke",
    }

    def on_failed_audit(self, event: Op) -> None:
        key = (event[4], event[6].get("call"))
        if _blocks_retries(event) and key not in self.blocked:
            self.blocked[key] = event
            self.tally.hold()  # a case: a failed non-idempotent write audit (its later invokes are judged too)

    def on_invoke(self, op: Op) -> None:
        if self.blocked:
            failed = self.blocked.get((op[4], op[6].get("call")))
            if failed is not None:
                self.retries.append((failed, op))

    def finish(self, ix: Index) -> Finding:
        for failed_audit, invoke in self.retries:
            _judge_retry(self.tally, ix, failed_audit, invoke)
        return self.tally.finding("invokes after a failed write audit")


class LeaseExpiredMidWrite(_Probe):
    """The reaper requeued or dead-lettered a run while a write invoke of it had no completion."""

    __slots__ = ("writing",)

    def __init__(self) -> None:
        super().__init__()
        self.writing: dict[str, list[Op]] = {}

    HANDLERS: ClassVar[Mapping[Key, str]] = {
        (TOOL, OpType.INVOKE): "on_invoke",
        **{(ROW, number): "on_reap" for number in _REAP_NUMBERS},
    }

    def on_invoke(self, op: Op) -> None:
        if op[6].get("true_effect") in WRITE_EFFECTS:
            self.writing.setdefault(op[4], []).append(op)

    def on_reap(self, op: Op) -> None:
        writing = self.writing
        if op[4] in writing:
            completions = self.live.tool_completions
            still = [inv for inv in writing[op[4]] if inv[0] not in completions]
            if still:
                self.reached = True
            writing[op[4]] = still


class CrashAfterLanding(_Probe):
    """A process crashed after its tool call landed but before the call completed.

    The simulator records the tool's ``info {crashed}`` before the nemesis ``crash`` record, so an
    info completion counts as none."""

    __slots__ = ("invokes",)

    def __init__(self) -> None:
        super().__init__()
        self.invokes: dict[str, list[Op]] = {}

    HANDLERS: ClassVar[Mapping[Key, str]] = {
        (TOOL, OpType.INVOKE): "on_invoke",
        **{(CRASH, type_): "on_crash" for type_ in OpType},
    }

    def on_invoke(self, op: Op) -> None:
        self.invokes.setdefault(op[2], []).append(op)

    def on_crash(self, op: Op) -> None:
        process = op[6].get("process")
        if not isinstance(process, str):
            return
        completions, landing_of = self.live.tool_completions, self.live.landing_of
        unfinished = []
        for inv in self.invokes.get(process, ()):
            done = completions.get(inv[0])
            if done is None or done[5] is OpType.INFO:
                unfinished.append(inv)
        if any(inv[0] in landing_of for inv in unfinished):
            self.reached = True
        self.invokes[process] = unfinished


class SettlesByOwner(Machine):
    """A RUNNING row is settled (T7/T8/T14) only by its claimant, a user's cancel, or a reaper
    dead-letter of a row whose lease was past in true time when it applied (the store's row just
    before it, not the reaper's staleness re-check); who issued it is the world's ``actor``.
    Judged at each settle against the run's row before it."""

    __slots__ = ("tally",)

    def __init__(self) -> None:
        self.tally = Tally()

    HANDLERS: ClassVar[Mapping[Key, str]] = {(ROW, number): "on_settle" for number in _SETTLE_NUMBERS}

    def on_settle(self, op: Op) -> None:
        live = self.live
        prior = live.row_before(op[4])
        if prior is None:
            self.tally.unknown((op.index,), f"settle of run {op.run!r} at {op.index} has no earlier row to judge")
            return
        _judge_settle(self.tally, prior, op, live.number, live.epoch_s)

    def finish(self, ix: Index) -> Finding:
        return self.tally.finding("settles")


class RequeueBudgetRespected(Machine):
    """No requeue (T11/T13) leaves a row with requeue_count above MAX_REQUEUES: judged at each."""

    __slots__ = ("tally",)

    def __init__(self) -> None:
        self.tally = Tally()

    HANDLERS: ClassVar[Mapping[Key, str]] = {(ROW, number): "on_requeue" for number in _REQUEUE_NUMBERS}

    def on_requeue(self, op: Op) -> None:
        count = row_of(op).get("requeue_count")
        if isinstance(count, int) and count > MAX_REQUEUES:
            self.tally.violate(
                (op.index,),
                f"{op.get('transition')!r} at {op.index} requeued run {op.run!r} a {count}th time "
                f"(MAX_REQUEUES={MAX_REQUEUES})",
            )
        else:
            self.tally.hold()

    def finish(self, ix: Index) -> Finding:
        return self.tally.finding("requeues")


class NonIdempotentAtMostOnce(Machine):
    """Each logical non-idempotent call (run, call) lands at most once: judged at each landing."""

    __slots__ = ("first", "tally")

    def __init__(self) -> None:
        self.first: dict[tuple[str, Any], Op] = {}
        self.tally = Tally()

    HANDLERS: ClassVar[Mapping[Key, str]] = {(LANDING, OpType.OK): "on_landing"}

    def on_landing(self, landing: Op) -> None:
        if landing[6].get("effect") != NON_IDEMPOTENT_WRITE:
            return
        key = (landing[4], landing[6].get("call"))
        earlier = self.first.setdefault(key, landing)
        if earlier is landing:
            self.tally.hold()
            return
        self.tally.violate(
            (earlier.index, landing.index),
            f"non-idempotent call {key[1]!r} of run {landing.run!r} landed twice, "
            f"at {earlier.index} and {landing.index}",
        )

    def finish(self, ix: Index) -> Finding:
        return self.tally.finding("non-idempotent landings")


class DeadLetterReasonMatchesCause(Machine):
    """A dead-letter says ``not_retryable`` only for a cause that is not retryable (a failure whose
    true class is not retryable, a write fence whose stamped call truly is a non-idempotent write or an
    unknown name, a run with no stored request) and
    ``retries_exhausted`` only when the budget is spent or the retry could not be set up (the
    re-read or the wake-up failed).

    Reaper dead-letters (T14) are judged on the row as the store held it just before; recovery
    dead-letters (T7 on a worker segment) on the segment's last failure before it. A segment
    whose workload scripts a pipeline stop (``plan`` stops), or with no recorded failure, is not
    judged on the cause of a ``not_retryable``. The pass hands over each T7/T14 dead-letter with
    the row before it and its segment; they are judged at the end, once the plans are all known.
    """

    __slots__ = ("cases", "plans")
    STREAMS: ClassVar[Mapping[str, Key]] = {"plans": (PLAN, OpType.OK)}
    plans: list[Op]

    def __init__(self) -> None:
        self.cases: list[tuple[Op, Op, Span | None]] = []

    HANDLERS: ClassVar[Mapping[Key, str]] = {(ROW, FINISH_RUN): "on_settle", (ROW, DEAD_LETTER_STALE): "on_settle"}

    def on_settle(self, op: Op) -> None:
        live = self.live
        before = live.row_before(op[4])
        if before is not None and _is_dead_letter(live.number, op):
            self.cases.append((op, before, live.span_of(op)))

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        if self.cases:
            scripted = {plan.run for plan in self.plans if plan.get("stops")}
            for settle, before, span in self.cases:
                _judge_dead_letter(ix, tally, settle, before, span, settle.run in scripted)
        return tally.finding("dead-letters")
