"""Variants of registered findings met by the nightly head sweep: each replays from its stored
counterexample and is recognised as the finding whose mechanism it shows."""

from __future__ import annotations

from pathlib import Path

from checks.fused import index_of
from register.explain import explain
from register.findings import FINDINGS
from sim.explore.counterexample import read

DATA = Path(__file__).parent / "data"
F05 = next(f for f in FINDINGS if f.id == "F-05")


def test_a_cancel_between_the_failed_recovery_dispatch_and_the_dead_letter_is_f05() -> None:
    """Recovery requeued (T11), its dispatch failed, a user cancelled (T8), the guarded dead-letter
    matched nothing: the segment reports FAILED over a CANCELLED row, F-05's unchecked outcome."""
    cx = read(DATA / "f05-cancel-before-dead-letter.toml")
    result = cx.run()
    assert result.digest == cx.digest
    verdict = result.verdicts["segment_outcome_matches_row"]
    assert "'cancelled'" in verdict.explanation
    assert explain("segment_outcome_matches_row", index_of(result.history), verdict) is F05


def test_a_cancel_after_a_failed_position_read_is_the_unchecked_settle_not_f05() -> None:
    """The same FAILED-over-CANCELLED outcome without a requeue: the cancel lands after the claim
    (T3), the position read failed and runQueued's unguarded settle matched nothing. That is the
    recorded non-guarantee NG-unchecked-settle; F-05's recogniser must not claim it."""
    cx = read(DATA / "cancel-after-position-failure.toml")
    result = cx.run()
    assert result.digest == cx.digest
    ix = index_of(result.history)
    verdict = result.verdicts["segment_outcome_matches_row"]
    assert "'cancelled'" in verdict.explanation
    assert not F05.recognise(ix, verdict)
    explained = explain("segment_outcome_matches_row", ix, verdict)
    assert explained is not None and explained.id == "NG-unchecked-settle"


F01 = next(f for f in FINDINGS if f.id == "F-01")


def test_a_completed_write_rerun_whose_process_took_another_identity_before_the_clear_is_f01() -> None:
    """The landing process takes another worker's identity (the identity fault) between the landing
    and the boundary that clears the fence; a reap later requeues the run and round 1 runs the write
    again. The clear is found by the process that landed, not by the identity it showed then."""
    cx = read(DATA / "f01-identity-swapped-before-clear.toml")
    result = cx.run()
    assert result.digest == cx.digest
    ix = index_of(result.history)
    verdict = result.verdicts["non_idempotent_at_most_once"]
    first = result.history[verdict.witness[0]]
    clear = next(op for op in ix.rows if op.index > first.index and op.process == first.get("process"))
    assert clear.get("identity") != first.get("identity")
    assert explain("non_idempotent_at_most_once", ix, verdict) is F01
