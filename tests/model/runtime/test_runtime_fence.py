"""The write fence: the pre-tool hook's stamp and the tool boundary's clear (spec 3.3 step 4, 3.4, T5).

Peer: AgentRuntimeTest "Fence" bullets, plus the spec's rules for a refused stamp, a
throwing tool and a clear that does not persist (ADR-112/141).
"""

from __future__ import annotations

from model.failures import StoreError, ToolFailure
from model.requests import InsertRun, InvokeTool, Update
from model.transitions import FinishRun, MarkPendingEffect
from model.vocab import Outcome, RunStatus, StepKind, TerminationReason


def _fence_values(kit):
    return [t.effect for t in kit.updates(MarkPendingEffect)]


def _capture_row_at_invoke(kit):
    seen = []
    kit.d.before(kit.req(InvokeTool), lambda _r: seen.append(kit.row()), times=100)
    return seen


def test_a_write_is_fenced_before_it_runs_and_the_fence_is_cleared_when_it_completes(kit):
    """Peer: AgentRuntimeTest::aWriteIsFencedBeforeItRunsAndTheFenceIsClearedWhenItCompletes —
    stamps [non_idempotent_write, ''] around the tool call, under the worker's claim."""
    kit.enqueue(kit.turn("mcp_write"))
    at_invoke = _capture_row_at_invoke(kit)

    assert kit.run_queued() is Outcome.COMPLETED

    assert _fence_values(kit) == ["non_idempotent_write", ""]
    assert {t.me for t in kit.updates(MarkPendingEffect)} == {kit.worker}
    assert at_invoke[0].pending_effect == "non_idempotent_write"
    stamp, invoke, clear = kit.index(
        lambda r: (
            isinstance(r, InvokeTool | Update)
            and (isinstance(r, InvokeTool) or isinstance(r.transition, MarkPendingEffect))
        )
    )
    assert stamp < invoke < clear
    assert len(kit.d.landings) == 1


def test_an_interactive_write_is_fenced_exactly_like_a_queued_one(kit):
    """Peer: AgentRuntimeTest::anInteractiveWriteIsFencedExactlyLikeAQueuedOne."""
    at_invoke = _capture_row_at_invoke(kit)

    assert kit.interactive(kit.turn("mcp_write")) is Outcome.COMPLETED

    assert _fence_values(kit) == ["non_idempotent_write", ""]
    assert {t.me for t in kit.updates(MarkPendingEffect)} == {kit.interactive_id}
    assert at_invoke[0].pending_effect == "non_idempotent_write"
    assert at_invoke[0].claimed_by == kit.interactive_id


def test_a_read_only_tool_is_not_fenced(kit):
    """Peer: AgentRuntimeTest::aReadOnlyToolIsNotFenced — no T5 at all for a read-only call."""
    kit.enqueue(kit.turn("search", "lookup"))

    assert kit.run_queued() is Outcome.COMPLETED

    assert kit.updates(MarkPendingEffect) == []
    assert len(kit.d.landings) == 2


def test_a_write_on_an_unpersisted_run_is_refused_rather_than_run_unfenced(kit):
    """Peer: AgentRuntimeTest::aWriteOnAnUnpersistedRunIsRefusedRatherThanRunUnfenced — begin()
    fails, the pre-tool hook throws WriteWithoutDurableExecution ⇒ FAILED, no stamp, no write."""
    kit.d.fail(kit.req(InsertRun), StoreError())

    assert kit.interactive(kit.turn("mcp_write")) is Outcome.FAILED

    assert kit.d.landings == []
    assert kit.d.of(InvokeTool) == []
    assert kit.d.of(Update) == []


def test_a_read_only_tool_on_an_unpersisted_run_still_runs(kit):
    """Peer: AgentRuntimeTest::aReadOnlyToolOnAnUnpersistedRunStillRuns."""
    kit.d.fail(kit.req(InsertRun), StoreError())

    assert kit.interactive(kit.turn("search")) is Outcome.COMPLETED

    assert [landing.tool for landing in kit.d.landings] == ["search"]
    assert kit.d.db.find(kit.uuid) is None


def test_the_fence_stamp_renews_the_lease(kit):
    """Spec T5: the stamp sets lease_expires=now+900 as well as the fence."""
    kit.enqueue(kit.turn("mcp_write"))
    # the llm boundary renewed at 1000; the clock moves before the stamp reads it
    kit.d.before(kit.event(StepKind.LLM), lambda _r: setattr(kit.d, "now", 4_000))
    at_invoke = _capture_row_at_invoke(kit)

    kit.run_queued()

    assert at_invoke[0].lease_expires == 4_900


def test_a_refused_stamp_is_lease_lost_and_the_tool_never_runs(kit):
    """Spec 3.4 step 3: the stamp matches no row (another worker holds it) ⇒ RunLeaseLost before
    the side effect; no settle."""
    kit.enqueue(kit.turn("mcp_write"))
    kit.d.before(kit.update(MarkPendingEffect), lambda _r: kit.place(claimed_by=kit.worker_b))

    assert kit.run_queued() is Outcome.LEASE_LOST

    assert kit.d.landings == []
    assert kit.updates(FinishRun) == []
    assert kit.row().pending_effect == ""


def test_a_stamp_store_error_is_lease_lost_and_the_tool_never_runs(kit):
    """Spec T5 'Store error ⇒ false ⇒ lease lost', at the pre-tool hook."""
    kit.enqueue(kit.turn("mcp_write"))
    kit.d.fail(kit.update(MarkPendingEffect), StoreError())

    assert kit.run_queued() is Outcome.LEASE_LOST
    assert kit.d.landings == []


def test_a_throwing_write_tool_is_an_error_step_and_its_fence_is_still_cleared(kit):
    """Spec 3.6 'A tool throws': caught in invoke, recorded as an error tool step, fence cleared,
    loop continues, run COMPLETED (a partially applied write is an error step, not a failure)."""
    kit.enqueue(kit.turn("mcp_write"))
    kit.d.fail(kit.req(InvokeTool), ToolFailure("half applied", execution=77))

    assert kit.run_queued() is Outcome.COMPLETED

    (tool,) = kit.tool_events()
    assert tool.step.is_error and tool.step.execution == 77
    assert _fence_values(kit) == ["non_idempotent_write", ""]
    assert kit.row().status is RunStatus.COMPLETED


def test_a_completed_write_whose_clear_fails_is_lease_lost_and_later_refused_a_retry(kit):
    """Spec 3.6 + 7.2 (ADR-112 'not exactly-once'): the clear's store error is LEASE_LOST, the
    tool step is not persisted, the fence stands, and the reaper dead-letters not_retryable."""
    kit.enqueue(kit.turn("mcp_write"))
    kit.d.fail(kit.update(MarkPendingEffect, effect=""), StoreError())

    assert kit.run_queued() is Outcome.LEASE_LOST
    assert len(kit.d.landings) == 1
    assert kit.tool_events() == []
    assert kit.row().pending_effect == "non_idempotent_write"

    kit.expire()
    report = kit.reap()

    assert (report.requeued, report.dead_lettered) == (0, 1)
    assert kit.row().status is RunStatus.FAILED
    assert kit.row().termination_reason is TerminationReason.NOT_RETRYABLE
