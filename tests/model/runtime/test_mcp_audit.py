"""Remote (MCP) tools: fenced like any write, audited as tool steps (spec 3.4, 6, ADR-141).

Peer: McpRunAuditTest. A remote tool is ToolSpec(remote=True, NON_IDEMPOTENT_WRITE); its
server's requires_approval flag decides whether it suspends first. The MCP transport is
outside the run's lifecycle: an unreachable server is modelled as the tool throwing, a
tool-level error as an error result from a call that reached the server.
"""

from __future__ import annotations

from model.failures import StoreError, ToolFailure
from model.requests import InsertRun, InvokeTool
from model.transitions import MarkPendingEffect
from model.vocab import Outcome, RunStatus


def test_a_run_that_cannot_be_audited_never_reaches_the_server(kit):
    """Peer: McpRunAuditTest::aRunThatCannotBeAuditedNeverReachesTheServer — startRun throws ⇒
    WriteWithoutDurableExecution ⇒ FAILED, zero requests to the server."""
    kit.d.fail(kit.req(InsertRun), StoreError())

    assert kit.interactive(kit.turn("mcp_write")) is Outcome.FAILED
    assert kit.d.of(InvokeTool) == []


def test_an_executed_remote_call_becomes_a_tool_event_in_the_runs_audit_stream(kit):
    """Peer: McpRunAuditTest::anExecutedRemoteCallBecomesAToolEventInTheRunsAuditStream."""
    assert kit.interactive(kit.turn("mcp_write")) is Outcome.COMPLETED

    (tool,) = kit.tool_events()
    (landing,) = kit.d.landings
    assert (tool.step.tool, tool.step.call_id, tool.step.is_error) == ("mcp_write", "1.0", False)
    assert tool.step.execution == landing.execution


def test_an_unreachable_server_is_audited_as_a_failed_step(kit):
    """Peer: McpRunAuditTest::anUnreachableServerIsAuditedAsAFailedStep — COMPLETED, tool step isError."""
    kit.d.fail(kit.req(InvokeTool), ToolFailure("server unreachable"))

    assert kit.interactive(kit.turn("mcp_write")) is Outcome.COMPLETED

    (tool,) = kit.tool_events()
    assert (tool.step.is_error, tool.step.execution) == (True, 0)
    assert kit.d.landings == []


def test_a_tool_level_error_from_a_working_server_is_audited_as_a_failed_step(kit):
    """Peer: McpRunAuditTest::aToolLevelErrorFromAWorkingServerIsAuditedAsAFailedStep."""
    kit.d.error_results.add("1.0")

    assert kit.interactive(kit.turn("mcp_write")) is Outcome.COMPLETED

    (tool,) = kit.tool_events()
    assert tool.step.is_error
    assert tool.step.execution == kit.d.landings[0].execution
    assert kit.row().status is RunStatus.COMPLETED


def test_a_remote_tool_whose_server_requires_approval_suspends_before_it_runs(kit):
    """Spec 6 (ADR-134): a remote tool suspends only when its server's requires_approval is set."""
    assert kit.interactive(kit.turn("mcp_gated")) is Outcome.AWAITING_APPROVAL
    assert kit.d.of(InvokeTool) == []


def test_a_remote_tool_without_the_approval_flag_runs_on_the_first_pass_fenced(kit):
    """Spec 6 + 3.4: without the flag it runs on the first pass, fenced non_idempotent_write under
    the segment's own lease."""
    kit.interactive(kit.turn("mcp_write"))

    assert [(t.effect, t.me) for t in kit.updates(MarkPendingEffect)] == [
        ("non_idempotent_write", kit.interactive_id),
        ("", kit.interactive_id),
    ]
