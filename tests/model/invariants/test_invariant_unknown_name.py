"""ADR-111 invariant: unknown_name_is_strictest (a stale tool name resolves to the strictest effect)."""

from __future__ import annotations

from invariant_histories import RUN, WORKER, History, judge

from model.history import EVENT, OpType
from model.invariants import Validity

NAME = "unknown_name_is_strictest"


def _step(b: History, *, effect: str, true_effect: str) -> int:
    """The audit insert of a tool step, as the runtime resolved it and as the world knows it."""
    return b.add(
        EVENT,
        OpType.INVOKE,
        run=RUN,
        process=WORKER,
        seq=3,
        kind="tool",
        round=2,
        tool="renamed_tool",
        call="2.0",
        execution=0,
        effect=effect,
        true_effect=true_effect,
        identity=WORKER,
    )


def test_an_unknown_name_audited_as_non_idempotent_write_is_valid() -> None:
    b = History()
    b.start()
    _step(b, effect="non_idempotent_write", true_effect="unknown")
    assert judge(NAME, b).valid is Validity.VALID


def test_an_unknown_name_audited_as_read_only_is_a_violation_naming_the_step() -> None:
    """The mutant without ADR-111's fail-closed resolution, or a runtime with no resolver (adr-104)."""
    b = History()
    b.start()
    step = _step(b, effect="read_only", true_effect="unknown")
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (step,)


def test_a_known_read_only_tool_is_not_judged() -> None:
    b = History()
    b.start()
    _step(b, effect="read_only", true_effect="read_only")
    assert judge(NAME, b).valid is Validity.VALID
