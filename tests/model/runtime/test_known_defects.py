"""The historic defects of spec 7.3, one policy flag each: found with the flag on, absent at HEAD.

Each test plays the triggering interleaving of the spec's table twice — once with the
``kbN_…`` flag switched on over HEAD, once at HEAD — and asserts the observable symptom
appears exactly in the first world. KB-4 is a playground-controller hazard and has no
flag; KB-11 has no ``kb`` flag but is the ``dead_letter_payloadless`` rule switched off.
"""

from __future__ import annotations

import pytest

from model.failures import (
    DispatchError,
    FallbackChainExhaustedError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderResponseError,
    RunEnqueueFailed,
    StoreError,
)
from model.policy import HEAD
from model.requests import CallProvider, CountEvents, Dispatch, InvokeTool, MaxSequence
from model.transitions import Suspend
from model.vocab import Outcome, RunStatus, StepKind, TerminationReason


def _duplicates(seqs):
    return sorted({s for s in seqs if seqs.count(s) > 1})


def test_kb1_a_late_settle_overwrites_a_completed_run(new_kit):
    """KB-1 (finishRun keyed on uid only). A worker runs the row to COMPLETED while the enqueue's
    dispatch is still in flight; the dispatch then throws and enqueue settles FAILED unguarded."""

    def play(policy):
        kit = new_kit(policy)
        kit.d.before(kit.req(Dispatch, site="enqueue.dispatch"), lambda _r: kit.run_queued())
        kit.d.fail(kit.req(Dispatch, site="enqueue.dispatch"), DispatchError())
        with pytest.raises(RunEnqueueFailed):
            kit.enqueue(kit.turn("search"))
        return kit.row()

    reopened, kept = play(HEAD.with_flags(kb1_finish_unguarded=True)), play(HEAD)

    assert (reopened.status, reopened.total_tokens, reopened.error_class) == (RunStatus.FAILED, 0, "TransportException")
    assert (kept.status, kept.total_tokens, kept.error_class) == (RunStatus.COMPLETED, 20, "")


def test_kb2_a_resume_after_a_failed_events_read_restarts_at_sequence_zero(new_kit):
    """KB-2 (position = COUNT(events), 0 on a read error). The events read fails during approve:
    the resumed segment rewrites sequences 0.. ⇒ duplicates. At HEAD the approval is refused."""

    def play(policy):
        kit = new_kit(policy)
        kit.interactive(kit.turn("create_page_draft"))
        kit.d.fail(lambda r: isinstance(r, CountEvents | MaxSequence), StoreError())
        return kit.approve(), kit.seqs()

    (outcome_on, seqs_on), (outcome_off, seqs_off) = (
        play(HEAD.with_flags(kb2_resume_position_by_count=True)),
        play(HEAD),
    )

    assert outcome_on is Outcome.COMPLETED and _duplicates(seqs_on) == [0, 1, 2]
    assert outcome_off is None and _duplicates(seqs_off) == []


def test_kb3_a_suspension_after_a_cancel_resurrects_the_run(new_kit):
    """KB-3 (suspendRun keyed on uid only). The cancel wins the row after the llm boundary; the
    in-flight loop then meets an approval-gated call and suspends."""

    def play(policy):
        kit = new_kit(policy)
        kit.d.before(kit.update(Suspend), lambda _r: kit.cancel())
        return kit.interactive(kit.turn("create_page_draft")), kit.row().status

    assert play(HEAD.with_flags(kb3_suspend_unguarded=True)) == (
        Outcome.AWAITING_APPROVAL,
        RunStatus.WAITING_FOR_APPROVAL,
    )
    assert play(HEAD) == (Outcome.SUSPEND_FAILED, RunStatus.CANCELLED)


def test_kb5_a_zombie_appends_an_event_into_the_new_owners_stream(new_kit):
    """KB-5 (persist the step, then renew). Worker A stalls in the provider call past its lease;
    the reaper requeues; B claims at MAX+1 and writes; A then reaches its llm boundary."""

    def play(policy):
        kit = new_kit(policy)
        kit.enqueue()
        a = kit.pause(kit.queued_gen(), kit.req(CallProvider))
        kit.expire()
        kit.reap()
        assert kit.run_queued(identity=kit.worker_b) is Outcome.COMPLETED
        return a.finish(), kit.seqs()

    (outcome_on, seqs_on), (outcome_off, seqs_off) = (
        play(HEAD.with_flags(kb5_persist_before_renewal=True)),
        play(HEAD),
    )

    assert outcome_on is Outcome.LEASE_LOST and _duplicates(seqs_on) == [2]
    assert outcome_off is Outcome.LEASE_LOST and _duplicates(seqs_off) == []


def test_kb6_a_same_second_renewal_is_taken_for_a_lost_lease(new_kit):
    """KB-6 (renewLease trusts MySQL's changed rows). Two boundaries in the same wall-clock second
    (the clock never moves): the healthy worker stops LEASE_LOST, leaving the row RUNNING until
    it expires and is reaped (one requeue consumed)."""

    def play(policy):
        kit = new_kit(policy)
        kit.enqueue()
        outcome = kit.run_queued()
        status = kit.row().status
        kit.expire()
        kit.reap()
        return outcome, status, kit.row().requeue_count

    assert play(HEAD.with_flags(kb6_renew_trusts_changed_rows=True)) == (Outcome.LEASE_LOST, RunStatus.RUNNING, 1)
    assert play(HEAD) == (Outcome.COMPLETED, RunStatus.COMPLETED, 0)


def test_kb7_a_reaped_worker_settles_the_new_owners_running_row(new_kit):
    """KB-7 (worker-path settles not owner-guarded). A's provider call outlives the lease; the
    reaper requeues; B claims and is mid-call; A's call then fails non-retryably and A settles."""

    def play(policy):
        kit = new_kit(policy)
        kit.enqueue()
        a = kit.pause(kit.queued_gen(), kit.req(CallProvider))
        kit.expire()
        kit.reap()
        b = kit.pause(kit.queued_gen(identity=kit.worker_b), kit.req(CallProvider))
        kit.d.fail(kit.req(CallProvider), ProviderAuthenticationError(401))
        outcome_a = a.finish()
        row_while_b_runs = kit.row()
        return outcome_a, row_while_b_runs.status, b.finish()

    assert play(HEAD.with_flags(kb7_worker_settles_unguarded=True)) == (
        Outcome.FAILED,
        RunStatus.FAILED,
        Outcome.LEASE_LOST,
    )
    assert play(HEAD) == (Outcome.LEASE_LOST, RunStatus.RUNNING, Outcome.COMPLETED)


def test_kb8_a_failed_reaper_dispatch_leaves_the_row_queued_forever(new_kit):
    """KB-8 (reaper dispatch failure only logged). T13 succeeds, then the dispatch throws: the row
    stays QUEUED with no message, and the reaper never finds it again."""

    def play(policy):
        kit = new_kit(policy)
        kit.enqueue()
        kit.pause(kit.queued_gen(), kit.req(CallProvider))  # the worker dies mid call
        kit.expire()
        kit.d.fail(kit.req(Dispatch, site="reaper.dispatch"), DispatchError())
        kit.reap()
        kit.d.now += 10_000
        again = kit.reap()
        return kit.row().status, len(kit.d.dispatched), again.requeued + again.dead_lettered

    # the only message ever sent is the enqueue's, consumed by the worker that died
    assert play(HEAD.with_flags(kb8_reaper_dispatch_failure_only_logged=True)) == (RunStatus.QUEUED, 1, 0)
    assert play(HEAD) == (RunStatus.FAILED, 1, 0)


def test_kb9_a_requeued_row_keeps_the_previous_attempts_fence(new_kit):
    """KB-9 (requeue does not clear pending_effect), direct check of the spec: a run reaped mid
    idempotent write (its approved resume segment stalls in the tool) is requeued still fenced,
    so the next attempt is claimed with the previous attempt's fence standing."""

    def play(policy):
        kit = new_kit(policy)
        kit.enqueue(kit.turn("update_page_metadata"))
        kit.run_queued()  # suspends for approval; an enqueued run keeps its payload (C1)
        kit.pause(kit.approve_gen(), kit.req(InvokeTool))  # stamped, then stalls in the tool
        kit.expire()
        assert kit.reap().requeued == 1
        requeued_fence = kit.row().pending_effect
        claimed = []
        kit.d.before(kit.site("run_queued.position"), lambda _r: claimed.append(kit.row().pending_effect))
        kit.run_queued(identity=kit.worker_b)
        return requeued_fence, claimed[0]

    assert play(HEAD.with_flags(kb9_fence_survives_requeue=True)) == ("idempotent_write", "idempotent_write")
    assert play(HEAD) == ("", "")


def test_kb9_an_inherited_non_idempotent_fence_dead_letters_the_next_attempt_despite_budget(new_kit):
    """KB-9, harmful form: a non_idempotent value survives a requeue. A's clock lags the reaper's,
    so A stamps between the reaper's SELECT (fence '') and its T13, whose staleness re-check still
    passes; B's attempt then fails retryably and recovery reads A's fence."""

    def play(policy):
        kit = new_kit(policy)
        kit.enqueue(kit.turn("mcp_write"))
        a = kit.pause(kit.queued_gen(), kit.req(CallProvider))

        def worker_a_stamps_with_a_lagging_clock(_r):
            reaper_now, kit.d.now = kit.d.now, 1_000
            a.advance(kit.req(InvokeTool))
            kit.d.now = reaper_now

        kit.d.now = 3_000
        kit.d.before(kit.site("reaper.requeue"), worker_a_stamps_with_a_lagging_clock)
        assert kit.reap().requeued == 1
        assert a.finish() is Outcome.LEASE_LOST
        kit.d.fail(kit.req(CallProvider), ProviderConnectionError())
        outcome = kit.run_queued(identity=kit.worker_b)
        return outcome, kit.row().termination_reason, kit.row().requeue_count

    assert play(HEAD.with_flags(kb9_fence_survives_requeue=True)) == (
        Outcome.FAILED,
        TerminationReason.NOT_RETRYABLE,
        1,
    )
    assert play(HEAD) == (Outcome.REQUEUED, TerminationReason.NONE, 2)


def test_kb10_an_approved_write_runs_unfenced_and_unleased(new_kit):
    """KB-10 (resume/interactive segments hold no lease; the fence hook needs one). Model requests a
    write → suspend → approve → the resume executes it; abandoned there, the row stays RUNNING with
    lease 0, invisible to the reaper."""

    def play(policy):
        kit = new_kit(policy)
        kit.interactive(kit.turn("create_page_draft"))
        kit.pause(kit.approve_gen(), kit.req(InvokeTool))  # the resume dies inside the write
        at_write = kit.row()
        kit.d.now += 10_000
        kit.reap()
        return (at_write.claimed_by, at_write.lease_expires, at_write.pending_effect), kit.row().status

    assert play(HEAD.with_flags(kb10_unleased_segments=True)) == (("", 0, ""), RunStatus.RUNNING)
    assert play(HEAD) == (("resume:h:1", 1_900, "non_idempotent_write"), RunStatus.FAILED)


@pytest.mark.parametrize("trigger", ["approval_not_recorded", "stale_digest"])
def test_kb12_a_write_turn_executes_without_a_recorded_or_matching_approval(new_kit, trigger):
    """KB-12 (before ADR-132). The approval event insert fails while approving a write turn, or the
    approval names a stale turn: the write executes anyway. At HEAD the run is released."""

    def play(policy):
        kit = new_kit(policy)
        kit.interactive(kit.turn("create_page_draft"))
        digest = kit.digest()
        if trigger == "approval_not_recorded":
            kit.d.fail(kit.event(StepKind.APPROVAL), StoreError())
        else:
            digest = "r1/r0/stale"
        return kit.approve(digest=digest), len(kit.d.landings)

    assert play(HEAD.with_flags(kb12_approval_not_audited=True)) == (Outcome.COMPLETED, 1)
    assert play(HEAD) == (Outcome.AWAITING_APPROVAL, 0)


def test_kb13_an_exhausted_fallback_chain_of_5xx_dead_letters_instead_of_retrying(new_kit):
    """KB-13 (FallbackChainExhausted classified unknown). Every provider of the chain answers 5xx."""

    def play(policy):
        kit = new_kit(policy)
        kit.enqueue()
        chain = FallbackChainExhaustedError((ProviderResponseError(502), ProviderResponseError(503)))
        kit.d.fail(kit.req(CallProvider), chain)
        return kit.run_queued(), kit.row().termination_reason

    assert play(HEAD.with_flags(kb13_fallback_chain_unknown=True)) == (Outcome.FAILED, TerminationReason.NOT_RETRYABLE)
    assert play(HEAD) == (Outcome.REQUEUED, TerminationReason.NONE)


def test_kb11_without_the_payload_less_rule_an_abandoned_interactive_run_is_stranded_queued(new_kit):
    """KB-11 (ADR-141 rule, prevented; flag dead_letter_payloadless off). An abandoned interactive
    segment is requeued without a payload: runQueued refuses it forever."""

    def play(policy):
        kit = new_kit(policy)
        kit.pause(kit.interactive_gen(), kit.req(CallProvider))
        kit.expire()
        kit.reap()
        return kit.row().status, kit.run_queued()

    assert play(HEAD.with_flags(dead_letter_payloadless=False)) == (RunStatus.QUEUED, None)
    assert play(HEAD) == (RunStatus.FAILED, None)
