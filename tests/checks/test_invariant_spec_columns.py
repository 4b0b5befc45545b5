"""The values a statement or an audit step writes (checks/spec_columns.py), on hand-built histories with
near misses."""

from __future__ import annotations

from typing import Any

import pytest
from invariant_histories import INFO, OK, WORKER, History, judge

from checks import Validity
from checks.history import TOOL
from model.statements import NAMES, REQUEUE, REQUEUE_STALE

REQUEUED = "requeued_row_per_spec"
FENCE = "fence_stamps_a_write"
EXECUTION = "audit_step_execution_true"


# ---- requeued_row_per_spec -------------------------------------------------------------------------


def _claimed(b: History, count: int = 0) -> int:
    b.enqueue()
    if count:
        b.rows["r1"]["requeue_count"] = count
    return b.claim()


def _requeue(b: History, number: str = REQUEUE, **changes: Any) -> int:
    row = {"status": "queued", "claimed_by": "", "lease_expires": 0, **changes}
    identity = WORKER if number == REQUEUE else "reaper"
    return b.store(NAMES[number], identity=identity, **row)


@pytest.mark.parametrize("number", [REQUEUE, REQUEUE_STALE])
@pytest.mark.parametrize("count", [0, 1, 2])
def test_a_requeue_that_adds_one_to_the_count_holds(number: str, count: int) -> None:
    b = History()
    _claimed(b, count)
    _requeue(b, number, requeue_count=count + 1)
    verdict = judge(REQUEUED, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


@pytest.mark.parametrize("number", [REQUEUE, REQUEUE_STALE])
@pytest.mark.parametrize(("count", "written"), [(0, 0), (1, 1), (1, 0), (2, 4), (0, 2)])
def test_a_requeue_count_not_one_more_is_a_violation(number: str, count: int, written: int) -> None:
    b = History()
    claim = _claimed(b, count)
    requeue = _requeue(b, number, requeue_count=written)
    verdict = judge(REQUEUED, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (claim, requeue)
    assert f"requeue_count={written} after {count}" in verdict.explanation


@pytest.mark.parametrize(("column", "value"), [("status", "running"), ("claimed_by", WORKER), ("lease_expires", 5)])
def test_a_requeue_that_keeps_the_claim_or_status_is_a_violation(column: str, value: object) -> None:
    b = History()
    _claimed(b)
    _requeue(b, requeue_count=1, **{column: value})
    verdict = judge(REQUEUED, b)
    assert verdict.valid is Validity.INVALID and f"{column}={value!r}" in verdict.explanation


def test_near_miss_a_requeue_that_keeps_the_fence_is_not_this_invariants() -> None:
    b = History()
    _claimed(b)
    b.stamp("idempotent_write")
    _requeue(b, REQUEUE_STALE, requeue_count=1, pending_effect="idempotent_write")
    assert judge(REQUEUED, b).valid is Validity.VALID


def test_near_miss_an_unmatched_requeue_is_not_judged() -> None:
    b = History()
    _claimed(b)
    b.store(NAMES[REQUEUE], matched=False)
    verdict = judge(REQUEUED, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 0


def test_near_miss_each_requeue_counts_from_the_row_just_before_it() -> None:
    b = History()
    _claimed(b)
    _requeue(b, requeue_count=1)
    b.claim()
    _requeue(b, REQUEUE_STALE, requeue_count=2)
    verdict = judge(REQUEUED, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 2


# ---- fence_stamps_a_write --------------------------------------------------------------------------


@pytest.mark.parametrize("effect", ["idempotent_write", "non_idempotent_write", ""])
def test_a_stamp_of_a_write_effect_or_a_clear_holds(effect: str) -> None:
    b = History()
    _claimed(b)
    b.stamp(effect)
    verdict = judge(FENCE, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


@pytest.mark.parametrize("effect", ["read_only", "unknown", "write"])
def test_a_stamp_of_anything_else_is_a_violation(effect: str) -> None:
    b = History()
    _claimed(b)
    stamp = b.stamp(effect)
    verdict = judge(FENCE, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (stamp,)
    assert repr(effect) in verdict.explanation


def test_near_miss_a_refused_stamp_is_not_judged() -> None:
    b = History()
    _claimed(b)
    b.store(NAMES["T5"], matched=False)
    verdict = judge(FENCE, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 0


# ---- audit_step_execution_true ---------------------------------------------------------------------


def test_a_tool_step_naming_the_execution_the_server_returned_holds() -> None:
    b = History()
    _claimed(b)
    b.event(seq=0, kind="request")
    b.write("c1", "non_idempotent_write", execution=7, seq=1)
    verdict = judge(EXECUTION, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 2


@pytest.mark.parametrize("kind", ["request", "llm", "context", "approval", "input", "dropped"])
@pytest.mark.parametrize("execution", [1, -1])
def test_a_step_of_another_kind_naming_an_execution_is_a_violation(kind: str, execution: int) -> None:
    b = History()
    _claimed(b)
    b.write("c1", "idempotent_write", execution=1, seq=0)
    event = b.event(seq=1, kind=kind, execution=execution)
    verdict = judge(EXECUTION, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (event,)
    assert "which is not a tool step" in verdict.explanation


@pytest.mark.parametrize("execution", [2, -1])
def test_a_tool_step_naming_an_execution_never_performed_is_a_violation(execution: int) -> None:
    b = History()
    _claimed(b)
    b.tool("c1", "read_only")
    b.tool_done(execution=1)
    event = b.event(seq=0, call="c1", execution=execution, true_effect="read_only")
    verdict = judge(EXECUTION, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (event,)


def test_near_miss_an_execution_of_another_run_does_not_count() -> None:
    b = History()
    _claimed(b)
    b.tool("c1", "read_only", run="r2")
    b.tool_done(execution=3, run="r2")
    event = b.event(seq=0, call="c1", execution=3, true_effect="read_only")
    verdict = judge(EXECUTION, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (event,)


def test_near_miss_a_refused_call_names_no_execution() -> None:
    b = History()
    _claimed(b)
    b.event(seq=0, call="c1", execution=0, true_effect="unknown")
    verdict = judge(EXECUTION, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_near_miss_a_crash_after_landing_or_a_replay_performed_the_execution() -> None:
    b = History()
    _claimed(b)
    b.tool("c1", "non_idempotent_write")
    b.add(TOOL, INFO, crashed=True, execution=4)
    b.tool("c2", "idempotent_write")
    b.add(TOOL, OK, execution=5, landed=False, replayed=True)
    b.event(seq=0, call="c1", execution=4, true_effect="non_idempotent_write")
    b.event(seq=1, call="c2", execution=5, true_effect="idempotent_write")
    verdict = judge(EXECUTION, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 2


def test_near_miss_an_execution_reported_only_after_the_step_does_not_count() -> None:
    b = History()
    _claimed(b)
    event = b.event(seq=0, call="c1", execution=1, true_effect="read_only")
    b.tool("c1", "read_only")
    b.tool_done(execution=1)
    verdict = judge(EXECUTION, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (event,)
