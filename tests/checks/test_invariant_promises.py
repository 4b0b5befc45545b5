"""ADR promises with an invariant of their own: lost_lease_stops (ADR-104),
cancel_observed_at_boundary (ADR-103) and lease_within_bound, on hand-built histories that pass and
that fail."""

from __future__ import annotations

import pytest
from invariant_histories import FAIL, INFO, INVOKE, History, judge

from checks import Validity
from checks.history import PROVIDER, TOOL
from model.statements import CANCEL, FINISH_RUN, MARK_PENDING_EFFECT, NAMES, RENEW_LEASE

STOPS = "lost_lease_stops"
CANCEL_OBSERVED = "cancel_observed_at_boundary"
BOUND = "lease_within_bound"


def _running(b: History) -> None:
    b.enqueue()
    b.segment("run_queued")
    b.claim()


# -- a lost lease stops ---------------------------------------------------------------------------


def test_a_segment_that_stops_after_its_renewal_was_refused_holds() -> None:
    b = History()
    _running(b)
    b.store(NAMES[RENEW_LEASE], matched=False)
    b.segment_done(outcome="lease_lost")
    verdict = judge(STOPS, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_a_settle_after_a_refused_fence_stamp_is_a_violation() -> None:
    b = History()
    _running(b)
    refused = b.store(NAMES[MARK_PENDING_EFFECT], matched=False)
    settle = b.add("store", INVOKE, transition=NAMES[FINISH_RUN], identity="worker:h:1")
    assert judge(STOPS, b).witness == (refused, settle)


def test_a_tool_call_after_a_failed_renewal_is_a_violation() -> None:
    b = History()
    _running(b)
    failed = b.store_fail(NAMES[RENEW_LEASE])
    call = b.add(TOOL, INVOKE, call="c1", tool="t", effect="read_only", true_effect="read_only", identity="x")
    assert judge(STOPS, b).witness == (failed, call)


def test_a_renewal_that_matched_is_no_lost_lease() -> None:
    b = History()
    _running(b)
    b.renew()
    b.add(PROVIDER, INVOKE, round=1, synthesis=False)
    assert judge(STOPS, b).judged == 0


# -- cancellation at the boundary -----------------------------------------------------------------


def test_a_cancel_seen_at_the_boundary_persists_the_step_and_returns_cancelled() -> None:
    b = History()
    _running(b)
    b.store(NAMES[CANCEL], identity="user", process="user", status="cancelled")
    b.probe("cancelled")
    b.event(INVOKE, kind="request")
    b.segment_done(outcome="cancelled")
    verdict = judge(CANCEL_OBSERVED, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_a_provider_call_after_the_cancel_was_seen_is_a_violation() -> None:
    b = History()
    _running(b)
    b.store(NAMES[CANCEL], identity="user", process="user", status="cancelled")
    probe = b.probe("cancelled")
    call = b.add(PROVIDER, INVOKE, round=1, synthesis=False)
    assert judge(CANCEL_OBSERVED, b).witness == (probe, call)


def test_a_boundary_that_skips_persisting_its_step_is_a_violation() -> None:
    """ADR-103: "the boundary step is still persisted"."""
    b = History()
    _running(b)
    b.store(NAMES[CANCEL], identity="user", process="user", status="cancelled")
    b.probe("cancelled")
    b.segment_done(outcome="cancelled")
    assert "not the step's insert" in judge(CANCEL_OBSERVED, b).explanation


def test_a_cancel_seen_but_reported_as_a_lost_lease_is_a_violation() -> None:
    """The write step's insert failed: fail-closed wins over the cancel (spec 3.3 step 3)."""
    b = History()
    _running(b)
    b.store(NAMES[CANCEL], identity="user", process="user", status="cancelled")
    probe = b.probe("cancelled")
    insert = b.event(INVOKE, call="c1", execution=1, true_effect="non_idempotent_write")
    b.event(FAIL, call="c1", execution=1, true_effect="non_idempotent_write")
    b.store(NAMES[FINISH_RUN], matched=False)
    done = b.segment_done(outcome="lease_lost")
    assert judge(CANCEL_OBSERVED, b).witness == (probe, insert, done)


def test_a_process_that_died_right_after_the_read_is_not_judged() -> None:
    b = History()
    _running(b)
    b.store(NAMES[CANCEL], identity="user", process="user", status="cancelled")
    b.probe("cancelled")
    b.segment_done(INFO)
    assert judge(CANCEL_OBSERVED, b).judged == 0


def test_a_probe_that_read_the_run_running_is_not_a_case() -> None:
    b = History()
    _running(b)
    b.probe("running")
    b.add(PROVIDER, INVOKE, round=1, synthesis=False)
    assert judge(CANCEL_OBSERVED, b).judged == 0


# -- leases within their bound --------------------------------------------------------------------


def test_a_renewal_to_the_clock_plus_the_lease_holds() -> None:
    b = History()
    b.phase()
    _running(b)
    b.store(NAMES[RENEW_LEASE], clock_s=100, lease_expires=1000)
    verdict = judge(BOUND, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_a_renewal_past_the_clock_plus_the_lease_is_a_violation() -> None:
    b = History()
    b.phase()
    _running(b)
    renewal = b.store(NAMES[RENEW_LEASE], clock_s=100, lease_expires=1001)
    assert judge(BOUND, b).witness == (renewal,)


def test_a_fence_stamp_may_reach_the_declared_deadline_but_a_renewal_may_not() -> None:
    stamp, renewal = History(), History()
    for b, transition in ((stamp, NAMES[MARK_PENDING_EFFECT]), (renewal, NAMES[RENEW_LEASE])):
        b.phase(deadline_s=2000)
        _running(b)
        b.store(transition, clock_s=100, lease_expires=2100, pending_effect="idempotent_write")
    assert judge(BOUND, stamp).valid is Validity.VALID
    assert judge(BOUND, renewal).valid is Validity.INVALID


@pytest.mark.parametrize(("lease_after_epoch_s", "valid"), [(1000, Validity.VALID), (1001, Validity.INVALID)])
def test_a_lease_and_a_clock_reading_both_in_unix_seconds(lease_after_epoch_s: int, valid: Validity) -> None:
    """The world's clock_s and lease_expires are both epoch + clock: the bound compares them directly."""
    b = History()
    b.phase(epoch_s=1_700_000_000)
    _running(b)
    b.store(NAMES[RENEW_LEASE], clock_s=1_700_000_100, lease_expires=1_700_000_000 + lease_after_epoch_s)
    verdict = judge(BOUND, b)
    assert verdict.valid is valid and verdict.judged == 1


def test_a_statement_without_a_clock_reading_is_not_judged() -> None:
    b = History()
    _running(b)
    b.store(NAMES[RENEW_LEASE], lease_expires=10**9)
    assert judge(BOUND, b).judged == 0
