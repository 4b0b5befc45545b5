"""Enqueue, runQueued and the queued-message handler (spec 3.1, T2/T3, ADR-102).

Peer: AgentRuntimeTest "Queue" bullets and AgentRunQueuedHandlerTest. The handler only
calls runQueued for the message's uuid, so its tests are restated on run_queued.
"""

from __future__ import annotations

import dataclasses

import pytest

from model.entrypoints import enqueue
from model.failures import DispatchError, ProviderConnectionError, RunEnqueueFailed, StoreError
from model.records import RunRequest, Turn
from model.requests import CallProvider, Dispatch, FindRun, InsertRun, MaxSequence, Update
from model.transitions import ClaimQueued, FinishRun
from model.vocab import Outcome, RunStatus, TerminationReason


def test_enqueue_persists_a_queued_row_and_dispatches_the_wake_up_message(kit):
    """Peer: AgentRuntimeTest::enqueuePersistsAQueuedRowAndDispatchesTheWakeUpMessage — QUEUED with
    the payload, claim/lease/fence at defaults, started_at 0, and one undelayed wake-up."""
    assert kit.enqueue(kit.turn("search")) == kit.uuid

    row = kit.row()
    assert (row.status, row.claimed_by, row.lease_expires, row.pending_effect) == (RunStatus.QUEUED, "", 0, "")
    assert (row.started_at, row.requeue_count) == (0, 0)
    assert row.queued_request is not None and row.queued_request.offered == kit.offered
    assert [(m.uuid, m.delay_ms) for m in kit.d.dispatched] == [(kit.uuid, 0)]


def test_enqueue_fails_closed_when_the_row_cannot_be_stored(kit):
    """Peer: AgentRuntimeTest::enqueueFailsClosedWhenTheRowCannotBeStored — throws, no dispatch."""
    kit.d.fail(kit.req(InsertRun), StoreError())

    with pytest.raises(RunEnqueueFailed):
        kit.enqueue()

    assert kit.d.dispatched == []
    assert kit.d.db.find(kit.uuid) is None


def test_enqueue_settles_the_row_failed_when_the_dispatch_fails(kit):
    """Peer: AgentRuntimeTest::enqueueSettlesTheRowFailedWhenTheDispatchFails — no orphan QUEUED
    row: an unguarded settleFailed (provider_failed), then RunEnqueueFailed."""
    kit.d.fail(kit.req(Dispatch), DispatchError())

    with pytest.raises(RunEnqueueFailed):
        kit.enqueue()

    row = kit.row()
    assert (row.status, row.termination_reason) == (RunStatus.FAILED, TerminationReason.PROVIDER_FAILED)
    assert row.queued_request is None
    assert [t.owned_by for t in kit.updates(FinishRun)] == [None]


def test_enqueue_fails_closed_without_a_message_bus(kit):
    """Peer: AgentRuntimeTest::enqueueFailsClosedWithoutAMessageBus — throws before the insert."""
    with pytest.raises(RunEnqueueFailed):
        kit.enqueue(has_bus=False)

    assert kit.d.requests == []


def test_enqueue_fails_closed_for_an_unencodable_payload(kit):
    """Spec T2: an unencodable payload throws RunEnqueueFailed before the insert."""
    bad = RunRequest(script=(), offered=(), decodable=False)

    with pytest.raises(RunEnqueueFailed):
        kit.d.run(enqueue(kit.ctx(), kit.uuid, bad))

    assert kit.d.of(InsertRun) == []


def test_run_queued_claims_rehydrates_and_executes_the_stored_request(kit):
    """Peer: AgentRuntimeTest::runQueuedClaimsRehydratesAndExecutesTheStoredRequest — T3 under the
    worker id with a fresh lease, then the stored script is what the provider is asked."""
    kit.enqueue(kit.turn("search"))
    kit.d.now = 2_000
    claimed = []
    kit.d.before(kit.site("run_queued.position"), lambda _r: claimed.append(kit.row()), times=1)

    assert kit.run_queued() is Outcome.COMPLETED

    row = claimed[0]
    assert (row.status, row.claimed_by, row.lease_expires, row.started_at) == (
        RunStatus.RUNNING,
        kit.worker,
        2_900,
        2_000,
    )
    assert [r.turn for r in kit.d.of(CallProvider)] == [kit.turn("search"), Turn()]


@pytest.mark.parametrize("state", ["unknown", "running", "completed", "payload_less"])
def test_run_queued_returns_null_for_an_unknown_or_non_queued_run(kit, state):
    """Peer: AgentRuntimeTest::runQueuedReturnsNullForAnUnknownOrNonQueuedRun — the pre-check
    (exists, queued, payload present) refuses without a write."""
    if state != "unknown":
        kit.enqueue()
    if state == "running":
        kit.place(status=RunStatus.RUNNING, claimed_by=kit.worker_b, lease_expires=9_999)
    elif state == "completed":
        kit.place(status=RunStatus.COMPLETED, queued_request=None)
    elif state == "payload_less":
        kit.place(queued_request=None)

    assert kit.run_queued() is None
    assert kit.d.of(Update) == []


def test_run_queued_returns_null_when_the_claim_is_lost(kit):
    """Peer: AgentRuntimeTest::runQueuedReturnsNullWhenTheClaimIsLost — another worker claims between
    the pre-check and T3; the loop never runs."""
    kit.enqueue()
    kit.d.before(kit.update(ClaimQueued), lambda _r: kit.run_queued(identity=kit.worker_b))

    assert kit.run_queued() is None

    assert len(kit.d.of(CallProvider)) == 1  # the winner's only
    assert kit.row().status is RunStatus.COMPLETED


def test_run_queued_returns_null_when_the_claim_throws(kit):
    """Spec T3: 'Lost claim / store error ⇒ return null'."""
    kit.enqueue()
    kit.d.fail(kit.update(ClaimQueued), StoreError())

    assert kit.run_queued() is None
    assert kit.row().status is RunStatus.QUEUED


def _corrupt(kit, **fields):
    stored = kit.row().queued_request
    assert stored is not None
    kit.place(queued_request=dataclasses.replace(stored, **fields))


@pytest.mark.parametrize(
    "fields",
    [{"decodable": False}, {"configuration_exists": False}],
    ids=[
        "runQueuedSettlesTheRunFailedWhenTheStoredRequestIsCorrupt",
        "runQueuedSettlesTheRunFailedWhenTheConfigurationIsGone",
    ],
)
def test_run_queued_settles_the_run_failed_when_the_request_cannot_be_rehydrated(kit, fields):
    """Peer: AgentRuntimeTest::runQueuedSettlesTheRunFailedWhenTheStoredRequestIsCorrupt and
    ::runQueuedSettlesTheRunFailedWhenTheConfigurationIsGone — after the claim, an unguarded
    settleFailed; nothing executes."""
    kit.enqueue()
    _corrupt(kit, **fields)

    assert kit.run_queued() is Outcome.FAILED

    assert kit.row().status is RunStatus.FAILED
    assert [t.owned_by for t in kit.updates(FinishRun)] == [None]
    assert kit.d.of(CallProvider) == []


@pytest.mark.parametrize("failing", [FindRun, MaxSequence])
def test_run_queued_settles_failed_unguarded_when_the_position_cannot_be_read(kit, failing):
    """Spec 3.1: 'fresh findRun + MAX+1 (failure ⇒ unguarded settleFailed, outcome FAILED)'."""
    kit.enqueue()
    kit.d.fail(kit.req(failing, site="run_queued.position"), StoreError())

    assert kit.run_queued() is Outcome.FAILED

    assert kit.row().status is RunStatus.FAILED
    assert [t.owned_by for t in kit.updates(FinishRun)] == [None]


def test_every_claim_overwrites_started_at(kit):
    """Spec 1.1: started_at is set by the claim and overwritten by every later claimQueued."""
    kit.enqueue()
    kit.d.fail(kit.req(CallProvider), ProviderConnectionError())
    kit.d.now = 1_500
    assert kit.run_queued() is Outcome.REQUEUED
    assert kit.row().started_at == 1_500
    kit.d.now = 3_000

    assert kit.run_queued(identity=kit.worker_b) is Outcome.COMPLETED
    assert kit.row().started_at == 3_000


def test_the_handler_executes_the_queued_run_through_the_runtime(kit):
    """Peer: AgentRunQueuedHandlerTest::executesTheQueuedRunThroughTheRuntime — the wake-up's uuid
    is run through runQueued to its outcome."""
    kit.enqueue()
    (message,) = kit.d.dispatched

    assert kit.run_queued(message.uuid) is Outcome.COMPLETED


def test_an_unclaimable_run_is_a_non_event_not_a_failure(kit):
    """Peer: AgentRunQueuedHandlerTest::anUnclaimableRunIsANonEventNotAFailure — a duplicate wake-up
    after completion returns None, raises nothing and writes nothing."""
    kit.enqueue()
    kit.run_queued()
    before = kit.row()
    updates_before = len(kit.updates())

    assert kit.run_queued() is None

    assert kit.row() == before
    assert len(kit.updates()) == updates_before
