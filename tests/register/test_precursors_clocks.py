"""F-20's and F-22's chains (``register.precursors``: a reaper clock ahead lists a live run, whose holder
then clears or stamps a fence) on the findings' own counterexamples and on near misses built from them by
changing one record."""

from __future__ import annotations

from pathlib import Path

from checks.history import Op, OpType
from register.precursors import STEPS, reaper_ahead_cleared_fence, reaper_ahead_new_fence, reaper_ahead_spent_budget
from sim.explore.counterexample import read
from tests.register.test_precursors import changed, history_of

F20 = "F-20-reaper-clock-ahead-dead-letter.toml"
F22 = "F-22-reaper-clock-ahead-exhausted-over-new-fence.toml"
F19 = "F-19-reaper-clock-ahead-requeue-past-budget.toml"
F20_LAGGING_WORKER = Path("tests/properties/data/f20-sync-lagging-worker-too.toml")


def failed(history: tuple[Op, ...] | list[Op], index: int) -> list[Op]:
    out = list(history)
    out[index] = out[index]._replace(type=OpType.FAIL)
    return out


def last_row(history: tuple[Op, ...], run: str, before: int) -> int:
    """The record of ``run``'s last stored row before record ``before``."""
    return max(
        op.index
        for op in history[:before]
        if op.run == run and op.op == "store" and isinstance(op.value.get("row"), dict)
    )


def test_f20_each_step_is_the_record_the_counterexample_took_it_at() -> None:
    history = history_of(F20)
    marks = reaper_ahead_cleared_fence(history)
    assert len(marks) == STEPS["F-20"] == 3
    skew, snapshot, clear = (history[i] for i in marks)
    assert skew.value["family"] == "clock_skew" and skew.value["offset_s"] > 0
    assert snapshot.process == skew.value["target"] and clear.run in snapshot.value["result"]
    assert clear.value["site"] == "executor.boundary" and clear.value["row"]["pending_effect"] == ""


def test_f20_the_variant_with_a_lagging_worker_takes_every_step_too() -> None:
    assert len(reaper_ahead_cleared_fence(read(F20_LAGGING_WORKER).run().history)) == 3


def test_f20_a_clock_behind_is_no_first_step() -> None:
    history = history_of(F20)
    skew = reaper_ahead_cleared_fence(history)[0]
    assert reaper_ahead_cleared_fence(changed(history, skew, offset_s=-2650.0)) == ()


def test_f20_a_snapshot_without_the_fence_is_no_second_step() -> None:
    history = history_of(F20)
    marks = reaper_ahead_cleared_fence(history)
    listed = history[marks[1]].value["result"]
    assert reaper_ahead_cleared_fence(changed(history, marks[1], fences=[""] * len(listed))) == ()


def test_f20_a_run_whose_lease_is_past_in_true_time_is_no_second_step() -> None:
    """A true clock would list it as well: a stale fence dead-letter, not the clock's doing."""
    history = history_of(F20)
    marks = reaper_ahead_cleared_fence(history)
    run = history[marks[2]].run
    stamp = last_row(history, run, marks[1])
    row = history[stamp].value["row"]
    past = changed(history, stamp, row={**row, "lease_expires": 1_700_000_000 + 100})
    assert reaper_ahead_cleared_fence(past) == ()


def test_f20_a_clear_that_failed_is_no_last_step() -> None:
    history = history_of(F20)
    marks = reaper_ahead_cleared_fence(history)
    assert reaper_ahead_cleared_fence(failed(history, marks[2])) == marks[:2]


def test_f22_each_step_is_the_record_the_counterexample_took_it_at() -> None:
    history = history_of(F22)
    marks = reaper_ahead_new_fence(history)
    assert len(marks) == STEPS["F-22"] == 4
    claim, skew, snapshot, stamp = (history[i] for i in marks)
    assert claim.value["row"]["requeue_count"] == 3 and claim.value["row"]["status"] == "running"
    assert skew.value["family"] == "clock_skew" and skew.value["offset_s"] > 0
    assert snapshot.process == skew.value["target"] and stamp.run == claim.run
    assert stamp.value["site"] == "executor.fence"
    assert stamp.value["row"]["pending_effect"] == "non_idempotent_write"


def test_f22_a_claim_under_the_budget_is_no_step() -> None:
    history = history_of(F22)
    marks = reaper_ahead_new_fence(history)
    row = history[marks[0]].value["row"]
    under = reaper_ahead_new_fence(changed(history, marks[0], row={**row, "requeue_count": 2}))
    assert marks[0] not in under
    assert len(under) < 4


def test_f22_a_clock_set_back_before_the_claim_is_no_second_step() -> None:
    """The reaper's clock set behind again between the two: they never held together."""
    history = list(history_of(F22))
    marks = reaper_ahead_new_fence(history)
    skew = history[marks[1]]
    behind = changed(tuple(history), skew.index, offset_s=-60.0)
    assert len(reaper_ahead_new_fence(behind)) < 2


def test_f22_a_fence_for_an_idempotent_write_is_no_last_step() -> None:
    history = history_of(F22)
    marks = reaper_ahead_new_fence(history)
    row = history[marks[3]].value["row"]
    idempotent = changed(history, marks[3], row={**row, "pending_effect": "idempotent_write"})
    assert reaper_ahead_new_fence(idempotent) == marks[:3]


def test_f20_and_f22_do_not_take_each_others_last_step() -> None:
    assert len(reaper_ahead_new_fence(history_of(F20))) < STEPS["F-22"]
    assert len(reaper_ahead_cleared_fence(history_of(F22))) < STEPS["F-20"]


def test_f19_each_step_is_the_record_the_counterexample_took_it_at() -> None:
    history = history_of(F19)
    marks = reaper_ahead_spent_budget(history)
    assert len(marks) == STEPS["F-19"] == 4
    snapshot, spent, claim = (history[i] for i in marks[1:])
    assert spent.run == claim.run and spent.run in snapshot.value["result"]
    assert spent.value["row"]["requeue_count"] == 3 and spent.process != snapshot.process
    assert claim.value["transition"].startswith("T3") and claim.value["row"]["status"] == "running"


def test_f19_a_snapshot_at_the_budget_is_no_second_step() -> None:
    """A run listed with its budget already spent is dead-lettered, not requeued (spec 5.1 3c)."""
    history = history_of(F19)
    marks = reaper_ahead_spent_budget(history)
    last = last_row(history, history[marks[2]].run, marks[1])
    row = history[last].value["row"]
    spent = reaper_ahead_spent_budget(changed(history, last, row={**row, "requeue_count": 3}))
    assert marks[2] not in spent  # the other row the snapshot listed may still begin a trail


def test_f19_a_requeue_short_of_the_budget_is_no_third_step() -> None:
    history = history_of(F19)
    marks = reaper_ahead_spent_budget(history)
    row = history[marks[2]].value["row"]
    assert reaper_ahead_spent_budget(changed(history, marks[2], row={**row, "requeue_count": 2})) == marks[:2]


def test_f19_a_claim_that_failed_is_no_last_step() -> None:
    history = history_of(F19)
    marks = reaper_ahead_spent_budget(history)
    assert reaper_ahead_spent_budget(failed(history, marks[3])) == marks[:3]


def test_f19_and_f20_are_climbed_when_named_and_f22_is_not() -> None:
    """F-22's chain is read (a splitting estimate can use it) but no search climbs it: its second step is
    the rare part, and climbing from it met F-22 no sooner."""
    from sim.explore.base import Budget
    from sim.explore.guided import chains

    def named(finding: str) -> Budget:
        return Budget(seconds=1e9, simulations=10, seed=0, stop_at_first=True, mechanisms=frozenset({finding}))

    assert chains(named("F-19")) == ("F-19",)
    assert chains(named("F-20")) == ("F-20",)
    assert chains(named("F-22")) == ()
    assert not {"F-19", "F-20", "F-22"} & set(chains(Budget(seconds=1e9, simulations=10, seed=0)))
