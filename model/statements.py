"""The statement vocabulary: the one owner of the spec's statement numbers (T1-T15, and a proposal's
P1), the repository method each names, and their classes (claims, renewals, settles, requeues, the
reaper's statements, ...). The transitions (:mod:`model.transitions`) are named from it, and every
reader (the world's store, the judge, the register, the reports) imports these names: none writes a
T-number out."""

from __future__ import annotations

START_RUN = "T1"
ENQUEUE_RUN = "T2"
CLAIM_QUEUED = "T3"
RENEW_LEASE = "T4"
MARK_PENDING_EFFECT = "T5"
RECORD_EVENT = "T6"
FINISH_RUN = "T7"
CANCEL = "T8"
SUSPEND_RUN = "T9"
CLAIM_FOR_RESUME = "T10"
REQUEUE = "T11"
FIND_STALE_RUNNING = "T12"
REQUEUE_STALE = "T13"
DEAD_LETTER_STALE = "T14"
MAX_EVENT_SEQUENCE = "T15"
EXTEND_LEASE = "P1"
"""A proposal's statement (``operation_deadline``), not the runtime's: numbered apart."""

NAMES: dict[str, str] = {
    START_RUN: "T1 startRun",
    ENQUEUE_RUN: "T2 enqueueRun",
    CLAIM_QUEUED: "T3 claimQueued",
    RENEW_LEASE: "T4 renewLease",
    MARK_PENDING_EFFECT: "T5 markPendingEffect",
    RECORD_EVENT: "T6 recordEvent",
    FINISH_RUN: "T7 finishRun",
    CANCEL: "T8 cancel",
    SUSPEND_RUN: "T9 suspendRun",
    CLAIM_FOR_RESUME: "T10 claimForResume",
    REQUEUE: "T11 requeue",
    FIND_STALE_RUNNING: "T12 findStaleRunning",
    REQUEUE_STALE: "T13 requeueStale",
    DEAD_LETTER_STALE: "T14 deadLetterStale",
    MAX_EVENT_SEQUENCE: "T15 maxEventSequence",
    EXTEND_LEASE: "P1 extendLease",
}
"""Each statement's number and the repository method that issues it, as the history records it."""

CREATES = frozenset({START_RUN, ENQUEUE_RUN})
"""The INSERTs of a run row."""
CLAIMS = frozenset({START_RUN, CLAIM_QUEUED, CLAIM_FOR_RESUME})
"""The statements that give a row an owner and a lease."""
RENEWALS = frozenset({RENEW_LEASE, MARK_PENDING_EFFECT})
"""A segment's heartbeats: the lease moved forward by its owner (the fence stamp renews too)."""
SETTLES = frozenset({FINISH_RUN, CANCEL, DEAD_LETTER_STALE})
"""The statements that make a row terminal."""
REQUEUES = frozenset({REQUEUE, REQUEUE_STALE})
"""The statements that put a running row back in the queue (count + 1, claim, lease and fence cleared)."""
REAPER_STATEMENTS = frozenset({REQUEUE_STALE, DEAD_LETTER_STALE})
"""What the reaper writes: both guarded on staleness alone."""
OWNER_GUARDED = frozenset({RENEW_LEASE, MARK_PENDING_EFFECT, FINISH_RUN, REQUEUE, EXTEND_LEASE})
"""The statements whose WHERE clause may name the owner (a settle only when the caller passes one)."""
LEASE_SETTING = CLAIMS | REQUEUES
"""The statements that change who owns a row (a claim sets an owner, a requeue clears it)."""


def number(name: str) -> str:
    """The statement number of a recorded transition name (``"T13 requeueStale"`` -> ``"T13"``)."""
    return name.split(" ", 1)[0]
