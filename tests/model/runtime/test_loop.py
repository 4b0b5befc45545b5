"""The round loop (`ToolLoopService`): step order, scans, invoke, caps and truncation (spec 3.2, C2, C3).

Peer: ToolLoopServiceTest. Budget and context-window accounting are outside the run's
lifecycle; they are modelled by the scripted turn outcome they produce.
"""

from __future__ import annotations

from model.failures import ToolFailure
from model.records import Turn, TurnOutcome
from model.requests import CallProvider, InvokeTool
from model.transitions import MarkPendingEffect
from model.vocab import Outcome, RunStatus, TerminationReason


def test_tool_execute_throws_is_caught_as_generic_error(kit):
    """Peer: ToolLoopServiceTest::toolExecuteThrowsIsCaughtAsGenericError — an error tool step, the
    loop goes on to the next round."""
    kit.d.fail(kit.req(InvokeTool), ToolFailure())

    assert kit.interactive(kit.turn("search")) is Outcome.COMPLETED

    assert [e.step.is_error for e in kit.tool_events()] == [True]
    assert [r.round_no for r in kit.d.of(CallProvider)] == [1, 2]


def test_unknown_tool_yields_error_result_not_crash(kit):
    """Peer: ToolLoopServiceTest::unknownToolYieldsErrorResultNotCrash — invoke refuses it; nothing
    is executed and the run completes."""
    assert kit.interactive(kit.turn("no_such_tool", "search")) is Outcome.COMPLETED

    assert [(e.step.tool, e.step.is_error) for e in kit.tool_events()] == [("no_such_tool", True), ("search", False)]
    assert [r.call.name for r in kit.d.of(InvokeTool)] == ["search"]


def test_a_registered_tool_that_was_not_offered_yields_an_error_result(kit):
    """Spec 3.2 step 8: 'not offered ⇒ error result'; the pre-tool hook still fired for it (a write
    is stamped), and a not-offered gated call does not suspend the turn (the scan looks at offered
    calls only)."""
    outcome = kit.interactive(kit.turn("create_page_draft"), offered=("search",))

    assert outcome is Outcome.COMPLETED
    assert [(e.step.tool, e.step.is_error) for e in kit.tool_events()] == [("create_page_draft", True)]
    assert [t.effect for t in kit.updates(MarkPendingEffect)] == ["non_idempotent_write", ""]
    assert kit.d.landings == []


def test_budget_exceeded_mid_loop_returns_partial_truncated(kit):
    """Peer: ToolLoopServiceTest::budgetExceededMidLoopReturnsPartialTruncated — round 1's steps
    stay, round 2 stops before the provider answers, the run settles COMPLETED budget_exhausted."""
    outcome = kit.interactive(kit.turn("search"), Turn(outcome=TurnOutcome.BUDGET_EXHAUSTED))

    assert outcome is Outcome.COMPLETED
    assert kit.kinds() == ["dropped", "request", "llm", "tool", "request"]
    assert kit.row().termination_reason is TerminationReason.BUDGET_EXHAUSTED


def test_cap_hit_synthesises_final_answer_and_marks_truncated(kit):
    """Peer: ToolLoopServiceTest::capHitSynthesisesFinalAnswerAndMarksTruncated — after the cap a
    synthesis round (request, plain completion, llm) ends the loop with max_iterations."""
    turns = [kit.turn("search", round_no=i) for i in (1, 2, 3)]

    kit.interactive(*turns, max_iterations=2)

    provider = kit.d.of(CallProvider)
    assert [(r.round_no, r.synthesis) for r in provider] == [(1, False), (2, False), (3, True)]
    assert provider[-1].turn == Turn()
    assert kit.kinds()[-2:] == ["request", "llm"]
    assert kit.row().termination_reason is TerminationReason.MAX_ITERATIONS


def test_the_rounds_context_accounting_is_traced_ahead_of_its_request_step(kit):
    """Peer: ToolLoopServiceTest::theRoundsContextAccountingIsTracedAheadOfItsRequestStep."""
    kit.interactive(kit.turn("search"), context_manager=True)

    assert kit.kinds() == ["dropped", "context", "request", "llm", "tool", "context", "request", "llm"]


def test_a_context_overflow_is_recorded_after_its_context_step_and_stops_before_the_request(kit):
    """Spec 3.2 step 1: the context step is recorded even when the fit then throws; no request step
    and no provider call follow."""
    outcome = kit.interactive(Turn(outcome=TurnOutcome.CONTEXT_TRUNCATED), context_manager=True)

    assert outcome is Outcome.COMPLETED
    assert kit.kinds() == ["dropped", "context"]
    assert kit.d.of(CallProvider) == []


def test_default_max_iterations_is_five_when_no_cap_given(kit):
    """Peer: ToolLoopServiceTest::defaultMaxIterationsIsFiveWhenNoCapGiven."""
    turns = [kit.turn("search", round_no=i) for i in range(1, 10)]

    kit.interactive(*turns)

    assert sum(not r.synthesis for r in kit.d.of(CallProvider)) == 5
    assert len(kit.d.landings) == 5


def test_a_fresh_segment_records_a_dropped_step_before_round_one_but_a_resume_does_not(kit):
    """Spec C3: the `dropped` step precedes round 1 on a fresh segment, never on a resume."""
    kit.interactive(kit.turn("create_page_draft"))
    assert kit.kinds()[0] == "dropped"

    kit.approve()

    assert kit.kinds().count("dropped") == 1


def test_without_offered_tools_the_loop_makes_one_plain_completion(kit):
    """Spec C3: no tool offered ⇒ context, request, llm, return; the turn's calls are not executed."""
    outcome = kit.interactive(kit.turn("search"), offered=(), context_manager=True)

    assert outcome is Outcome.COMPLETED
    assert kit.kinds() == ["dropped", "context", "request", "llm"]
    assert kit.d.of(InvokeTool) == []
    assert kit.row().iterations == 1


def test_an_approval_gate_anywhere_in_the_turn_stops_every_call_of_it(kit):
    """Spec 3.2 step 6: the approval scan covers all calls before any executes."""
    assert kit.interactive(kit.turn("search", "lookup", "confirm")) is Outcome.AWAITING_APPROVAL
    assert kit.d.of(InvokeTool) == []


def test_an_input_request_suspends_for_input_after_the_approval_scan(kit):
    """Spec 3.2 step 7: no call needs approval, one needs input ⇒ AWAITING_INPUT, nothing runs."""
    assert kit.interactive(kit.turn("search", "ask_user")) is Outcome.AWAITING_INPUT

    assert kit.row().status is RunStatus.WAITING_FOR_INPUT
    assert kit.d.of(InvokeTool) == []


def test_an_approval_gate_outranks_an_input_request_in_the_same_turn(kit):
    """Spec 3.2 steps 6-7: the approval scan runs first."""
    assert kit.interactive(kit.turn("ask_user", "confirm")) is Outcome.AWAITING_APPROVAL
