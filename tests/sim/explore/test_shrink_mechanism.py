"""Shrinking keeps the mechanism: a violation is shrunk while its explanation stays the same
(the same finding or non-guarantee recogniser, or for an unexplained one the same witness shape), not
merely while the same invariant fails.

The two unshrunk draws in tests/properties/data are real swarm draws of head where shrinking by the
invariant alone lands on another mechanism: a registered finding (F-08) shrinks into a recorded
non-guarantee (NG-queued-orphan), and a shared identity (NG-identity) into a finding (F-03).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import Verdict
from checks.fused import index_of
from register.findings import finding
from register.mechanism import Mechanism, mechanism_of, witness_shape
from sim.explore.base import KEEP_INVARIANT, KEEP_MECHANISM, Target, shrink
from sim.explore.counterexample import Counterexample, read, to_toml, write
from sim.world.simulate import SimulationResult

DATA = Path(__file__).resolve().parents[2] / "properties" / "data"
CASES = {
    "shrink-f08-unshrunk.toml": ("F-08", "NG-queued-orphan"),
    "shrink-identity-unshrunk.toml": ("NG-identity", "F-03"),
}
MAX_TESTS = 120


def _shrunk(cx: Counterexample, keep: str) -> tuple[Counterexample, SimulationResult]:
    target = Target(cx.scenario, cx.policy, dict(cx.flags))
    anchored = cx.run().fault_script  # the replay anchors each fault (run, request type, occurrence)
    return shrink(
        target,
        cx.profile,
        cx.seed,
        cx.invariant,
        anchored,
        expected_digest=cx.digest,
        max_tests=MAX_TESTS,
        explorer="test",
        tempo=cx.tempo,
        keep=keep,
    )


def _mechanism(result: SimulationResult, invariant: str) -> str:
    return mechanism_of(invariant, result.history, result.verdicts[invariant]).label()


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_unshrunk_draw_shows_its_mechanism(name: str) -> None:
    cx = read(DATA / name)
    result = cx.run()
    assert result.digest == cx.digest
    assert _mechanism(result, cx.invariant) == CASES[name][0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_shrinking_by_the_invariant_alone_lands_on_another_mechanism(name: str) -> None:
    cx = read(DATA / name)
    shrunk, result = _shrunk(cx, KEEP_INVARIANT)
    assert cx.invariant in result.violations
    assert _mechanism(result, cx.invariant) == CASES[name][1]
    assert shrunk.mechanism == CASES[name][1], "the file records what the shrunk script shows"


@pytest.mark.parametrize("name", sorted(CASES))
def test_shrinking_keeps_the_mechanism_it_was_found_with(name: str) -> None:
    cx = read(DATA / name)
    shrunk, result = _shrunk(cx, KEEP_MECHANISM)
    assert _mechanism(result, cx.invariant) == CASES[name][0]
    assert shrunk.mechanism == CASES[name][0]
    assert len(shrunk.faults) < len(cx.faults), "it still shrinks"
    assert len(shrunk.faults) <= 3
    assert shrunk.run().digest == shrunk.digest == result.digest


def test_the_mechanism_survives_the_counterexample_file(tmp_path: Path) -> None:
    cx = read(DATA / "shrink-f08-unshrunk.toml")
    shrunk, _ = _shrunk(cx, KEEP_MECHANISM)
    assert 'mechanism = "F-08"' in to_toml(shrunk)
    assert read(write(shrunk, tmp_path / "cx.toml")).mechanism == "F-08"
    assert cx.mechanism == "", "a file written before mechanisms were recorded reads as unrecorded"


def test_keep_must_be_one_of_the_two() -> None:
    cx = read(DATA / "shrink-f08-unshrunk.toml")
    with pytest.raises(ValueError, match="keep must be"):
        _shrunk(cx, "same-ish")


# ---- the shape of an unexplained witness ---------------------------------------------------------


def _f12() -> tuple[SimulationResult, Verdict]:
    result = read(finding("F-12").path).run()
    return result, result.verdicts["settles_by_owner"]


def test_an_unexplained_violation_is_named_by_the_shape_of_its_witness() -> None:
    """F-12's witness judged under an invariant no register entry lists: nothing explains it, so its
    mechanism is the shape of the witness (the new owner's claim, then the stalled unguarded settle)."""
    result, verdict = _f12()
    found = mechanism_of("requeue_budget_respected", result.history, verdict)
    assert not found.explained
    assert found.witness == (
        "store ok T3 at run_queued.claim by worker",
        "store ok T7 at run_queued.position_failed by worker",
    )
    assert found.label().startswith("unexplained: store ok T3")
    assert mechanism_of("settles_by_owner", result.history, verdict).label() == "F-12"


def test_the_shape_has_no_index_run_identity_or_time() -> None:
    result, verdict = _f12()
    text = " ".join(witness_shape(index_of(result.history), verdict))
    for op in (result.history[i] for i in verdict.witness):
        assert op.run not in text
        assert str(op.index) not in text.split()
        assert str(op.get("identity")) not in text
        assert f"{op.time_s:g}" not in text


def test_two_mechanisms_differ_by_register_entry_or_by_shape() -> None:
    assert Mechanism("x", "F-08") != Mechanism("x", "NG-queued-orphan")
    assert Mechanism("x", "", ("a",)) != Mechanism("x", "", ("b",))
    assert Mechanism("x", "", ("a",)) == Mechanism("x", "", ("a",))
