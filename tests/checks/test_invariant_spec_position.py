"""position_reresolved_after_claim (checks/spec_position.py): a won claim is followed by a fresh read
of the row and a MAX(sequence) probe, on hand-built histories with near misses."""

from __future__ import annotations

import pytest
from invariant_histories import FAIL, OK, WORKER, History, judge

from checks import Validity
from checks.history import EVENT, READ, OpType

NAME = "position_reresolved_after_claim"
RESUMER = "resume:h:3"


def _read(b: History, what: str, *, type_: OpType = OK, result: object = "running", process: str = WORKER) -> int:
    if type_ is FAIL:
        return b.add(READ, FAIL, process=process, what=what, site="", error="StoreError")
    return b.add(READ, OK, process=process, what=what, site="", result=result)


def _step(b: History, *, process: str = WORKER, kind: str = "approval") -> int:
    return b.add(EVENT, OpType.INVOKE, process=process, seq=3, kind=kind, round=1, identity=process)


def _resume(b: History, *, entry: str = "approve", matched: bool = True) -> int:
    """An approve (or submit_input) segment: its pre-claim read and probe, then its T10 claim."""
    b.enqueue()
    b.store("T9 suspendRun", status="waiting_for_approval", claimed_by="", lease_expires=0, has_state=True)
    b.segment(entry, process=RESUMER)
    _read(b, "FindRun", result="waiting_for_approval", process=RESUMER)
    _read(b, "MaxSequence", result=2, process=RESUMER)
    return b.store("T10 claimForResume", identity=RESUMER, process=RESUMER, matched=matched, status="running",
                   claimed_by=RESUMER)  # fmt: skip


def _worker(b: History) -> int:
    b.enqueue()
    b.segment("run_queued")
    _read(b, "FindRun", result="queued")
    return b.claim()


@pytest.mark.parametrize("entry", ["approve", "submit_input"])
def test_a_resume_that_reads_and_probes_after_its_claim_holds(entry: str) -> None:
    b = History()
    _resume(b, entry=entry)
    _read(b, "FindRun", process=RESUMER)
    _read(b, "MaxSequence", result=2, process=RESUMER)
    _step(b, process=RESUMER)
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID and verdict.explanation.startswith("1 ")


def test_a_resume_that_keeps_its_pre_claim_probe_is_a_violation() -> None:
    """The resume.py:74 mutant (and KB-2's flag): the approval step right after the claim."""
    b = History()
    claim = _resume(b)
    step = _step(b, process=RESUMER)
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (claim, step)
    assert "without reading the row afresh" in verdict.explanation


def test_a_fresh_read_without_a_probe_is_a_violation() -> None:
    b = History()
    claim = _resume(b)
    _read(b, "FindRun", process=RESUMER)
    step = _step(b, process=RESUMER)
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (claim, step)
    assert "without probing" in verdict.explanation


def test_a_worker_that_reads_and_probes_after_its_claim_holds() -> None:
    b = History()
    _worker(b)
    _read(b, "FindRun")
    _read(b, "MaxSequence", result=0)
    _step(b, kind="dropped")
    assert judge(NAME, b).valid is Validity.VALID


def test_a_worker_that_steps_right_after_its_claim_is_a_violation() -> None:
    b = History()
    claim = _worker(b)
    step = _step(b, kind="dropped")
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (claim, step)


def test_near_miss_a_failed_fresh_read_settles_without_a_probe() -> None:
    """Head: the post-claim read failed, so the segment settles FAILED (RunPositionException) at once."""
    b = History()
    _resume(b)
    _read(b, "FindRun", type_=FAIL, process=RESUMER)
    b.settle("failed", identity=RESUMER)
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID and verdict.explanation.startswith("1 ")


def test_near_miss_a_fresh_read_that_found_no_row_needs_no_probe() -> None:
    b = History()
    _resume(b)
    _read(b, "FindRun", result=None, process=RESUMER)
    b.settle("failed", identity=RESUMER)
    assert judge(NAME, b).valid is Validity.VALID


def test_near_miss_a_lost_claim_obliges_nothing() -> None:
    b = History()
    _resume(b, matched=False)
    assert judge(NAME, b).explanation.startswith("0 ")


def test_near_miss_a_crash_right_after_the_claim_is_not_judged_a_violation() -> None:
    b = History()
    _resume(b)
    b.segment_done(OpType.INFO, process=RESUMER)
    assert judge(NAME, b).valid is Validity.VALID
