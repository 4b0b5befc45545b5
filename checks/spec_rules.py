"""Promises of the spec that a sweep of automatic mutants showed no invariant judged (a second batch).

Each states one rule of the spec, judged from what the world physically did (the failure the fault
plan injected, the plan of the run's workload, the rows the store held), never from the runtime's
labels:

- ``recovery_per_spec`` (spec 5.2 step 1: "c = classify(e). Not retryable ⇒
  settleDeadLettered(`not_retryable`, owner-guarded)"; spec 4's table; steps 2-3: the re-read, and
  -1 when it failed): on a worker segment, a provider failure whose true class is not retryable is
  resolved by a dead-letter ``not_retryable``, never by a requeue or a ``retries_exhausted``; a
  retryable one is requeued only after the recovery's re-read of the row was answered.
- ``rounds_per_spec`` (spec 3.2: "Per round i (1..max) ... No tool calls ⇒ return result (reason
  `completed`) ... After max rounds: synthesis round ..., reason `max_iterations`"; the pipeline's stops
  end the loop before the provider call; spec 1.3: the loop's default of 5 rounds, an explicit cap
  clamped to 20): every provider call of a run is of a round its workload's plan lets the loop reach,
  and a segment that settles COMPLETED after a provider answer settles with the reason and round count
  the plan calls for.

Pure checkers over the shared index of one history; they know only the history.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from operator import attrgetter
from typing import ClassVar

from checks.fused import Key, Machine
from checks.history import FAULT, INDEX, OP, PLAN, PROVIDER, READ, RUN, STORE, TYPE, VALUE, Op, OpType
from checks.index import Index, Span, row_of
from checks.judgement import ADR_PROMISE, Finding, Tally, invariant
from checks.own import spans_of_entries
from checks.verdict import Kind
from model.statements import FINISH_RUN, REQUEUE

SPEC_RETRYABLE = frozenset({"connection", "rateLimit", "serverError", "circuitOpen"})
"""Spec 4's table: the failure classes ``isRetryable`` accepts (written here, not imported from the runtime)."""
SPEC_CLASSES = SPEC_RETRYABLE | frozenset({"auth", "configuration", "clientError", "unknown"})
_WORKER_ENTRY = "run_queued"
_RESOLVES = frozenset({FINISH_RUN, REQUEUE})
SPEC_DEFAULT_ROUNDS = 5
"""Spec 1.3: ``ToolLoopService``'s default max iterations."""
SPEC_ROUND_CEILING = 20
"""Spec 1.3: ``MAX_ITERATIONS``, the ceiling on an explicit cap."""
_TRUNCATING_STOPS = {"budget_exhausted": "budget_exhausted", "context_truncated": "context_truncated"}
"""Spec 3.2: a pipeline stop that returns a truncated result (settled COMPLETED) -> its reason."""


@invariant(
    "recovery_per_spec",
    Kind.ALWAYS,
    "on a worker segment a provider failure of a class that is not retryable is dead-lettered not_retryable, and "
    "a retryable one is requeued only after the recovery's re-read of the row was answered (spec 5.2, spec 4)",
    tags=(ADR_PROMISE,),
)
class RecoveryPerSpec(Machine):
    """A worker segment's provider failure with a true class (the fault plan's, spec 4) is resolved by the
    segment's next matched T7 or T11 under its own identity. For a class that is not retryable that must
    be a T7 ``failed`` / ``not_retryable`` (spec 5.2 step 1): a requeue, a ``retries_exhausted`` or any
    other settle is a violation. For a retryable class a requeue must come after a FindRun of the row
    that the store answered since the failure (steps 2-3: "count = row.requeue_count, or -1 if the read
    failed. count < 0 ... ⇒ settleDeadLettered(`retries_exhausted`)"). A segment that never resolves its
    failure (its settle refused, lease lost, crashed) is not judged here (``lease_lost_means_lost`` and
    ``segment_outcome_true`` judge what it reports). Fed the provider failures; the worker segments that
    had one are walked at the end."""

    __slots__ = ("spans",)

    def __init__(self) -> None:
        self.spans: dict[int, Span] = {}

    HANDLERS: ClassVar[Mapping[Key, str]] = {(PROVIDER, OpType.FAIL): "on_failure"}

    def on_failure(self, op: Op) -> None:
        if op.get("true_class") not in SPEC_CLASSES:
            return
        span = self.live.own_span(op)
        if span is not None and span.entry == _WORKER_ENTRY:
            self.spans[span.key] = span

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        numbers = ix.numbers
        for span in self.spans.values():
            failure: Op | None = None
            reread = False
            for op in span.records:
                name = op[OP]
                if name == PROVIDER:
                    if op[TYPE] is OpType.FAIL:
                        failure = op if op.get("true_class") in SPEC_CLASSES else None
                        reread = False
                    continue
                if failure is None:
                    continue
                if name == READ:
                    reread = reread or (op[TYPE] is OpType.OK and op[VALUE].get("what") == "FindRun")
                    continue
                if op.get("identity") != span.identity:
                    continue
                number = numbers.get(op[INDEX])
                if number not in _RESOLVES:
                    continue
                if failure.get("true_class") in SPEC_RETRYABLE:
                    _judge_retry(tally, failure, op, number, reread)
                else:
                    _judge(tally, failure, op, number)
                failure = None
        return tally.finding("provider failures on worker segments")


def _judge_retry(tally: Tally, failure: Op, store: Op, number: str, reread: bool) -> None:
    if number != REQUEUE or reread:
        tally.hold()  # a dead-letter's reason is dead_letter_reason_matches_cause's to judge
        return
    tally.violate(
        (failure.index, store.index),
        f"run {store.run!r} was requeued at {store.index} after its provider failure at {failure.index} with no "
        "answered re-read of the row in between: spec 5.2 step 3 dead-letters it retries_exhausted",
        at=store.index,
    )


def _judge(tally: Tally, failure: Op, store: Op, number: str) -> None:
    row = row_of(store)
    if number == FINISH_RUN and row.get("status") == "failed" and row.get("termination_reason") == "not_retryable":
        tally.hold()
        return
    what = "requeued" if number == REQUEUE else f"settled {row.get('status')!r} / {row.get('termination_reason')!r}"
    tally.violate(
        (failure.index, store.index),
        f"run {store.run!r} was {what} at {store.index} after a provider failure of class "
        f"{failure.get('true_class')!r} at {failure.index}, which is not retryable: spec 5.2 step 1 dead-letters "
        "it not_retryable",
        at=store.index,
    )


# ---- rounds ---------------------------------------------------------------------------------------


_by_index = attrgetter("index")


class _Plan:
    """What a run's workload lets its loop do (spec 3.2), from the world's ``plan`` record. The record
    states the scripted turns (``calls``: how many tool calls each asks for) and the offered tools the
    registry knows (``tools``) only for a run a cap or the pipeline ends; for any other run those
    rules are not judged (None)."""

    __slots__ = ("calls", "max_rounds", "stops", "tools")

    def __init__(self, plan: Op) -> None:
        cap = plan.get("cap")
        self.max_rounds = SPEC_DEFAULT_ROUNDS if cap is None else min(int(cap), SPEC_ROUND_CEILING)
        calls = plan.get("calls")
        self.calls: list[int] | None = None if calls is None else list(calls)
        self.stops: dict[int, str] = dict(zip(plan.get("stops") or (), plan.get("stop_kinds") or (), strict=False))
        tools = plan.get("tools")
        self.tools: int | None = None if tools is None else int(tools)

    def has_calls(self, round_no: int) -> bool | None:
        """Whether the scripted turn of ``round_no`` asks for tools (past the script the model answers
        with none); None when the plan does not say."""
        if self.calls is None:
            return None
        return 1 <= round_no <= len(self.calls) and self.calls[round_no - 1] > 0

    def why_not(self, round_no: int, synthesis: bool, deployed: bool) -> str | None:
        """Why the loop cannot call the provider for this round (None when it can, or cannot be told).
        ``deployed``: a deploy fault came first, which can leave a resume no offered tool (spec C2's
        plain completion, at the round after the suspended one, whatever the turns ask)."""
        last = self.max_rounds
        if synthesis:
            if round_no != last + 1:
                return f"a synthesis call is round {last + 1} (after {last} rounds), not {round_no}"
            if not deployed and (self.has_calls(last) is False or self.tools == 0):
                return f"round {last}'s turn asks for no tool, so the loop completed there"
            return None
        if round_no < 1 or round_no > last + deployed:
            return f"the loop's rounds are 1..{last}"
        if deployed:
            return None
        if round_no in self.stops:
            return f"the pipeline stops round {round_no} ({self.stops[round_no]}) before the provider call"
        if round_no - 1 in self.stops:
            return f"the pipeline stopped round {round_no - 1} ({self.stops[round_no - 1]})"
        if round_no > 1 and self.has_calls(round_no - 1) is False:
            return f"round {round_no - 1}'s turn asks for no tool, so the loop completed there"
        return None

    def expected(self, start: int) -> tuple[list[tuple[int, bool]], tuple[str, int] | None]:
        """The provider calls (round, synthesis) spec 3.2's loop makes from round ``start`` when nothing
        fails, and how it ends: (reason, iterations) of a COMPLETED settle, None when it does not complete
        (a guardrail stop; a budget denial without tools, spec C2). Only for a plan that states its turns."""
        last, stops = self.max_rounds, self.stops
        if self.tools == 0:  # spec C2: one plain completion; only context overflow is caught
            if start in stops:
                return [], (("context_truncated", start) if stops[start] == "context_truncated" else None)
            return [(start, False)], ("completed", start)
        calls: list[tuple[int, bool]] = []
        round_no = start
        while True:
            if round_no > last:
                calls.append((last + 1, True))
                return calls, ("max_iterations", last)
            if round_no in stops:
                reason = _TRUNCATING_STOPS.get(stops[round_no])
                return calls, (None if reason is None else (reason, round_no))
            calls.append((round_no, False))
            if not self.has_calls(round_no):
                return calls, ("completed", round_no)
            round_no += 1

    def ending(self, last: Op, synthesis_answered: bool) -> tuple[str, int] | None:
        """The reason and round count a COMPLETED settle must carry after the segment's last provider
        answer (``last``: its invoke), or None when the plan does not decide it."""
        if synthesis_answered:
            return "max_iterations", self.max_rounds
        round_no = int(last.get("round") or 0)
        asks = self.has_calls(round_no)
        if asks is None or self.tools == 0 or round_no in self.stops:
            return None
        if not asks:
            return "completed", round_no
        following = round_no + 1
        if following <= self.max_rounds and self.stops.get(following) in _TRUNCATING_STOPS:
            return _TRUNCATING_STOPS[self.stops[following]], following
        return None


@invariant(
    "rounds_per_spec",
    Kind.ALWAYS,
    "the loop calls the provider only for a round its plan reaches (1..5, or the cap up to 20, then one "
    "synthesis) and settles COMPLETED with the plan's reason and rounds (spec 3.2, 1.3)",
    tags=(ADR_PROMISE,),
)
class RoundsPerSpec(Machine):
    """Every provider call is of a round the run's plan lets the loop reach: 1..max (max = 5, or an
    explicit cap clamped to 20), never a round the pipeline stops or one after a turn that asked for no
    tool (the loop returned there), and a synthesis call only as round max + 1 after a turn that still
    asked for tools (after a ``deploy`` fault only the bounds are judged, with round max + 1 allowed).
    A segment that settles COMPLETED after its last provider answer settles with the reason and
    ``iterations`` the plan calls for: ``max_iterations`` and max after a synthesis; ``completed`` and r
    after round r's answer asked for no tool; the stop's reason and r + 1 when the pipeline truncates
    the next round; ``max_iterations`` never without a synthesis. The endings of segments invoked after
    a ``deploy`` fault (which can take every offered tool out of the registry: spec C2's no-tools
    branch) and runs with no plan are not judged."""

    __slots__ = ("calls", "faults", "plans")
    STREAMS: ClassVar[Mapping[str, Key]] = {
        "plans": (PLAN, OpType.OK),
        "calls": (PROVIDER, OpType.INVOKE),
        "faults": (FAULT, OpType.INFO),
    }
    plans: list[Op]
    calls: list[Op]
    faults: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        if not self.plans:
            return tally.finding("provider calls")
        plans: dict[str, _Plan] = {}
        stated = False
        for op in self.plans:
            value = op[VALUE]
            if "calls" in value or value.get("stops") or value.get("cap") is not None:
                plans[op[RUN]] = _Plan(op)
                stated = True
            else:  # a plain run (no cap, no stop): the loop's bounds are the defaults, shared
                plans[op[RUN]] = _BARE
        deployed = min((op.index for op in self.faults if op.get("family") == "deploy"), default=None)
        bare_last = SPEC_DEFAULT_ROUNDS
        for call in self.calls:
            plan = plans.get(call[RUN])
            if plan is None:
                continue
            value = call[VALUE]
            round_no, synthesis = value.get("round") or 0, value.get("synthesis")
            if plan is _BARE and (round_no == bare_last + 1 if synthesis else 1 <= round_no <= bare_last):
                tally.hold()  # the common case, without the general rule's calls
                continue
            after_deploy = deployed is not None and call.index > deployed
            why = plan.why_not(int(round_no), bool(synthesis), after_deploy)
            if why is None:
                tally.hold()
                continue
            kind = "synthesis call" if call.get("synthesis") else "provider call"
            tally.violate((call.index,), f"run {call.run!r} made a {kind} for round {call.get('round')} at "
                          f"{call.index}: {why}", at=call.index)  # fmt: skip
        for span in spans_of_entries(ix, _LOOP_ENTRIES) if stated else ():
            plan = plans.get(span.run)
            if plan is not None and plan.calls is not None and (deployed is None or span.key < deployed):
                _judge_sequence(tally, plan, span)
        for settle in ix.rows_of(FINISH_RUN):
            plan = plans.get(settle.run)
            row = row_of(settle)
            if plan is None or plan.calls is not None or row.get("status") != "completed":
                continue  # a plan that states its turns is judged segment by segment above
            settling = ix.span_at(settle)
            if settling is None or settling.run != settle.run or (deployed is not None and settling.key > deployed):
                continue
            _judge_ending(tally, plan, settling, settle, row)
        return tally.finding("provider calls and completions")


def _judge_ending(tally: Tally, plan: _Plan, span: Span, settle: Op, row: Mapping[str, object]) -> None:
    records = span.records
    at = bisect_left(records, settle[INDEX], key=_by_index)
    answer: Op | None = None
    last: Op | None = None
    for op in reversed(records[:at]):  # back from the settle to its segment's last provider call
        if op[OP] != PROVIDER:
            continue
        if op[TYPE] is OpType.INVOKE:
            last = op
            break
        if answer is None:
            answer = op
    if last is None or answer is None or answer[TYPE] is not OpType.OK:
        return
    synthesis = bool(last.get("synthesis"))
    expected = plan.ending(last, synthesis)
    if expected is None:
        if row.get("termination_reason") == "max_iterations":  # only a synthesis round ends so (spec 3.2)
            tally.violate((last.index, settle.index), f"run {settle.run!r} settled COMPLETED / 'max_iterations' at "
                          f"{settle.index}, but its segment's last provider answer (call at {last.index}) was of "
                          f"round {last.get('round')}, not a synthesis", at=settle.index)  # fmt: skip
        return
    reason, rounds = expected
    if row.get("termination_reason") == reason and row.get("iterations") == rounds:
        tally.hold()
        return
    tally.violate(
        (last.index, settle.index),
        f"run {settle.run!r} settled COMPLETED at {settle.index} with reason {row.get('termination_reason')!r} and "
        f"{row.get('iterations')} iterations after the answer to its provider call at {last.index} (round "
        f"{last.get('round')}); its plan calls for {reason!r} and {rounds}",
        at=settle.index,
    )


_LOOP_ENTRIES = frozenset({"run_queued", "run_interactive", "approve", "submit_input"})
_FRESH_ENTRIES = frozenset({"run_queued", "run_interactive"})
"""Spec 3.1, C1: a worker and an interactive run start the request from round 1; a resume continues."""


def _judge_sequence(tally: Tally, plan: _Plan, span: Span) -> None:
    """The segment's provider calls are a prefix of the plan's loop from its first round (1 for a fresh
    segment, the first call's for a resume); a COMPLETED settle of the segment comes after all of them,
    with the loop's reason and round count."""
    calls: list[Op] = []
    settle: Op | None = None
    for op in span.records:
        if op[OP] == PROVIDER and op[TYPE] is OpType.INVOKE:
            calls.append(op)
        elif (
            op[OP] == STORE
            and op[TYPE] is OpType.OK
            and str(op[VALUE].get("transition", "")).startswith(FINISH_RUN + " ")
        ):
            row = op[VALUE].get("row")
            if row is not None and row.get("status") == "completed":
                settle = op
                break
    if span.entry in _FRESH_ENTRIES:
        start = 1
    elif calls:
        first = calls[0]
        start = plan.max_rounds + 1 if first.get("synthesis") else int(first.get("round") or 0)
    else:
        return
    expected, end = plan.expected(start)
    for i, call in enumerate(calls):
        made = (int(call.get("round") or 0), bool(call.get("synthesis")))
        if i < len(expected) and made == expected[i]:
            continue
        then = "no further call" if i >= len(expected) else _call_words(expected[i])
        tally.violate((call.index,), f"the {span.entry} segment of run {span.run!r} made {_call_words(made)} at "
                      f"{call.index}; from round {start} its plan's loop makes {then}", at=call.index)  # fmt: skip
        return
    if settle is None:
        tally.hold()
        return
    row = settle[VALUE]["row"]
    if len(calls) < len(expected) or end is None:
        what = f"after {len(calls)} of its {len(expected)} calls" if end is not None else "where it ends otherwise"
        tally.violate((settle.index,), f"the {span.entry} segment of run {span.run!r} settled COMPLETED at "
                      f"{settle.index} {what} (spec 3.2)", at=settle.index)  # fmt: skip
        return
    reason, rounds = end
    judged_rounds = any(not synthesis for _, synthesis in expected)  # a resume straight to its synthesis
    if row.get("termination_reason") == reason and (not judged_rounds or row.get("iterations") == rounds):
        tally.hold()
        return
    tally.violate((settle.index,), f"the {span.entry} segment of run {span.run!r} settled COMPLETED at "
                  f"{settle.index} with reason {row.get('termination_reason')!r} and {row.get('iterations')} "
                  f"iterations; its plan's loop ends {reason!r} after round {rounds}", at=settle.index)  # fmt: skip


def _call_words(call: tuple[int, bool]) -> str:
    return f"a synthesis call (round {call[0]})" if call[1] else f"a call for round {call[0]}"


_BARE = _Plan(Op(0, 0.0, "", PLAN, "", OpType.OK, {}))
"""The plan of every run with no cap and no pipeline stop: the loop's default bounds."""


__all__ = ["SPEC_CLASSES", "SPEC_DEFAULT_ROUNDS", "SPEC_RETRYABLE", "SPEC_ROUND_CEILING"]
