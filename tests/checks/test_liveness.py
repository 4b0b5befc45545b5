"""Liveness costs: each count on a real simulation that must produce it and on one that must
not, from the stored counterexamples whose interleavings the register describes."""

from __future__ import annotations

from pathlib import Path

from checks.liveness import Liveness, liveness
from model.statements import DEAD_LETTER_STALE, NAMES
from register.findings import finding
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult, simulate

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "properties" / "data"


def run(path: Path) -> SimulationResult:
    cx = read(path)
    result = cx.run()
    assert result.digest == cx.digest
    return result


def test_a_healthy_segment_a_skewed_reaper_takes_is_reaped_while_progressing() -> None:
    """F-14 at deployment ranges: the resume segment's calls return in seconds; a reaper a lease ahead
    dead-letters it (and requeues nothing): reaped while making progress."""
    counted = liveness(run(DATA / "f14-deployment-healthy-run.toml").history)
    assert counted.progressing_reaped >= 1


def test_a_call_longer_than_the_lease_is_not_progress() -> None:
    """F-14's registered interleaving: the interactive segment is inside a 1,091 s provider call (spec 7.2's
    recorded case), so its reap is not counted as progress; the run had no fatal fault, so its dead-letter
    is, and FAILED came from slowness alone (its only fault of its own is the slow call)."""
    counted = liveness(run(finding("F-14").path).history)
    assert counted == Liveness(progressing_reaped=0, dead_letters_no_fatal=1, failed_by_slowness=1)


def test_a_dead_letter_over_a_write_in_flight_is_not_counted_as_without_a_fatal_fault() -> None:
    """ADR-112: a run reaped while its non-idempotent write was in flight must be dead-lettered."""
    result = simulate("worker_crash_mid_write", "head", 0)
    counted = liveness(result.history)
    assert counted.dead_letters_no_fatal == 0
    assert any(op.get("transition") == NAMES[DEAD_LETTER_STALE] for op in result.history)


def test_a_fault_free_happy_path_costs_nothing() -> None:
    assert liveness(simulate("happy_path", "head", 0).history) == Liveness()
