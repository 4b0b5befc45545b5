"""The ADR presets differ in behaviour exactly where their decisions say (spec 7.1, 7.3; policy presets).

Each test plays one scenario under two adjacent presets and shows the decision that
separates them: ADR-111 (typed effects, fail-closed write audit), ADR-112 (the fence),
ADR-122 (the fence cleared on requeue), ADR-141/134 (every segment leased, writes gated).
"""

from __future__ import annotations

from model.failures import StoreError
from model.policy import preset
from model.requests import CallProvider, InvokeTool
from model.transitions import MarkPendingEffect
from model.vocab import Outcome, RunStatus, StepKind, TerminationReason


def _queued_write_with_failed_audit(new_kit, name):
    kit = new_kit(preset(name))
    kit.enqueue(kit.turn("create_page_draft"))  # before ADR-134 a builtin write runs on the first pass
    kit.d.fail(kit.event(StepKind.TOOL), StoreError())
    return kit.run_queued(), kit.row().termination_reason, len(kit.d.landings)


def test_under_adr_104_a_writes_failed_audit_does_not_fail_the_run(new_kit):
    """adr-104: no effect classes, every tool is read_only, so the audit is fail-soft."""
    assert _queued_write_with_failed_audit(new_kit, "adr-104") == (Outcome.COMPLETED, TerminationReason.COMPLETED, 1)


def test_under_adr_111_a_writes_failed_audit_fails_the_run_and_is_not_retried(new_kit):
    """adr-111: the write's failed audit fails the run; AuditPersistenceFailed is never retried."""
    assert _queued_write_with_failed_audit(new_kit, "adr-111") == (Outcome.FAILED, TerminationReason.NOT_RETRYABLE, 1)


def _fence_of_a_queued_write(new_kit, name):
    kit = new_kit(preset(name))
    kit.enqueue(kit.turn("mcp_write"))
    kit.run_queued()
    return [t.effect for t in kit.updates(MarkPendingEffect)]


def test_under_adr_111_no_fence_is_stamped(new_kit):
    """adr-111: effects are typed but there is no write fence yet."""
    assert _fence_of_a_queued_write(new_kit, "adr-111") == []


def test_under_adr_112_a_write_is_fenced(new_kit):
    """adr-112: the pre-tool hook stamps the fence and the tool boundary clears it."""
    assert _fence_of_a_queued_write(new_kit, "adr-112") == ["non_idempotent_write", ""]


def _fence_after_a_reap_mid_idempotent_write(new_kit, name):
    kit = new_kit(preset(name))
    kit.enqueue(kit.turn("update_page_metadata"))  # runs on the first pass before ADR-134
    kit.pause(kit.queued_gen(), kit.req(InvokeTool))
    kit.expire()
    assert kit.reap().requeued == 1
    return kit.row().status, kit.row().pending_effect


def test_under_adr_112_a_requeued_row_keeps_its_fence(new_kit):
    """adr-112 carries KB-9: the reaper's requeue leaves pending_effect standing."""
    assert _fence_after_a_reap_mid_idempotent_write(new_kit, "adr-112") == (RunStatus.QUEUED, "idempotent_write")


def test_under_adr_122_a_requeued_row_does_not_keep_its_fence(new_kit):
    """adr-122: the requeue clears pending_effect; the next attempt starts unfenced."""
    assert _fence_after_a_reap_mid_idempotent_write(new_kit, "adr-122") == (RunStatus.QUEUED, "")


def _interactive_write(new_kit, name):
    kit = new_kit(preset(name))
    at_write = []
    kit.d.before(kit.req(InvokeTool), lambda _r: at_write.append(kit.row()))
    outcome = kit.interactive(kit.turn("mcp_write"))
    row = at_write[0]
    return outcome, row.claimed_by, row.lease_expires, row.pending_effect


def test_under_adr_122_an_interactive_write_runs_unfenced_and_unleased(new_kit):
    """adr-122 carries KB-10: an interactive segment holds no lease and its write runs unfenced."""
    assert _interactive_write(new_kit, "adr-122") == (Outcome.COMPLETED, "", 0, "")


def test_under_head_an_interactive_write_is_fenced_and_leased(new_kit):
    """head (ADR-141): the interactive segment holds its own lease and fences the write."""
    assert _interactive_write(new_kit, "head") == (Outcome.COMPLETED, "interactive:h:1", 1_900, "non_idempotent_write")


def _builtin_write_first_pass(new_kit, name):
    kit = new_kit(preset(name))
    return kit.interactive(kit.turn("create_page_draft")), len(kit.d.landings)


def test_under_adr_122_a_builtin_write_runs_on_the_first_pass(new_kit):
    """adr-122: no ADR-134 approval coupling; the model's write call runs immediately."""
    assert _builtin_write_first_pass(new_kit, "adr-122") == (Outcome.COMPLETED, 1)


def test_under_head_a_builtin_write_suspends_for_approval_before_it_runs(new_kit):
    """head (ADR-134): a non-remote tool declaring a write suspends for approval first."""
    assert _builtin_write_first_pass(new_kit, "head") == (Outcome.AWAITING_APPROVAL, 0)


def _abandoned_interactive_run(new_kit, name):
    kit = new_kit(preset(name))
    kit.pause(kit.interactive_gen(), kit.req(CallProvider))
    kit.d.now += 10_000
    kit.reap()
    return kit.row().status


def test_under_adr_122_an_abandoned_interactive_run_stays_running_forever(new_kit):
    """adr-122 (KB-10): lease 0 makes the abandoned segment invisible to the reaper."""
    assert _abandoned_interactive_run(new_kit, "adr-122") is RunStatus.RUNNING


def test_under_head_an_abandoned_interactive_run_is_dead_lettered(new_kit):
    """head (ADR-141): the leased segment goes stale and is dead-lettered (no stored request)."""
    assert _abandoned_interactive_run(new_kit, "head") is RunStatus.FAILED
