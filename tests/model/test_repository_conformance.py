"""The peer's repository/persister tests against a real DB (spec section 8), restated on the pure transitions.

Each test's docstring names the PHPUnit test of
``Tests/Functional/Service/Tool/AgentRunPersisterTest.php`` it restates. Where the peer test calls
the persister, the restatement applies the guarded update the persister issues; "returns false" is
``apply`` returning None (the WHERE clause matched no row), and a refused update leaves the stored
row as it was. Lookups by uuid (e.g. cancelling an unknown uuid) belong to the simulated store and
are not restated here; neither are renewLeaseSurvivesANoOpRenewalInTheSameSecond (MySQL changed-rows,
KB-6) and the purge tests.
"""

from __future__ import annotations

from model.constants import LEASE_S
from model.records import RunRequest, RunRow, SuspendedState, ToolCall
from model.tools import may_retry_after_fence
from model.transitions import (
    Cancel,
    ClaimForResume,
    ClaimQueued,
    DeadLetterStale,
    FinishRun,
    MarkPendingEffect,
    RenewLease,
    Requeue,
    RequeueStale,
    Suspend,
    Transition,
    enqueue_run,
    find_stale_running,
    start_run,
)
from model.vocab import RunStatus, TerminationReason, ToolEffect

REQUEST = RunRequest(script=(), offered=("create_page_draft",))
STATE = SuspendedState(request=REQUEST, round_no=1, pending=(ToolCall("c1", "create_page_draft"),), turn_digest="t1")
WORKER_A = "worker:host-a:1"
WORKER_B = "worker:host-b:2"
T0 = 1_000


def applied(transition: Transition, row: RunRow) -> RunRow:
    after = transition.apply(row)
    assert after is not None, f"{transition.name} was refused on {row}"
    return after


def queued_run(uid: int = 1) -> RunRow:
    return enqueue_run(uid, f"run-{uid}", REQUEST, now=T0)


def claimed_run(worker: str = WORKER_A, now: int = T0, uid: int = 1) -> RunRow:
    return applied(ClaimQueued(worker=worker, now=now), queued_run(uid))


def completed(owned_by: str | None, now: int, iterations: int = 3, total_tokens: int = 120) -> FinishRun:
    return FinishRun(
        status=RunStatus.COMPLETED,
        reason=TerminationReason.COMPLETED,
        error_class="",
        iterations=iterations,
        total_tokens=total_tokens,
        owned_by=owned_by,
        now=now,
    )


def failed(owned_by: str | None, now: int, reason: TerminationReason = TerminationReason.PROVIDER_FAILED) -> FinishRun:
    return FinishRun(
        status=RunStatus.FAILED,
        reason=reason,
        error_class="RuntimeException",
        iterations=0,
        total_tokens=0,
        owned_by=owned_by,
        now=now,
    )


def test_a_queued_run_is_claimed_exactly_once_and_settling_clears_the_queue_fields() -> None:
    """aQueuedRunIsClaimedExactlyOnceAndSettlingClearsTheQueueFields"""
    claimed = applied(ClaimQueued(worker=WORKER_A, now=T0 + 5), queued_run())
    assert ClaimQueued(worker=WORKER_B, now=T0 + 6).apply(claimed) is None
    assert (claimed.claimed_by, claimed.lease_expires, claimed.started_at) == (WORKER_A, T0 + 5 + LEASE_S, T0 + 5)
    settled = applied(completed(owned_by=WORKER_A, now=T0 + 60), claimed)
    assert (settled.queued_request, settled.claimed_by, settled.lease_expires) == (None, "", 0)


def test_a_cancelled_queued_run_cannot_be_claimed() -> None:
    """aCancelledQueuedRunCannotBeClaimed"""
    cancelled = applied(Cancel(now=T0 + 1), queued_run())
    assert ClaimQueued(worker=WORKER_A, now=T0 + 2).apply(cancelled) is None
    assert cancelled.queued_request is None


def test_a_suspension_clears_the_worker_lease() -> None:
    """aSuspensionClearsTheWorkerLease"""
    waiting = applied(Suspend(state=STATE, for_input=False, now=T0 + 10), claimed_run())
    assert (waiting.status, waiting.claimed_by, waiting.lease_expires) == (RunStatus.WAITING_FOR_APPROVAL, "", 0)


def test_a_suspension_arriving_after_a_cancel_is_discarded() -> None:
    """aSuspensionArrivingAfterACancelIsDiscarded"""
    cancelled = applied(Cancel(now=T0 + 10), claimed_run())
    assert Suspend(state=STATE, for_input=False, now=T0 + 11).apply(cancelled) is None
    assert cancelled.status is RunStatus.CANCELLED


def test_a_settled_run_cannot_be_settled_again() -> None:
    """aSettledRunCannotBeSettledAgain"""
    done = applied(completed(owned_by=WORKER_A, now=T0 + 60, iterations=3, total_tokens=120), claimed_run())
    assert failed(owned_by=None, now=T0 + 61).apply(done) is None
    assert (done.status, done.iterations, done.total_tokens) == (RunStatus.COMPLETED, 3, 120)


def test_cancel_moves_a_non_terminal_run_to_cancelled_and_refuses_a_finished_one() -> None:
    """cancelMovesANonTerminalRunToCancelledAndRefusesAFinishedOne (the unknown-uuid case is the store's)"""
    cancelled = applied(Cancel(now=T0 + 10), claimed_run())
    assert (cancelled.status, cancelled.termination_reason) == (RunStatus.CANCELLED, TerminationReason.CANCELLED)
    assert Cancel(now=T0 + 11).apply(cancelled) is None
    finished = applied(completed(owned_by=WORKER_A, now=T0 + 10), claimed_run())
    assert Cancel(now=T0 + 11).apply(finished) is None


def test_claim_for_resume_is_atomic_so_only_the_first_concurrent_approval_wins() -> None:
    """claimForResumeIsAtomicSoOnlyTheFirstConcurrentApprovalWins"""
    waiting = applied(Suspend(state=STATE, for_input=False, now=T0 + 10), claimed_run())
    first = applied(ClaimForResume(identity="resume:host-c:3", for_input=False, now=T0 + 20), waiting)
    assert (first.status, first.claimed_by, first.lease_expires) == (
        RunStatus.RUNNING,
        "resume:host-c:3",
        T0 + 20 + LEASE_S,
    )
    assert ClaimForResume(identity="resume:host-d:4", for_input=False, now=T0 + 20).apply(first) is None


def test_renew_lease_is_guarded_by_worker_ownership() -> None:
    """renewLeaseIsGuardedByWorkerOwnership"""
    row = claimed_run(now=T0)
    assert RenewLease(me=WORKER_B, now=T0 + 100).apply(row) is None
    renewed = applied(RenewLease(me=WORKER_A, now=T0 + 100), row)
    assert renewed.lease_expires == T0 + 100 + LEASE_S > row.lease_expires


def test_mark_pending_effect_stamps_and_clears_the_in_flight_write_fence() -> None:
    """markPendingEffectStampsAndClearsTheInFlightWriteFence"""
    fresh = claimed_run(now=T0)
    assert fresh.pending_effect == ""
    stamp = ToolEffect.NON_IDEMPOTENT_WRITE.value
    assert MarkPendingEffect(me=WORKER_B, effect=stamp, now=T0 + 30).apply(fresh) is None
    stamped = applied(MarkPendingEffect(me=WORKER_A, effect=stamp, now=T0 + 30), fresh)
    assert stamped.pending_effect == stamp
    assert stamped.lease_expires > T0 + LEASE_S
    cleared = applied(MarkPendingEffect(me=WORKER_A, effect="", now=T0 + 40), stamped)
    assert cleared.pending_effect == ""


def test_an_ownership_guarded_settle_does_not_clobber_a_run_reclaimed_by_another_worker() -> None:
    """anOwnershipGuardedSettleDoesNotClobberARunReclaimedByAnotherWorker (KB-7 fixed)"""
    a_claimed = claimed_run(worker=WORKER_A, now=T0)
    reaper_now = a_claimed.lease_expires + 100
    requeued = applied(RequeueStale(now=reaper_now), a_claimed)
    b_claimed = applied(ClaimQueued(worker=WORKER_B, now=reaper_now + 1), requeued)
    a_dead_letter = failed(owned_by=WORKER_A, now=reaper_now + 2, reason=TerminationReason.NOT_RETRYABLE)
    assert a_dead_letter.apply(b_claimed) is None
    assert (b_claimed.status, b_claimed.claimed_by) == (RunStatus.RUNNING, WORKER_B)
    assert applied(completed(owned_by=WORKER_B, now=reaper_now + 3), b_claimed).status is RunStatus.COMPLETED


def test_an_interactive_settle_without_an_owner_guard_still_settles() -> None:
    """anInteractiveSettleWithoutAnOwnerGuardStillSettles"""
    unleased = start_run(1, "run-1", "", 0, now=T0)
    assert applied(completed(owned_by=None, now=T0 + 5), unleased).status is RunStatus.COMPLETED


def test_requeue_is_ownership_guarded_increments_the_count_and_keeps_the_request() -> None:
    """requeueIsOwnershipGuardedIncrementsTheCountAndKeepsTheRequest"""
    row = claimed_run(worker=WORKER_A)
    assert Requeue(me=WORKER_B, now=T0 + 10).apply(row) is None
    requeued = applied(Requeue(me=WORKER_A, now=T0 + 10), row)
    assert (requeued.status, requeued.requeue_count, requeued.claimed_by, requeued.lease_expires) == (
        RunStatus.QUEUED,
        1,
        "",
        0,
    )
    assert requeued.queued_request == REQUEST


def test_a_requeued_run_does_not_inherit_the_previous_attempts_write_fence() -> None:
    """aRequeuedRunDoesNotInheritThePreviousAttemptsWriteFence (KB-9 fixed)"""
    stamp = ToolEffect.NON_IDEMPOTENT_WRITE.value
    fenced = applied(MarkPendingEffect(me=WORKER_A, effect=stamp, now=T0 + 5), claimed_run())
    assert not may_retry_after_fence(fenced.pending_effect)
    requeued = applied(Requeue(me=WORKER_A, now=T0 + 10), fenced)
    assert requeued.pending_effect == ""
    assert may_retry_after_fence(requeued.pending_effect)


def test_find_stale_running_returns_expired_worker_leases_only() -> None:
    """findStaleRunningReturnsExpiredWorkerLeasesOnly"""
    expired = claimed_run(worker=WORKER_A, now=T0, uid=1)
    fresh = claimed_run(worker=WORKER_B, now=T0 + 500, uid=2)
    unleased_begin = start_run(3, "run-3", "", 0, now=T0)
    now = expired.lease_expires + 1
    assert fresh.lease_expires > now
    assert find_stale_running([expired, fresh, unleased_begin], now=now, limit=50) == [expired]


def test_requeue_stale_reclaims_an_expired_run_but_loses_to_a_heartbeat_renewal() -> None:
    """requeueStaleReclaimsAnExpiredRunButLosesToAHeartbeatRenewal"""
    row = claimed_run(worker=WORKER_A, now=T0)
    renewed = applied(RenewLease(me=WORKER_A, now=T0 + LEASE_S - 10), row)
    reaper_now = row.lease_expires + 1  # the lease the reaper SELECTed has expired...
    assert RequeueStale(now=reaper_now).apply(renewed) is None  # ...but the heartbeat moved it on
    later = renewed.lease_expires + 1
    requeued = applied(RequeueStale(now=later), renewed)
    assert (requeued.status, requeued.requeue_count) == (RunStatus.QUEUED, 1)


def test_dead_letter_stale_fails_an_expired_run_but_spares_a_fresh_one() -> None:
    """deadLetterStaleFailsAnExpiredRunButSparesAFreshOne"""
    row = claimed_run(worker=WORKER_A, now=T0)
    fresh_now = row.lease_expires - 1
    assert (
        DeadLetterStale(reason=TerminationReason.NOT_RETRYABLE, now=fresh_now, write_now=fresh_now).apply(row) is None
    )
    stale_now = row.lease_expires + 1
    dead = applied(DeadLetterStale(reason=TerminationReason.NOT_RETRYABLE, now=stale_now, write_now=stale_now), row)
    assert (dead.status, dead.termination_reason) == (RunStatus.FAILED, TerminationReason.NOT_RETRYABLE)
    assert (dead.claimed_by, dead.lease_expires, dead.queued_request) == ("", 0, None)
