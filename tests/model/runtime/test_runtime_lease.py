"""Lease and heartbeat of one segment (spec 3.3 step 4, T1/T3/T4, ADR-104/141).

Peer: AgentRuntimeTest "Lease/heartbeat" bullets, plus the spec's own statements on
renewal (no lease-expiry predicate, no heartbeat during a provider call).
"""

from __future__ import annotations

from model.failures import StoreError
from model.requests import CallProvider, EmitStep, InsertEvent, InsertRun
from model.transitions import FinishRun, RenewLease
from model.vocab import Outcome, RunStatus, StepKind


def _advance_clock_before_each_renewal(kit, step_s=10):
    kit.d.before(kit.update(RenewLease), lambda _r: setattr(kit.d, "now", kit.d.now + step_s), times=1000)


def test_a_queued_run_renews_its_lease_at_each_step_boundary(kit):
    """Peer: AgentRuntimeTest::aQueuedRunRenewsItsLeaseAtEachStepBoundary — one renewal per
    step, under the claim identity, each pushing the lease to now+900."""
    kit.enqueue()
    _advance_clock_before_each_renewal(kit)
    lease_at_settle = []
    kit.d.before(kit.update(FinishRun), lambda _r: lease_at_settle.append(kit.row().lease_expires))

    assert kit.run_queued() is Outcome.COMPLETED

    renewals = kit.updates(RenewLease)
    assert len(renewals) == len(kit.events()) == 3  # dropped, request, llm
    assert {r.me for r in renewals} == {kit.worker}
    assert lease_at_settle == [renewals[-1].now + 900]


def test_an_interactive_run_renews_its_own_lease_at_every_step_boundary(kit):
    """Peer: AgentRuntimeTest::anInteractiveRunRenewsItsOwnLeaseAtEveryStepBoundary."""
    assert kit.interactive(kit.turn("search")) is Outcome.COMPLETED

    renewals = kit.updates(RenewLease)
    assert len(renewals) == len(kit.events()) == 6  # dropped, request, llm, tool, request, llm
    assert {r.me for r in renewals} == {kit.interactive_id}


def test_a_synchronous_run_claims_its_own_lease_so_the_fence_can_arm(kit):
    """Peer: AgentRuntimeTest::aSynchronousRunClaimsItsOwnLeaseSoTheFenceCanArm — startRun (T1)
    writes the interactive identity and a lease of now+900."""
    kit.d.now = 5_000
    kit.interactive()

    (begin,) = kit.d.of(InsertRun)
    assert begin.row.status is RunStatus.RUNNING
    assert begin.row.claimed_by == kit.interactive_id
    assert begin.row.lease_expires == 5_900


def test_a_queued_run_that_loses_its_lease_stops_without_settling(kit):
    """Peer: AgentRuntimeTest::aQueuedRunThatLosesItsLeaseStopsWithoutSettling — the first
    renewal is refused (another worker holds the row) ⇒ LEASE_LOST, no settle, no event."""
    kit.enqueue()
    kit.d.before(kit.update(RenewLease), lambda _r: kit.place(claimed_by=kit.worker_b))

    assert kit.run_queued() is Outcome.LEASE_LOST

    assert kit.updates(FinishRun) == []
    assert kit.events() == []
    assert kit.row().status is RunStatus.RUNNING
    assert kit.row().claimed_by == kit.worker_b


def test_a_renewal_store_error_is_lease_lost_and_the_step_is_shown_but_not_persisted(kit):
    """Spec 3.6 'Renewal/clear affects no row or store error': LEASE_LOST before persisting the
    step; the observer has already seen it (emit-before-persist); nothing is settled."""
    kit.enqueue()
    kit.d.fail(kit.update(RenewLease), StoreError(), skip=1)  # the request step's renewal

    assert kit.run_queued(observer=True) is Outcome.LEASE_LOST

    emitted = [r.kind for r in kit.d.of(EmitStep)]
    assert emitted == ["dropped", "request"]
    assert kit.kinds() == ["dropped"]
    assert kit.updates(FinishRun) == []
    assert kit.d.of(CallProvider) == []


def test_a_same_second_renewal_is_not_lease_lost(kit):
    """Spec T4 (KB-6 fixed): renewals in the same wall-clock second change no column; the
    COUNT fallback still confirms ownership, so the run completes."""
    kit.enqueue()  # the clock never moves: every renewal is a no-op update

    assert kit.run_queued() is Outcome.COMPLETED
    assert len(kit.updates(RenewLease)) == 3


def test_renewal_has_no_lease_expiry_predicate_so_an_expired_unreaped_worker_carries_on(kit):
    """Spec T4: WHERE status=running AND claimed_by=me, no expiry check — a worker whose lease
    ran out but that nobody reaped renews at its next boundary and completes."""
    kit.enqueue()
    paused = kit.pause(kit.queued_gen(), kit.req(CallProvider))
    kit.expire()

    assert paused.finish() is Outcome.COMPLETED
    assert kit.row().status is RunStatus.COMPLETED


def test_a_provider_call_outliving_the_lease_is_reaped_and_the_worker_stops_at_its_next_boundary(kit):
    """Spec 3.2 step 3 / 7.2: no heartbeat during the provider call; the reaper requeues the
    stale row and the stalled worker's llm boundary renewal fails ⇒ LEASE_LOST, nothing written."""
    kit.enqueue()
    paused = kit.pause(kit.queued_gen(), kit.req(CallProvider))
    kit.expire()
    assert kit.reap().requeued == 1
    events_before = kit.seqs()

    assert paused.finish() is Outcome.LEASE_LOST

    assert kit.seqs() == events_before
    assert kit.row().status is RunStatus.QUEUED
    assert not any(r.event.step.kind is StepKind.LLM for r in kit.d.of(InsertEvent))
