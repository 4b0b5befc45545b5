"""The closed vocabularies (spec sections 1 and 6) and the constants and backoff of section 1.3."""

from __future__ import annotations

import pytest

from model.constants import (
    IDENTITY_MAX_CHARS,
    LEASE_S,
    LOOP_DEFAULT_MAX_ITERATIONS,
    MAX_ITERATIONS_CEILING,
    MAX_REQUEUES,
    REAPER_DEFAULT_LIMIT,
    REQUEUE_BACKOFF_CAP_MS,
    REQUEUE_BACKOFF_MS,
    clamp_iterations,
    execution_identity,
    requeue_backoff_ms,
)
from model.vocab import NON_TERMINAL, RunStatus, TerminationReason, ToolEffect

# ---- AgentRunStatusTest ------------------------------------------------------------------------


def test_terminal_states_are_completed_failed_cancelled() -> None:
    assert {s for s in RunStatus if s.is_terminal} == {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED}


def test_non_terminal_states_are_queued_running_and_waiting() -> None:
    assert set(NON_TERMINAL) == {s for s in RunStatus if not s.is_terminal}
    assert set(NON_TERMINAL) == {
        RunStatus.QUEUED,
        RunStatus.RUNNING,
        RunStatus.WAITING_FOR_APPROVAL,
        RunStatus.WAITING_FOR_INPUT,
    }


def test_awaiting_states_are_the_two_waiting_values() -> None:
    assert {s for s in RunStatus if s.is_awaiting} == {RunStatus.WAITING_FOR_APPROVAL, RunStatus.WAITING_FOR_INPUT}


def test_status_values_are_the_column_values() -> None:
    assert [s.value for s in RunStatus] == [
        "queued",
        "running",
        "waiting_for_approval",
        "waiting_for_input",
        "completed",
        "failed",
        "cancelled",
    ]


# ---- AgentRunTerminationReasonTest -------------------------------------------------------------


def test_only_provider_failure_is_retryable() -> None:
    assert [r for r in TerminationReason if r.is_retryable] == [TerminationReason.PROVIDER_FAILED]


def test_termination_reason_values_are_the_column_values_with_empty_for_still_going() -> None:
    assert [r.value for r in TerminationReason] == [
        "",
        "completed",
        "max_iterations",
        "budget_exhausted",
        "policy_denied",
        "approval_denied",
        "provider_failed",
        "cancelled",
        "retries_exhausted",
        "not_retryable",
        "context_truncated",
    ]


# ---- ToolEffectTest ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("effect", "is_write", "is_safe_to_retry"),
    [
        (ToolEffect.READ_ONLY, False, True),
        (ToolEffect.IDEMPOTENT_WRITE, True, True),
        (ToolEffect.NON_IDEMPOTENT_WRITE, True, False),
    ],
)
def test_classifies_write_and_retry_safety(effect: ToolEffect, is_write: bool, is_safe_to_retry: bool) -> None:
    assert (effect.is_write, effect.is_safe_to_retry) == (is_write, is_safe_to_retry)


def test_only_the_non_idempotent_write_is_unsafe_to_retry() -> None:
    assert [e for e in ToolEffect if not e.is_safe_to_retry] == [ToolEffect.NON_IDEMPOTENT_WRITE]


def test_tool_effect_values_are_the_fence_values() -> None:
    assert [e.value for e in ToolEffect] == ["read_only", "idempotent_write", "non_idempotent_write"]


# ---- constants ---------------------------------------------------------------------------------


def test_constants_match_the_runtime() -> None:
    assert (LEASE_S, MAX_REQUEUES, REQUEUE_BACKOFF_MS, REQUEUE_BACKOFF_CAP_MS) == (900, 3, 30_000, 600_000)
    assert (MAX_ITERATIONS_CEILING, LOOP_DEFAULT_MAX_ITERATIONS, REAPER_DEFAULT_LIMIT, IDENTITY_MAX_CHARS) == (
        20,
        5,
        50,
        64,
    )


@pytest.mark.parametrize(
    ("count_before", "delay_ms"),
    [(0, 30_000), (1, 60_000), (2, 120_000)],
)
def test_requeue_backoff_doubles_from_thirty_seconds(count_before: int, delay_ms: int) -> None:
    assert requeue_backoff_ms(count_before) == delay_ms


@pytest.mark.parametrize("count_before", [5, 6, 10, 40])
def test_requeue_backoff_is_capped_at_ten_minutes(count_before: int) -> None:
    assert requeue_backoff_ms(count_before) == 600_000


def test_requeue_backoff_reaches_the_cap_exactly_at_the_first_doubling_past_it() -> None:
    assert (requeue_backoff_ms(4), requeue_backoff_ms(5)) == (480_000, 600_000)


def test_execution_identity_is_kind_host_pid() -> None:
    assert execution_identity("worker", "host-a", 42) == "worker:host-a:42"


def test_execution_identity_is_truncated_to_64_characters() -> None:
    identity = execution_identity("resume", "h" * 100, 12345)
    assert identity == ("resume:" + "h" * 100)[:64]
    assert len(identity) == 64


def test_an_explicit_iteration_cap_is_clamped_to_the_ceiling() -> None:
    assert (clamp_iterations(50), clamp_iterations(21), clamp_iterations(20)) == (20, 20, 20)


def test_an_iteration_cap_below_the_ceiling_passes_unchanged() -> None:
    assert (clamp_iterations(7), clamp_iterations(1)) == (7, 1)


def test_no_iteration_cap_passes_through_as_none() -> None:
    assert clamp_iterations(None) is None
