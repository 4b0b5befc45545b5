"""Resume invariant: approved_write_turn_recorded (ADR-132; KB-12 is its historic defect)."""

from __future__ import annotations

from invariant_histories import FAIL, INFO, LEASE, History, judge

from checks import Validity
from model.statements import CLAIM_FOR_RESUME, NAMES, SUSPEND_RUN

NAME = "approved_write_turn_recorded"
RESUME = "resume:h:3"
NON_IDEM = "non_idempotent_write"
IDEM = "idempotent_write"


def _suspended(b: History) -> None:
    """An interactive run that suspended for approval of its write turn."""
    b.start()
    b.event(seq=0, kind="llm")
    b.store(NAMES[SUSPEND_RUN], status="waiting_for_approval", claimed_by="", lease_expires=0, has_state=True)


def _approve(b: History, *, process: str = RESUME, entry: str = "approve") -> int:
    """An approve segment that claimed the row (T10); the decision is recorded by the caller."""
    segment = b.segment(entry, process=process)
    b.store(NAMES[CLAIM_FOR_RESUME], identity=process, status="running", claimed_by=process, lease_expires=LEASE)
    return segment


def _write(b: History, call: str, effect: str, *, identity: str = RESUME, seq: int = 2) -> int:
    """A fenced write executed by the resume segment; returns the tool invoke."""
    b.stamp(effect, identity=identity)
    invoke = b.tool(call, effect, identity=identity)
    b.landing(call, effect, identity=identity)
    b.tool_done(process=identity)
    b.event(seq=seq, call=call, execution=1, true_effect=effect, identity=identity)
    b.stamp("", identity=identity)
    return invoke


def test_a_write_after_its_recorded_approval_is_valid() -> None:
    b = History()
    _suspended(b)
    _approve(b)
    b.event(seq=1, kind="approval", identity=RESUME)
    _write(b, "c1", NON_IDEM)
    b.provider(process=RESUME, round_no=2)
    b.segment_done(process=RESUME)
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("1 ")


def test_a_write_whose_approval_insert_failed_is_a_violation() -> None:
    """KB-12: the approval event could not be stored, yet the approved write turn executed."""
    b = History()
    _suspended(b)
    segment = _approve(b)
    b.event(FAIL, seq=1, kind="approval", identity=RESUME)
    invoke = _write(b, "c1", IDEM)
    b.segment_done(process=RESUME)
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (segment, invoke)
    assert "no approval event" in verdict.explanation


def test_a_write_before_the_approval_is_recorded_is_a_violation() -> None:
    b = History()
    _suspended(b)
    segment = _approve(b)
    invoke = _write(b, "c1", NON_IDEM)
    b.event(seq=3, kind="approval", identity=RESUME)
    assert judge(NAME, b).witness == (segment, invoke)


def test_every_write_of_the_turn_is_judged() -> None:
    b = History()
    _suspended(b)
    _approve(b)
    b.event(FAIL, seq=1, kind="approval", identity=RESUME)
    _write(b, "c1", IDEM)
    _write(b, "c2", NON_IDEM)
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID
    assert "first of 2 violations" in verdict.explanation


def test_an_unknown_tool_counts_as_a_write() -> None:
    b = History()
    _suspended(b)
    segment = _approve(b)
    b.event(FAIL, seq=1, kind="approval", identity=RESUME)
    invoke = b.tool("c1", "unknown", identity=RESUME)
    assert judge(NAME, b).witness == (segment, invoke)


def test_a_denial_that_executes_nothing_is_valid_even_unrecorded() -> None:
    """A denied write turn records its calls as error steps and executes nothing (fail-soft, ADR-132)."""
    b = History()
    _suspended(b)
    _approve(b)
    b.event(FAIL, seq=1, kind="approval", identity=RESUME)
    b.event(seq=1, kind="tool", call="c1", true_effect=NON_IDEM, identity=RESUME)
    b.provider(process=RESUME, round_no=2)
    b.segment_done(process=RESUME)
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("0 ")


def test_a_read_only_turn_runs_without_a_recorded_approval() -> None:
    b = History()
    _suspended(b)
    _approve(b)
    b.event(FAIL, seq=1, kind="approval", identity=RESUME)
    b.tool("c1", "read_only", identity=RESUME)
    b.tool_done(process=RESUME)
    assert judge(NAME, b).valid is Validity.VALID


def test_a_later_rounds_write_is_not_part_of_the_approved_turn() -> None:
    """After the pending turn the loop calls the provider again; a write it then runs (e.g. a remote
    tool whose server needs no approval) is a new turn, not the one the decision was about."""
    b = History()
    _suspended(b)
    _approve(b)
    b.event(FAIL, seq=1, kind="approval", identity=RESUME)
    b.tool("c1", "read_only", identity=RESUME)
    b.tool_done(process=RESUME)
    b.provider(process=RESUME, round_no=2)
    _write(b, "c2", NON_IDEM)
    assert judge(NAME, b).valid is Validity.VALID


def test_an_approval_of_an_earlier_segment_does_not_count() -> None:
    other = "resume:h:4"
    b = History()
    _suspended(b)
    _approve(b)
    b.event(seq=1, kind="approval", identity=RESUME)
    b.store(NAMES[SUSPEND_RUN], identity=RESUME, status="waiting_for_approval", claimed_by="", lease_expires=0)
    b.segment_done(outcome="awaiting_approval", process=RESUME)
    segment = _approve(b, process=other)
    b.event(FAIL, seq=2, kind="approval", identity=other)
    invoke = _write(b, "c1", IDEM, identity=other, seq=3)
    assert judge(NAME, b).witness == (segment, invoke)


def test_an_approval_of_another_run_does_not_count() -> None:
    b = History()
    _suspended(b)
    segment = _approve(b)
    b.event(seq=0, kind="approval", identity=RESUME, run="r2")
    invoke = _write(b, "c1", IDEM)
    assert judge(NAME, b).witness == (segment, invoke)


def test_writes_outside_approve_segments_are_not_judged() -> None:
    b = History()
    _suspended(b)
    _approve(b, entry="submit_input")
    b.event(seq=1, kind="input", identity=RESUME)
    _write(b, "c1", IDEM)
    b.segment_done(process=RESUME)
    b.tool("c2", NON_IDEM)  # no segment open on this process at all
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("0 ")


def test_a_crashed_approve_segment_is_judged_up_to_its_crash() -> None:
    b = History()
    _suspended(b)
    segment = _approve(b)
    b.event(FAIL, seq=1, kind="approval", identity=RESUME)
    invoke = b.tool("c1", NON_IDEM, identity=RESUME)
    b.landing("c1", NON_IDEM, identity=RESUME)
    b.tool_done(INFO, process=RESUME)
    b.segment_done(INFO, process=RESUME)
    assert judge(NAME, b).witness == (segment, invoke)


def test_a_write_of_another_run_inside_an_approve_segment_is_not_its_turn() -> None:
    """A write invoke counts only on its own run's approve segment: a write of another run in it is no
    write of the turn."""
    b = History()
    b.segment("approve", process="w1")
    b.tool("c1", "non_idempotent_write", run="r2", identity="w1")
    b.segment_done(process="w1")
    b.segment("approve", process="w1")
    own = b.tool("c2", "non_idempotent_write", identity="w1")
    verdict = judge("approved_write_turn_recorded", b)
    assert verdict.valid is Validity.INVALID and verdict.judged == 1
    assert own in verdict.witness
