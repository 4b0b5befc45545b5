"""ADR-134 invariant: builtin_write_approved (a builtin write runs only on an approved resume)."""

from __future__ import annotations

from invariant_histories import LEASE, History, judge

from checks import Validity
from model.statements import CLAIM_FOR_RESUME, NAMES

NAME = "builtin_write_approved"
RESUME = "resume:h:3"
WORKER = "worker:h:1"
NON_IDEM = "non_idempotent_write"


def test_a_builtin_write_on_an_approve_segment_is_valid() -> None:
    b = History()
    b.start()
    b.segment("approve", process=RESUME)
    b.store(NAMES[CLAIM_FOR_RESUME], identity=RESUME, status="running", claimed_by=RESUME, lease_expires=LEASE)
    b.tool("c1", NON_IDEM, identity=RESUME, remote=False)
    b.segment_done(process=RESUME)
    assert judge(NAME, b).valid is Validity.VALID


def test_a_builtin_write_on_a_worker_segment_is_a_violation_naming_the_segment_and_the_call() -> None:
    """The mutant without ADR-134: the write runs on the first pass, no approver involved."""
    b = History()
    b.start()
    segment = b.segment("run_queued", process=WORKER)
    invoke = b.tool("c1", NON_IDEM, identity=WORKER, remote=False)
    b.segment_done(process=WORKER)
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (segment, invoke)


def test_a_remote_write_on_a_worker_segment_is_not_judged() -> None:
    """A remote tool suspends only when its server asks for approval (ADR-134)."""
    b = History()
    b.start()
    b.segment("run_queued", process=WORKER)
    b.tool("c1", NON_IDEM, identity=WORKER, remote=True)
    b.segment_done(process=WORKER)
    assert judge(NAME, b).valid is Validity.VALID


def test_a_read_only_builtin_on_a_worker_segment_is_not_judged() -> None:
    b = History()
    b.start()
    b.segment("run_queued", process=WORKER)
    b.tool("c1", "read_only", identity=WORKER, remote=False)
    b.segment_done(process=WORKER)
    assert judge(NAME, b).valid is Validity.VALID


def test_a_builtin_write_outside_every_segment_is_a_violation() -> None:
    b = History()
    b.start()
    invoke = b.tool("c1", NON_IDEM, identity=WORKER, remote=False)
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (invoke,)
