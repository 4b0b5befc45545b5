"""Write-execution invariants: no_retry_after_failed_write_audit, non_idempotent_at_most_once."""

from __future__ import annotations

from invariant_histories import FAIL, INFO, History, judge

from checks import Validity

NON_IDEM = "non_idempotent_write"
IDEM = "idempotent_write"


def _failed_audit(b: History, effect: str = NON_IDEM, call: str = "c1") -> int:
    """A write of ``call`` lands and its audit insert fails; returns the failed event's index."""
    b.start()
    b.stamp(effect)
    b.tool(call, effect)
    b.landing(call, effect, execution=1)
    b.tool_done(execution=1)
    return b.event(FAIL, call=call, execution=1, true_effect=effect)


# -- no_retry_after_failed_write_audit ---------------------------------------------------


def test_retry_that_executes_after_a_failed_non_idempotent_audit_is_a_violation() -> None:
    b = History()
    event = _failed_audit(b)
    retry = b.tool("c1", NON_IDEM)
    done = b.tool_done(execution=2)
    verdict = judge("no_retry_after_failed_write_audit", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (event, retry, done)


def test_retry_that_lands_after_a_failed_non_idempotent_audit_names_the_landing() -> None:
    b = History()
    event = _failed_audit(b)
    retry = b.tool("c1", NON_IDEM)
    landing = b.landing("c1", NON_IDEM, execution=2)
    b.tool_done(execution=2)
    assert judge("no_retry_after_failed_write_audit", b).witness == (event, retry, landing)


def test_retry_answered_by_a_replay_is_allowed() -> None:
    b = History()
    _failed_audit(b)
    b.tool("c1", NON_IDEM)
    b.tool_done(execution=1, replayed=True)
    assert judge("no_retry_after_failed_write_audit", b).valid is Validity.VALID


def test_failed_retry_counts_as_an_execution() -> None:
    b = History()
    event = _failed_audit(b)
    retry = b.tool("c1", NON_IDEM)
    done = b.tool_done(FAIL)
    assert judge("no_retry_after_failed_write_audit", b).witness == (event, retry, done)


def test_crashed_retry_without_a_landing_is_unknown() -> None:
    b = History()
    event = _failed_audit(b)
    retry = b.tool("c1", NON_IDEM)
    b.tool_done(INFO)
    verdict = judge("no_retry_after_failed_write_audit", b)
    assert verdict.valid is Validity.UNKNOWN
    assert verdict.witness == (event, retry)


def test_idempotent_write_may_be_retried_after_its_audit_failed() -> None:
    b = History()
    _failed_audit(b, IDEM)
    b.tool("c1", IDEM)
    b.tool_done(execution=2)
    assert judge("no_retry_after_failed_write_audit", b).valid is Validity.VALID


def test_other_calls_of_the_run_may_execute_after_a_failed_audit() -> None:
    b = History()
    _failed_audit(b)
    b.tool("c2", NON_IDEM)
    b.tool_done(execution=2)
    assert judge("no_retry_after_failed_write_audit", b).valid is Validity.VALID


def test_same_call_of_another_run_is_not_blocked() -> None:
    b = History()
    _failed_audit(b)
    b.tool("c1", NON_IDEM, run="r2")
    b.tool_done(execution=3, run="r2")
    assert judge("no_retry_after_failed_write_audit", b).valid is Validity.VALID


# -- non_idempotent_at_most_once ---------------------------------------------------------


def test_non_idempotent_call_landing_twice_is_a_violation() -> None:
    b = History()
    first = b.landing("c1", NON_IDEM, execution=1)
    second = b.landing("c1", NON_IDEM, execution=2)
    verdict = judge("non_idempotent_at_most_once", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (first, second)


def test_distinct_non_idempotent_calls_each_land_once() -> None:
    b = History()
    b.landing("c1", NON_IDEM, execution=1)
    b.landing("c2", NON_IDEM, execution=2)
    b.landing("c1", NON_IDEM, execution=3, run="r2")
    assert judge("non_idempotent_at_most_once", b).valid is Validity.VALID


def test_idempotent_calls_may_land_twice() -> None:
    b = History()
    b.landing("c1", IDEM, execution=1)
    b.landing("c1", IDEM, execution=2)
    assert judge("non_idempotent_at_most_once", b).valid is Validity.VALID
