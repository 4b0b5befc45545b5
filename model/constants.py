"""Constants of spec section 1.3 and the requeue backoff formula. Pure; no clock."""

from __future__ import annotations

LEASE_S = 900
MAX_REQUEUES = 3
REQUEUE_BACKOFF_MS = 30_000
REQUEUE_BACKOFF_CAP_MS = 600_000
MAX_ITERATIONS_CEILING = 20
LOOP_DEFAULT_MAX_ITERATIONS = 5
REAPER_DEFAULT_LIMIT = 50
IDENTITY_MAX_CHARS = 64


def requeue_backoff_ms(requeue_count_before: int) -> int:
    """Delay of the wake-up after an in-process requeue (`dispatchRequeue`).

    ``requeue_count_before`` is the count read *before* the requeue incremented it.
    """
    return int(min(REQUEUE_BACKOFF_MS * 2**requeue_count_before, REQUEUE_BACKOFF_CAP_MS))


def clamp_iterations(requested: int | None) -> int | None:
    """An explicit iteration cap is clamped to the ceiling; ``None`` passes through."""
    if requested is None:
        return None
    return min(requested, MAX_ITERATIONS_CEILING)


def execution_identity(kind: str, host: str, pid: int) -> str:
    """`ExecutionIdentity`: ``kind:host:pid`` truncated to 64 characters."""
    return f"{kind}:{host}:{pid}"[:IDENTITY_MAX_CHARS]
