"""The reaper's decisions on a stale snapshot at deployment ranges: F-19 (a reaper clock ahead
requeues past the budget), F-20 (a reaper clock ahead dead-letters for a fence already cleared), F-21 (a
stalled clear lets the dead-letter pass) and F-16's lagging-claimer variant. Each recogniser accepts its
counterexample and the issue's cases, and refuses the same history once the ground truth its route rests
on (a clock offset, a commit stall, the snapshot, the count the reaper read, the writer of the row) is
changed, and refuses its neighbours' histories."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from checks import Index, Verdict
from checks import history as H
from checks.fused import index_of
from checks.history import Op
from checks.index import row_of
from model.statements import CLAIM_QUEUED, NAMES, RENEW_LEASE, REQUEUE
from register.explain import explain
from register.findings import finding
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult

DATA = Path(__file__).parent / "data"
F16, F19, F20, F21 = (finding(i) for i in ("F-16", "F-19", "F-20", "F-21"))
DEAD = "dead_letter_reason_matches_cause"
BUDGET = "requeue_budget_respected"


def replay(path: Path) -> SimulationResult:
    cx = read(path)
    result = cx.run()
    assert result.digest == cx.digest
    return result


def edited(
    result: SimulationResult, pick: Callable[[Op], bool], change: Mapping[str, Any], *, row: bool = False
) -> Index:
    """The result's history with ``change`` merged into the value (or, with ``row``, into the row) of
    every record ``pick`` selects."""

    def edit(op: Op) -> Op:
        if row:
            return op._replace(value={**op.value, "row": {**row_of(op), **change}})
        return op._replace(value={**op.value, **change})

    ops = [edit(op) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def witness(result: SimulationResult, invariant: str) -> tuple[Verdict, list[Op]]:
    verdict = result.verdicts[invariant]
    return verdict, [result.history[i] for i in verdict.witness]


def reaper_skew(op: Op) -> bool:
    return op.op == H.FAULT and op.get("family") == "clock_skew" and op.get("target") == "reaper#1"


# ---- F-19: a reaper clock ahead requeues past the budget ----------------------------------------

F19_CASES = [F19.path, DATA / "f19-sync-six-faults.toml", DATA / "f19-sync-seven-faults.toml"]


@pytest.mark.parametrize("path", F19_CASES, ids=lambda p: p.stem)
def test_a_requeue_past_the_budget_on_a_stale_count_is_f19(path: Path) -> None:
    result = replay(path)
    assert BUDGET in result.violations
    assert explain(BUDGET, index_of(result.history), result.verdicts[BUDGET]) is F19


def test_the_same_requeue_with_a_true_reaper_clock_is_not_f19() -> None:
    """Without the reaper's lead the re-check would have refused: the lease the new claim wrote lies after
    the moment the invocation read its clock."""
    result = replay(F19.path)
    verdict = result.verdicts[BUDGET]
    ix = edited(result, reaper_skew, {"offset_s": 0.0})
    assert not F19.recognise(ix, verdict)
    assert explain(BUDGET, ix, verdict) is None


def test_a_snapshot_that_read_the_budget_spent_is_not_f19() -> None:
    """A reaper that read count 3 dead-letters (spec 5.1 3c); a requeue on that reading is another route."""
    result = replay(F19.path)
    verdict, (requeue,) = witness(result, BUDGET)
    ix = edited(
        result,
        lambda op: op.op == H.DECIDE and op.run == requeue.run and op.process == requeue.process,
        {"requeue_count": 3},
    )
    assert not F19.recognise(ix, verdict)


def test_a_window_without_enough_requeues_is_not_f19() -> None:
    """Read as count 0, the budget needed three requeues in the window and the history has one."""
    result = replay(F19.path)
    verdict, (requeue,) = witness(result, BUDGET)
    ix = edited(
        result,
        lambda op: op.op == H.DECIDE and op.run == requeue.run and op.process == requeue.process,
        {"requeue_count": 0},
    )
    assert not F19.recognise(ix, verdict)


def test_a_requeue_past_the_budget_by_the_owner_is_not_f19() -> None:
    result = replay(F19.path)
    verdict, (requeue,) = witness(result, BUDGET)
    ix = edited(result, lambda op: op.index == requeue.index, {"transition": NAMES[REQUEUE], "actor": "worker"})
    assert not F19.recognise(ix, verdict)


def test_the_neighbouring_snapshot_findings_are_not_f19() -> None:
    for entry in (F20, F21):
        result = replay(entry.path)
        assert not F19.recognise(index_of(result.history), result.verdicts[DEAD])


# ---- F-20: a reaper clock ahead dead-letters for a cleared fence --------------------------------


@pytest.mark.parametrize("path", [F20.path, DATA / "f20-sync-lagging-worker-too.toml"], ids=lambda p: p.stem)
def test_a_dead_letter_for_a_cleared_fence_under_a_reaper_clock_ahead_is_f20(path: Path) -> None:
    result = replay(path)
    ix = index_of(result.history)
    verdict = result.verdicts[DEAD]
    assert explain(DEAD, ix, verdict) is F20
    assert not F16.recognise(ix, verdict) and not F21.recognise(ix, verdict)
    assert explain("settles_by_owner", ix, result.verdicts["settles_by_owner"]) is finding("F-14")


def test_the_same_dead_letter_with_a_true_reaper_clock_is_not_f20() -> None:
    result = replay(F20.path)
    verdict = result.verdicts[DEAD]
    ix = edited(result, reaper_skew, {"offset_s": 0.0})
    assert not F20.recognise(ix, verdict)
    assert explain(DEAD, ix, verdict) is None


def test_a_snapshot_without_the_fence_is_not_f20() -> None:
    """The reaper must have read the fence it names: a snapshot with none decides by 3b-3d."""
    result = replay(F20.path)
    verdict, (_, dead_letter) = witness(result, DEAD)
    ix = edited(
        result,
        lambda op: op.op == H.READ and op.get("what") == "SelectStale" and dead_letter.run in (op.get("result") or ()),
        {"fences": ["", ""]},
    )
    assert not F20.recognise(ix, verdict)


def test_a_lease_already_past_at_the_reapers_true_reading_is_not_f20() -> None:
    """Then a true reaper clock would have passed the re-check too: the reaper's lead did nothing."""
    result = replay(F20.path)
    verdict, (prior, _) = witness(result, DEAD)
    ix = edited(result, lambda op: op.index == prior.index, {"lease_expires": 1_700_000_100}, row=True)
    assert not F20.recognise(ix, verdict)


# ---- F-21: a stalled clear lets the dead-letter pass --------------------------------------------


@pytest.mark.parametrize("path", [F21.path, DATA / "f21-stalled-earlier-row.toml"], ids=lambda p: p.stem)
def test_a_dead_letter_after_a_clear_stalled_past_its_lease_is_f21(path: Path) -> None:
    result = replay(path)
    ix = index_of(result.history)
    verdict = result.verdicts[DEAD]
    assert explain(DEAD, ix, verdict) is F21
    assert not F16.recognise(ix, verdict) and not F20.recognise(ix, verdict)


def test_the_same_dead_letter_without_the_clears_stall_is_not_f21() -> None:
    result = replay(F21.path)
    verdict, (prior, _) = witness(result, DEAD)
    ix = edited(
        result,
        lambda op: op.op == H.FAULT and op.get("family") == "store" and op.get("target") == prior.process,
        {"kind": "fail"},
    )
    assert not F21.recognise(ix, verdict)
    assert explain(DEAD, ix, verdict) is None


def test_a_clear_whose_lease_a_lagging_clock_wrote_is_not_f21() -> None:
    """A lease earlier than the clear's issue plus 900 s came from a lagging clock: F-16's route."""
    result = replay(F21.path)
    verdict, (prior, _) = witness(result, DEAD)
    lease = int(row_of(prior)["lease_expires"])
    ix = edited(result, lambda op: op.index == prior.index, {"lease_expires": lease - 300}, row=True)
    assert not F21.recognise(ix, verdict)


def test_a_clear_by_another_process_than_the_fence_holder_is_not_f21() -> None:
    """The clear must be the fence holder's: the process that stamped the fence the snapshot read."""
    result = replay(F21.path)
    verdict, (prior, _) = witness(result, DEAD)
    stamp = [
        op for op in result.history if op.op == H.STORE and op.run == prior.run and op.get("site") == "executor.fence"
    ]
    moved = [op._replace(process="approver1-9") if op is stamp[-1] else op for op in result.history]
    assert not F21.recognise(index_of(moved), verdict)


def test_the_lagging_clock_dead_letter_is_not_f21() -> None:
    result = replay(F16.path)
    assert not F21.recognise(index_of(result.history), result.verdicts[DEAD])


# ---- F-16: the lagging clock may be the next attempt's claimer ----------------------------------


def test_a_lagging_claimer_after_the_holder_cleared_the_fence_is_f16() -> None:
    result = replay(DATA / "f16-lagging-claimer-after-requeue.toml")
    ix = index_of(result.history)
    verdict, (prior, _) = witness(result, DEAD)
    assert prior.op == H.STORE and ix.number(prior) == CLAIM_QUEUED
    assert explain(DEAD, ix, verdict) is F16


def test_a_renewal_by_another_process_is_not_f16() -> None:
    """Another process's row counts only when it is a claim of the run (after a requeue)."""
    result = replay(DATA / "f16-lagging-claimer-after-requeue.toml")
    verdict, (prior, _) = witness(result, DEAD)
    ix = edited(result, lambda op: op.index == prior.index, {"transition": NAMES[RENEW_LEASE]})
    assert not F16.recognise(ix, verdict)


def test_a_claimer_with_a_true_clock_is_not_f16() -> None:
    result = replay(DATA / "f16-lagging-claimer-after-requeue.toml")
    verdict, (prior, _) = witness(result, DEAD)
    ix = edited(
        result,
        lambda op: op.op == H.FAULT and op.get("family") == "clock_skew" and op.get("target") == prior.process,
        {"offset_s": 30.0},
    )
    assert not F16.recognise(ix, verdict)


# ---- F-18: the first attempt's write may land after the re-run's --------------------------------


def test_a_rerun_that_lands_before_the_first_attempts_call_is_f18() -> None:
    result = replay(DATA / "f18-sync-rerun-lands-first.toml")
    verdict, landings = witness(result, "non_idempotent_at_most_once")
    assert landings[0].get("execution") > landings[1].get("execution"), "the re-run landed first"
    assert explain("non_idempotent_at_most_once", index_of(result.history), verdict) is finding("F-18")


def test_the_same_double_landing_after_a_snapshot_that_read_the_fence_is_not_f18() -> None:
    """A snapshot that lists the fence makes the reaper dead-letter (spec 5.1 3a): not F-18's route."""
    result = replay(DATA / "f18-sync-rerun-lands-first.toml")
    verdict, (landing, _) = witness(result, "non_idempotent_at_most_once")
    ix = edited(
        result,
        lambda op: op.op == H.READ and op.get("what") == "SelectStale" and landing.run in (op.get("result") or ()),
        {"fences": ["non_idempotent_write"] * 4},
    )
    assert not finding("F-18").recognise(ix, verdict)
