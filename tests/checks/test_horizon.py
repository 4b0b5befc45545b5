"""checks/horizon.py and every_run_terminates: a run the horizon cut short is unknown, a stranded run violated.

Hand-built histories: what still moves a QUEUED or RUNNING run at the end (an open segment, a wake-up
on the bus, a lease the reaper has yet to find), and what does not (a wake-up a worker consumed and
finished with, a crashed segment, a lease the reaper's last tick already saw expired)."""

from __future__ import annotations

from pathlib import Path

from invariant_histories import FAIL, INFO, LEASE, NEMESIS, OK, WORKER, History, judge

from checks import Validity
from checks.history import FAULT, FINAL, IDLE, WORLD
from checks.horizon import movers

DATA = Path(__file__).resolve().parents[1] / "data"


def final_at(b: History, time_s: float, **changes: object) -> int:
    """The run's final row, recorded at ``time_s`` (the horizon)."""
    return b.add(FINAL, OK, process=WORLD, time_s=time_s, row={**b.rows["r1"], **changes})


def verdict(b: History) -> Validity:
    return judge("every_run_terminates", b).valid


def queued_with_wakeup() -> History:
    b = History()
    b.enqueue()
    b.dispatch(OK, process="client")
    return b


def test_a_queued_run_whose_wakeup_is_still_on_the_bus_is_cut_not_stranded() -> None:
    b = queued_with_wakeup()
    b.final()
    found = judge("every_run_terminates", b)
    assert found.valid is Validity.UNKNOWN
    assert "cut by the horizon" in found.explanation and "wake-up" in found.explanation


def test_a_queued_run_whose_wakeup_a_worker_finished_with_is_stranded() -> None:
    b = queued_with_wakeup()
    b.deliver(duplicate=False)
    b.segment("run_queued")
    b.segment_done(OK, outcome="lease_lost")
    b.final()
    assert verdict(b) is Validity.INVALID


def test_a_queued_run_never_dispatched_is_stranded() -> None:
    b = History()
    b.enqueue()
    b.final()
    assert verdict(b) is Validity.INVALID


def test_a_failed_dispatch_sends_no_wakeup() -> None:
    b = History()
    b.enqueue()
    b.dispatch(FAIL, process="client")
    b.final()
    assert verdict(b) is Validity.INVALID


def test_the_late_copy_of_a_duplicate_fault_is_a_wakeup_still_to_come() -> None:
    b = queued_with_wakeup()
    b.record(FAULT, INFO, {"family": "duplicate", "kind": "late", "target": "client"}, process=NEMESIS)
    b.deliver(duplicate=False)
    b.segment("run_queued")
    b.segment_done(OK, outcome="lease_lost")
    b.final()
    assert movers(b.ops).pending_wakeups("r1") == 1
    assert verdict(b) is Validity.UNKNOWN


def test_a_worker_that_crashed_with_the_wakeup_in_hand_has_it_redelivered() -> None:
    b = queued_with_wakeup()
    b.deliver(duplicate=False)
    b.segment("run_queued")
    b.segment_done(INFO)
    b.crash()
    b.final()
    assert movers(b.ops).pending_wakeups("r1") == 1
    assert verdict(b) is Validity.UNKNOWN


def test_a_redelivered_wakeup_that_arrived_is_consumed() -> None:
    b = queued_with_wakeup()
    b.deliver(duplicate=False)
    b.segment("run_queued")
    b.segment_done(INFO)
    b.crash()
    b.deliver(duplicate=False, process="worker:h:9")
    b.segment("run_queued", process="worker:h:9")
    b.segment_done(OK, outcome="lease_lost", process="worker:h:9")
    b.final()
    assert verdict(b) is Validity.INVALID


def test_an_open_segment_of_a_live_process_moves_its_run() -> None:
    b = History()
    b.start()
    b.segment("run_interactive")
    b.final(lease_expires=0)
    assert verdict(b) is Validity.UNKNOWN


def test_an_open_segment_of_a_crashed_process_moves_nothing() -> None:
    b = History()
    b.segment("run_interactive")
    b.start()
    b.crash(WORKER)
    b.final(lease_expires=0)
    assert verdict(b) is Validity.INVALID


def test_a_running_row_whose_lease_outlives_the_horizon_is_cut() -> None:
    b = History()
    b.start()
    b.final()
    found = judge("every_run_terminates", b)
    assert found.valid is Validity.UNKNOWN
    assert "lease" in found.explanation


def test_a_lease_that_expired_after_the_reapers_last_tick_began_is_cut() -> None:
    b = History()
    b.start()
    b.add(IDLE, OK, process="reaper", time_s=LEASE - 5, identity="reaper:h:1", invoked_s=LEASE - 5)
    b.add(IDLE, OK, process="reaper", time_s=LEASE + 3, identity="reaper:h:1", invoked_s=LEASE - 1)
    final_at(b, LEASE + 4)
    assert verdict(b) is Validity.UNKNOWN


def test_a_lease_the_reapers_last_tick_saw_expired_is_stranded() -> None:
    b = History()
    b.start()
    b.add(IDLE, OK, process="reaper", time_s=LEASE + 3, identity="reaper:h:1", invoked_s=LEASE + 2)
    final_at(b, LEASE + 4)
    assert verdict(b) is Validity.INVALID


def test_an_unleased_running_row_nobody_holds_is_stranded() -> None:
    b = History()
    b.start()
    b.final(lease_expires=0)
    assert verdict(b) is Validity.INVALID


def test_a_stranded_run_beside_a_cut_one_is_a_violation() -> None:
    b = queued_with_wakeup()
    b.enqueue(run="r2")
    b.final()
    b.final(run="r2")
    found = judge("every_run_terminates", b)
    assert found.valid is Validity.INVALID
    assert "r2" in found.explanation


def test_five_thousand_short_runs_cut_by_the_horizon_violate_nothing() -> None:
    """The new user's load test: thousands of runs still queued, with their wake-ups on the bus,
    when the horizon ends the world. Before, every_run_terminates called 4,942 of them stranded."""
    from sim.world.simulate import simulate

    result = simulate(DATA / "five_thousand_short_runs.toml", "head", 0)
    unfinished = sum(n for status, n in result.stats["final_status"].items() if status in ("queued", "running"))
    assert unfinished > 1000
    found = result.verdicts["every_run_terminates"]
    assert found.valid is Validity.UNKNOWN, found.explanation
    assert "every_run_terminates" not in result.violations
