"""Event sequence allocation across segments (spec 1.2, T15, ADR-101/104).

Peer: AgentRuntimeTest "Sequences" bullets, plus the spec's starting points for each
entry point.
"""

from __future__ import annotations

from model.failures import ProviderConnectionError
from model.requests import CallProvider
from model.transitions import ClaimForResume
from model.vocab import Outcome, StepKind


def _first_event_of_second_attempt(kit):
    return kit.events()[kit.kinds().index("dropped", 1)]


def test_a_requeued_run_resumes_its_event_stream_at_max_sequence_plus_one(kit):
    """Peer: AgentRuntimeTest::aRequeuedRunResumesItsEventStreamAtMaxSequencePlusOne — the first
    attempt writes 0..5 and fails retryably; the next attempt's first event is 6."""
    kit.enqueue(kit.turn("search", "lookup"))
    kit.d.fail(kit.req(CallProvider), ProviderConnectionError(), skip=1)
    assert kit.run_queued() is Outcome.REQUEUED
    assert kit.seqs() == [0, 1, 2, 3, 4, 5]

    assert kit.run_queued(identity=kit.worker_b) is Outcome.COMPLETED

    assert _first_event_of_second_attempt(kit).sequence == 6
    assert kit.seqs() == list(range(len(kit.seqs())))


def test_a_claimed_queued_run_reads_its_position_after_the_claim(kit):
    """Spec 1.2: claimed queued run → MAX(sequence)+1 read from a fresh row after the claim; an
    event appended between the pre-check and the claim is not overwritten."""
    kit.enqueue()
    kit.add_events(3)  # 0..2 already in the stream
    kit.d.before(kit.site("run_queued.claim"), lambda _r: kit.add_events(2))  # 3, 4 land meanwhile

    kit.run_queued()

    assert kit.seqs() == [0, 1, 2, 3, 4, 5, 6, 7]


def test_approve_claims_records_the_decision_and_resumes(kit):
    """Peer: AgentRuntimeTest::approveClaimsRecordsTheDecisionAndResumes — the approval event sits
    at MAX+1 and the resumed steps follow it, under the resume claim."""
    kit.interactive(kit.turn("create_page_draft"))
    top = max(kit.seqs())

    assert kit.approve() is Outcome.COMPLETED

    approval = next(e for e in kit.events() if e.step.kind is StepKind.APPROVAL)
    assert approval.sequence == top + 1
    assert kit.seqs() == list(range(len(kit.seqs())))
    (claim,) = kit.updates(ClaimForResume)
    assert claim.identity == kit.resume_id


def test_approve_resolves_the_event_position_again_after_winning_the_claim(kit):
    """Peer: AgentRuntimeTest::approveResolvesTheEventPositionAgainAfterWinningTheClaim — probe reads
    MAX 4, events up to 9 land before the claim; the approval is written at 10."""
    kit.interactive(kit.turn("create_page_draft"))
    kit.add_events(4 - max(kit.seqs()))
    assert max(kit.seqs()) == 4
    kit.d.before(kit.update(ClaimForResume), lambda _r: kit.add_events(5))

    kit.approve()

    approval = next(e for e in kit.events() if e.step.kind is StepKind.APPROVAL)
    assert approval.sequence == 10


def test_a_resume_continues_at_max_plus_one_even_across_a_gap(kit):
    """Spec 1.2 (ADR-101): the position is MAX+1, not COUNT — a stream with a gap does not make
    the resume reuse a sequence."""
    kit.interactive(kit.turn("create_page_draft"))
    kit.add_events(1, start=9)  # a stray event at 9 leaves a gap

    kit.approve()

    assert len(kit.seqs()) == len(set(kit.seqs()))
    assert next(e for e in kit.events() if e.step.kind is StepKind.APPROVAL).sequence == 10


def test_submit_input_records_the_input_event_at_max_plus_one(kit):
    """Spec 1.2: recordInput (void, best-effort) writes the input event at the resume position."""
    kit.interactive(kit.turn("ask_user"))
    top = max(kit.seqs())

    assert kit.submit_input() is Outcome.COMPLETED

    assert next(e for e in kit.events() if e.step.kind is StepKind.INPUT).sequence == top + 1
