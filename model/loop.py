"""`ToolLoopService`: the round loop of spec 3.2, the resume of pending calls, and `invoke`.

Every recorded step fires the boundary hook; every call fires the pre-tool hook first.
The model's answers come from the scripted request; the provider call is a request the
world may delay or fail. Budget and guardrail middleware act on the scripted turn.
"""

from __future__ import annotations

from model.constants import LOOP_DEFAULT_MAX_ITERATIONS, clamp_iterations
from model.failures import (
    BudgetExceeded,
    ContextTruncated,
    GuardrailApprovalRequired,
    GuardrailViolation,
    ToolFailure,
)
from model.hooks import Segment, extend_for_operation, on_before_tool, on_record, tool_deadline_s
from model.records import RunRequest, Step, ToolCall, ToolResult, Turn, TurnOutcome
from model.requests import CallProvider, InvokeTool
from model.segment import (
    Gen,
    LoopResult,
    ResumeSeed,
    ToolApprovalRequired,
    ToolInputRequired,
    Trace,
    suspended_state,
)
from model.tools import requires_approval, requires_input
from model.vocab import StepKind, TerminationReason


def _record(seg: Segment, trace: Trace, step: Step) -> Gen[None]:
    trace.steps.append(step)
    yield from on_record(seg, step)


_NORMAL = TurnOutcome.NORMAL


def _pipeline(turn: Turn) -> None:
    """Budget and guardrail middleware: they stop a scripted turn before the provider answers."""
    outcome = turn.outcome
    if outcome is _NORMAL:  # the common case; the checks below are exclusive
        return
    if outcome is TurnOutcome.BUDGET_EXHAUSTED:
        raise BudgetExceeded("budget exhausted")
    if outcome is TurnOutcome.GUARDRAIL_DENIED:
        raise GuardrailViolation("guardrail denied")
    if outcome is TurnOutcome.GUARDRAIL_APPROVAL:
        raise GuardrailApprovalRequired("guardrail requires approval")
    if outcome is TurnOutcome.CONTEXT_TRUNCATED:
        raise ContextTruncated("context window exceeded")


def _completion(seg: Segment, trace: Trace, round_no: int, turn: Turn, synthesis: bool) -> Gen[None]:
    """context step (if wired), request step, provider call, llm step."""
    if seg.ctx.context_manager:
        yield from _record(seg, trace, Step(StepKind.CONTEXT, round_no))
        if turn.outcome is TurnOutcome.CONTEXT_TRUNCATED:  # the fit throws after its step (spec 3.2 step 1)
            raise ContextTruncated("context window exceeded")
    yield from _record(seg, trace, Step(StepKind.REQUEST, round_no))
    yield from extend_for_operation(seg, seg.ctx.provider_deadline_s)
    _pipeline(turn)
    tokens = yield CallProvider(seg.uuid, round_no, turn, synthesis)
    trace.tokens += int(tokens)
    yield from _record(seg, trace, Step(StepKind.LLM, round_no, tokens=int(tokens)))


def invoke(seg: Segment, request: RunRequest, call: ToolCall, effect_value: str) -> Gen[ToolResult]:
    """`ToolLoopService::invoke`: unknown / not offered ⇒ error result; a throw ⇒ error result."""
    spec = seg.ctx.registry.get(call.name)
    if spec is None or call.name not in request.offered:
        return ToolResult(is_error=True)
    if effect_value == "read_only" or not seg.policy.write_fence:
        yield from extend_for_operation(seg, tool_deadline_s(seg, call.name))
    key = f"{seg.uuid}/{call.call_id}" if seg.policy.idempotency_keys and spec.declared_effect.is_write else ""
    try:
        result: ToolResult = yield InvokeTool(seg.uuid, call, effect_value, key)
    except ToolFailure as failure:
        return ToolResult(execution=failure.execution, is_error=True)
    return result


def _execute_call(seg: Segment, trace: Trace, request: RunRequest, call: ToolCall, round_no: int) -> Gen[None]:
    effect = yield from on_before_tool(seg, call.name)
    result = yield from invoke(seg, request, call, effect.value)
    step = Step(StepKind.TOOL, round_no, call.name, call.call_id, result.is_error, result.execution)
    yield from _record(seg, trace, step)


def _refuse_call(seg: Segment, trace: Trace, call: ToolCall, round_no: int) -> Gen[None]:
    """A denied / no-longer-offered / input-less pending call: an error step, no pre-tool hook."""
    yield from _record(seg, trace, Step(StepKind.TOOL, round_no, call.name, call.call_id, True))


def _scan(seg: Segment, request: RunRequest, round_no: int, calls: tuple[ToolCall, ...]) -> None:
    """Approval, then input scan over the turn; only *offered* calls can gate it (spec 3.2 steps 6-7)."""
    registry, policy = seg.ctx.registry, seg.policy
    offered = [c for c in calls if c.name in request.offered]
    if any(requires_approval(registry.get(c.name), policy) for c in offered):
        raise ToolApprovalRequired(suspended_state(request, seg.uuid, round_no, calls))
    if any(requires_input(registry.get(c.name)) for c in offered):
        raise ToolInputRequired(suspended_state(request, seg.uuid, round_no, calls))


def run_loop(seg: Segment, trace: Trace, request: RunRequest, first_round: int) -> Gen[LoopResult]:
    """`runLoop`: rounds ``first_round``..max, then a synthesis round (max_iterations)."""
    if not any(seg.ctx.registry.get(name) is not None for name in request.offered):
        return (yield from _no_tools(seg, trace, request, first_round))
    cap = clamp_iterations(request.max_iterations)
    max_rounds = LOOP_DEFAULT_MAX_ITERATIONS if cap is None else cap
    for round_no in range(first_round, max_rounds + 1):
        trace.rounds = round_no
        turn = request.turn(round_no)
        try:
            yield from _completion(seg, trace, round_no, turn, synthesis=False)
        except BudgetExceeded:
            return LoopResult(TerminationReason.BUDGET_EXHAUSTED, truncated=True)
        except ContextTruncated:
            return LoopResult(TerminationReason.CONTEXT_TRUNCATED, truncated=True)
        if not turn.calls:
            return LoopResult(TerminationReason.COMPLETED)
        _scan(seg, request, round_no, turn.calls)
        for call in turn.calls:
            yield from _execute_call(seg, trace, request, call, round_no)
    try:
        yield from _completion(seg, trace, max_rounds + 1, Turn(), synthesis=True)
    except BudgetExceeded:
        return LoopResult(TerminationReason.BUDGET_EXHAUSTED, truncated=True)
    except ContextTruncated:
        return LoopResult(TerminationReason.CONTEXT_TRUNCATED, truncated=True)
    return LoopResult(TerminationReason.MAX_ITERATIONS, truncated=True)


def _no_tools(seg: Segment, trace: Trace, request: RunRequest, round_no: int) -> Gen[LoopResult]:
    """No tool offered: one plain completion. Only context overflow is caught (spec C2)."""
    trace.rounds = round_no
    try:
        yield from _completion(seg, trace, round_no, request.turn(round_no), synthesis=False)
    except ContextTruncated:
        return LoopResult(TerminationReason.CONTEXT_TRUNCATED, truncated=True)
    return LoopResult(TerminationReason.COMPLETED)


def start(seg: Segment, trace: Trace, request: RunRequest) -> Gen[LoopResult]:
    """A fresh segment: the `dropped` step before round 1 (spec C3), then the loop."""
    yield from _record(seg, trace, Step(StepKind.DROPPED, 0))
    return (yield from run_loop(seg, trace, request, 1))


def resume(seg: Segment, trace: Trace, seed: ResumeSeed) -> Gen[LoopResult]:
    """`resume` / `resumeWithInput`: settle the pending calls first, then continue the loop."""
    state = seed.state
    request = state.request
    registry, policy = seg.ctx.registry, seg.policy
    for call in state.pending:
        spec = registry.get(call.name)
        offered = spec is not None and call.name in request.offered
        if seed.for_input:
            runnable = offered and seed.input_valid and not requires_approval(spec, policy)
        else:
            runnable = offered and seed.approved
        if runnable:
            yield from _execute_call(seg, trace, request, call, state.round_no)
        else:
            yield from _refuse_call(seg, trace, call, state.round_no)
    return (yield from run_loop(seg, trace, request, state.round_no + 1))
