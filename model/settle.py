"""The persister's settle wrappers: each a T7 finishRun that never throws (spec 2, T7).

A refused or failed settle returns False; callers map that to LEASE_LOST or ignore it
exactly where the spec says they do.
"""

from __future__ import annotations

from model.failures import StoreError
from model.policy import Policy
from model.requests import READ_CLOCK, Update
from model.segment import Gen
from model.transitions import FinishRun
from model.vocab import RunStatus, TerminationReason


def settle(
    policy: Policy,
    uuid: str,
    status: RunStatus,
    reason: TerminationReason,
    *,
    owned_by: str | None,
    site: str,
    error_class: str = "",
    iterations: int = 0,
    total_tokens: int = 0,
) -> Gen[bool]:
    """One T7 settle; KB-1 drops the non-terminal predicate."""
    now = yield READ_CLOCK
    transition = FinishRun(
        status,
        reason,
        error_class,
        iterations,
        total_tokens,
        owned_by,
        now,
        terminal_guard=not policy.kb1_finish_unguarded,
    )
    try:
        result = yield Update(uuid, transition, site)
    except StoreError:
        return False
    return bool(result.matched)


def settle_failed(policy: Policy, uuid: str, error_class: str, *, owned_by: str | None, site: str) -> Gen[bool]:
    """`settleFailed`: FAILED, zero totals, the failure's class, reason provider_failed."""
    return (
        yield from settle(
            policy,
            uuid,
            RunStatus.FAILED,
            TerminationReason.PROVIDER_FAILED,
            owned_by=owned_by,
            site=site,
            error_class=error_class,
        )
    )


def settle_dead_lettered(
    policy: Policy, uuid: str, reason: TerminationReason, error_class: str, *, owned_by: str | None, site: str
) -> Gen[bool]:
    """`settleDeadLettered`: FAILED with not_retryable / retries_exhausted."""
    return (
        yield from settle(policy, uuid, RunStatus.FAILED, reason, owned_by=owned_by, site=site, error_class=error_class)
    )
