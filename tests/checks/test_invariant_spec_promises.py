"""checks/spec_promises.py on hand-built histories: the lease is the spec's 900 s, the requeue backoff is
the spec's, and no entry point lets escape an exception the spec does not let escape it."""

from __future__ import annotations

import pytest
from invariant_histories import FAIL, INFO, INVOKE, OK, WORKER, History, judge

from checks import Validity
from checks.history import DISPATCH, EVENT, SEGMENT
from checks.spec_promises import SPEC_LEASE_S, spec_backoff_ms
from model.statements import CLAIM_QUEUED, FINISH_RUN, MARK_PENDING_EFFECT, NAMES, RENEW_LEASE, REQUEUE, REQUEUE_STALE


def verdict(name: str, b: History) -> Validity:
    return judge(name, b).valid


# ---- lease_is_the_specs ---------------------------------------------------------------------------


def claim_with_lease(lease: int, clock: int = 1_000) -> History:
    b = History()
    b.enqueue()
    b.store(NAMES[CLAIM_QUEUED], status="running", claimed_by=WORKER, lease_expires=lease, clock_s=clock)
    return b


def test_a_claim_that_leases_the_specs_900_seconds_holds() -> None:
    assert verdict("lease_is_the_specs", claim_with_lease(1_000 + SPEC_LEASE_S)) is Validity.VALID


@pytest.mark.parametrize("lease", [1_000 + SPEC_LEASE_S + 1, 1_000 + SPEC_LEASE_S - 1, 1_000 + 2 * SPEC_LEASE_S])
def test_a_lease_longer_or_shorter_than_the_specs_is_a_violation(lease: int) -> None:
    found = judge("lease_is_the_specs", claim_with_lease(lease))
    assert found.valid is Validity.INVALID
    assert "900" in found.explanation


def test_a_renewal_that_clears_the_lease_is_not_judged() -> None:
    b = claim_with_lease(1_000 + SPEC_LEASE_S)
    b.store(NAMES[RENEW_LEASE], lease_expires=0, clock_s=1_010)
    assert judge("lease_is_the_specs", b).judged == 1


def test_a_renewal_is_judged_on_its_own_clock_reading() -> None:
    b = claim_with_lease(1_000 + SPEC_LEASE_S)
    b.store(NAMES[RENEW_LEASE], lease_expires=1_010 + SPEC_LEASE_S, clock_s=1_010)
    assert verdict("lease_is_the_specs", b) is Validity.VALID
    b.store(NAMES[MARK_PENDING_EFFECT], pending_effect="non_idempotent_write", lease_expires=1_010 + SPEC_LEASE_S,
            clock_s=1_020)  # fmt: skip
    assert verdict("lease_is_the_specs", b) is Validity.INVALID


def test_a_declared_operation_deadline_leaves_the_lease_to_lease_within_bound() -> None:
    b = History()
    b.phase(deadline_s=1_800)
    b.store(NAMES[CLAIM_QUEUED], status="running", lease_expires=9_999, clock_s=1_000)
    assert verdict("lease_is_the_specs", b) is Validity.UNKNOWN


# ---- requeue_backoff_per_spec ---------------------------------------------------------------------


def test_the_spec_backoff() -> None:
    assert [spec_backoff_ms(c) for c in range(6)] == [30_000, 60_000, 120_000, 240_000, 480_000, 600_000]


def requeue_then_dispatch(delay_ms: int, count: int = 1, transition: str = NAMES[REQUEUE]) -> History:
    b = History()
    b.claim()
    b.store(transition, status="queued", requeue_count=count, claimed_by="", lease_expires=0)
    b.add(DISPATCH, INVOKE, delay_ms=delay_ms, site="anything")
    return b


def test_an_owner_requeues_wakeup_carries_the_specs_backoff() -> None:
    assert verdict("requeue_backoff_per_spec", requeue_then_dispatch(30_000)) is Validity.VALID
    assert verdict("requeue_backoff_per_spec", requeue_then_dispatch(120_000, count=3)) is Validity.VALID


@pytest.mark.parametrize("delay_ms", [0, 60_000, 30_001])
def test_another_backoff_after_an_owner_requeue_is_a_violation(delay_ms: int) -> None:
    found = judge("requeue_backoff_per_spec", requeue_then_dispatch(delay_ms))
    assert found.valid is Validity.INVALID
    assert "30000 ms" in found.explanation


def test_the_reapers_requeue_dispatches_without_delay() -> None:
    assert verdict("requeue_backoff_per_spec", requeue_then_dispatch(0, transition=NAMES[REQUEUE_STALE])) is (
        Validity.VALID
    )
    assert verdict("requeue_backoff_per_spec", requeue_then_dispatch(30_000, transition=NAMES[REQUEUE_STALE])) is (
        Validity.INVALID
    )


def test_a_dispatch_by_another_process_than_the_requeues_is_not_judged() -> None:
    b = History()
    b.claim()
    b.store(NAMES[REQUEUE], status="queued", requeue_count=1)
    b.add(DISPATCH, INVOKE, process="reaper", delay_ms=5, site="x")
    assert judge("requeue_backoff_per_spec", b).judged == 0


# ---- entry_points_throw_as_specified ----------------------------------------------------------------


def failed_segment(entry: str, error: str) -> History:
    b = History()
    b.segment(entry)
    b.add(SEGMENT, FAIL, error=error)
    return b


@pytest.mark.parametrize(
    ("entry", "error"),
    [("approve", "RunAlreadyResumingException"), ("submit_input", "RunAlreadyResumingException"),
     ("enqueue", "RunEnqueueFailedException")],
)  # fmt: skip
def test_the_exceptions_the_spec_lets_escape_hold(entry: str, error: str) -> None:
    assert verdict("entry_points_throw_as_specified", failed_segment(entry, error)) is Validity.VALID


@pytest.mark.parametrize(
    ("entry", "error"),
    [("run_queued", "StoreError"), ("run_queued", "RunEnqueueFailedException"), ("approve", "StoreError"),
     ("cancel", "StoreError"), ("reap", "StoreError"), ("enqueue", "StoreError")],
)  # fmt: skip
def test_any_other_escape_is_a_violation(entry: str, error: str) -> None:
    found = judge("entry_points_throw_as_specified", failed_segment(entry, error))
    assert found.valid is Validity.INVALID
    assert error in found.explanation


def test_a_crashed_or_returning_segment_holds() -> None:
    b = History()
    b.segment("run_queued")
    b.segment_done(OK, outcome="completed")
    b.segment("run_queued", process="worker:h:7")
    b.add(SEGMENT, INFO, process="worker:h:7", crashed=True)
    assert verdict("entry_points_throw_as_specified", b) is Validity.VALID


def test_c4_a_store_error_right_after_the_claim_escapes() -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    b.claim()
    b.store_fail(NAMES[RENEW_LEASE])
    b.add(SEGMENT, FAIL, error="StoreError")
    assert verdict("entry_points_throw_as_specified", b) is Validity.VALID


def test_a_store_error_later_than_right_after_the_claim_is_a_violation() -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    b.claim()
    b.store(NAMES[RENEW_LEASE], lease_expires=2_000)
    b.store_fail(NAMES[FINISH_RUN])
    b.add(SEGMENT, FAIL, error="StoreError")
    assert verdict("entry_points_throw_as_specified", b) is Validity.INVALID


def test_a_failed_claim_that_throws_is_a_violation() -> None:
    """Spec T3: a store error on the claim returns null."""
    b = History()
    b.enqueue()
    b.segment("run_queued")
    b.store_fail(NAMES[CLAIM_QUEUED])
    b.add(SEGMENT, FAIL, error="StoreError")
    assert verdict("entry_points_throw_as_specified", b) is Validity.INVALID


# ---- event_sequence_without_gap -------------------------------------------------------------------


def events(*seqs: int, run: str = "r1") -> History:
    b = History()
    for seq in seqs:
        b.add(EVENT, OK, run=run, seq=seq, kind="llm", round=1)
    return b


def test_a_stream_from_zero_without_gap_holds() -> None:
    assert verdict("event_sequence_without_gap", events(0, 1, 2)) is Validity.VALID


def test_a_repeated_sequence_is_not_a_gap() -> None:
    """A zombie's repeat is unique_event_sequence's."""
    assert verdict("event_sequence_without_gap", events(0, 1, 1, 2)) is Validity.VALID


@pytest.mark.parametrize("seqs", [(1,), (0, 2), (0, 1, 3)])
def test_a_sequence_past_one_more_than_the_highest_is_a_violation(seqs: tuple[int, ...]) -> None:
    found = judge("event_sequence_without_gap", events(*seqs))
    assert found.valid is Validity.INVALID
    assert "gap" in found.explanation


def test_a_failed_insert_holds_no_sequence() -> None:
    b = events(0)
    b.add(EVENT, FAIL, seq=1, kind="llm", round=1, error="StoreError")
    b.add(EVENT, OK, seq=1, kind="llm", round=1)
    assert verdict("event_sequence_without_gap", b) is Validity.VALID


def test_each_run_has_its_own_stream() -> None:
    b = events(0, 1)
    b.add(EVENT, OK, run="r2", seq=0, kind="llm", round=1)
    assert verdict("event_sequence_without_gap", b) is Validity.VALID


def test_an_absurd_lease_is_a_violation_not_a_checker_error() -> None:
    """A mutant's ``now ** LEASE_S``: an integer of thousands of digits."""
    found = judge("lease_is_the_specs", claim_with_lease(1_000**900))
    assert found.valid is Validity.INVALID
    assert "bit number" in found.explanation


def stalled_requeue(delay_ms: int, *, reread: bool = True) -> History:
    """The recovery re-reads the row at count 0, the reaper requeues it and the worker's identity claims it
    again (count 1), then the worker's stalled owner requeue lands (count 2) and its wake-up goes out."""
    b = History()
    b.claim()
    if reread:
        b.find()  # recovery.reread: the row holds requeue_count 0
    b.store(NAMES[REQUEUE_STALE], process="reaper", identity="reaper", status="queued", requeue_count=1,
            claimed_by="", lease_expires=0)  # fmt: skip
    b.claim()
    b.store(NAMES[REQUEUE], status="queued", requeue_count=2, claimed_by="", lease_expires=0)
    b.add(DISPATCH, INVOKE, delay_ms=delay_ms, site="recovery.dispatch")
    return b


def test_a_stalled_owner_requeue_may_carry_the_backoff_of_the_count_its_reread_saw() -> None:
    """Spec 1.3's c is the count *read* before the requeue; the rows the store held from that read to the
    requeue are what the read may have returned (here 0 or 1), whatever the requeue then incremented."""
    assert verdict("requeue_backoff_per_spec", stalled_requeue(30_000)) is Validity.VALID
    assert verdict("requeue_backoff_per_spec", stalled_requeue(60_000)) is Validity.VALID


def test_a_stalled_owner_requeue_with_a_backoff_no_count_read_gives_is_a_violation() -> None:
    found = judge("requeue_backoff_per_spec", stalled_requeue(240_000))
    assert found.valid is Validity.INVALID
    assert "30000 or 60000 ms" in found.explanation


def test_without_a_reread_the_count_the_requeue_incremented_decides() -> None:
    assert verdict("requeue_backoff_per_spec", stalled_requeue(30_000, reread=False)) is Validity.INVALID
    assert verdict("requeue_backoff_per_spec", stalled_requeue(60_000, reread=False)) is Validity.VALID
