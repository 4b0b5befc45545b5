"""ADR-111 invariant: unknown_name_is_strictest, judged from the statements the store applied.

A tool step for a name the process's loaded code lacks (the world's ``true_effect`` 'unknown') must
be handled as a non_idempotent_write: its boundary clears a fence (T5), never a plain renewal (T4),
and once its audit fails the segment calls nothing more. The effect label the runtime attached to
the event is never read.
"""

from __future__ import annotations

from invariant_histories import FAIL, RUN, WORKER, History, judge

from checks import Validity
from checks.history import EVENT, OpType

NAME = "unknown_name_is_strictest"


def _step(
    b: History, *, label: str = "non_idempotent_write", true_effect: str = "unknown", type_: OpType = OpType.INVOKE
) -> int:
    """The audit insert of a tool step: ``label`` is what the runtime resolved, ``true_effect`` the world's truth."""
    return b.add(
        EVENT,
        type_,
        run=RUN,
        process=WORKER,
        seq=3,
        kind="tool",
        round=2,
        tool="renamed_tool",
        call="2.0",
        execution=0,
        effect=label,
        true_effect=true_effect,
        identity=WORKER,
    )


def _segment(b: History) -> None:
    b.enqueue()
    b.segment("run_queued")
    b.claim()


def test_an_unknown_name_fenced_and_cleared_as_a_write_is_valid() -> None:
    b = History()
    _segment(b)
    b.stamp("non_idempotent_write")
    b.stamp("")
    _step(b)
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("1 steps")


def test_an_unknown_name_renewed_like_a_read_only_step_is_a_violation() -> None:
    """The mutant without ADR-111's fail-closed resolution: no fence, a plain T4 at the boundary."""
    b = History()
    _segment(b)
    renewal = b.renew()
    step = _step(b)
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (renewal, step)


def test_the_runtimes_label_is_not_what_is_judged() -> None:
    """A step labelled non_idempotent_write whose boundary was a T4 is still a violation."""
    b = History()
    _segment(b)
    b.renew()
    _step(b, label="non_idempotent_write")
    assert judge(NAME, b).valid is Validity.INVALID


def test_a_segment_that_goes_on_after_the_unknown_steps_audit_failed_is_a_violation() -> None:
    b = History()
    _segment(b)
    b.stamp("")
    _step(b)
    failed = _step(b, type_=FAIL)
    provider = b.provider()
    assert judge(NAME, b).witness == (failed, provider)


def test_a_segment_that_stops_after_the_unknown_steps_audit_failed_is_valid() -> None:
    b = History()
    _segment(b)
    b.stamp("")
    _step(b)
    _step(b, type_=FAIL)
    b.settle("failed", termination_reason="not_retryable")
    assert judge(NAME, b).valid is Validity.VALID


def test_a_known_read_only_tool_is_not_judged() -> None:
    b = History()
    _segment(b)
    b.renew()
    _step(b, label="read_only", true_effect="read_only")
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("0 steps")
