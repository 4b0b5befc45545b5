"""The findings the triage registered (F-15 .. F-18): each recogniser accepts its route, the
variant the triage met through another entry point or timing, and refuses near-miss histories that
differ in the route (the stall, the failed read, the lagging clock, the failed dispatch, who claimed)
and the neighbouring findings' histories."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from checks import Index
from checks import history as H
from checks.fused import index_of
from checks.history import Op, OpType
from model.statements import MARK_PENDING_EFFECT, NAMES, RENEW_LEASE, REQUEUE, REQUEUE_STALE
from register.explain import explain
from register.findings import finding
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult

DATA = Path(__file__).parent / "data"
F01, F09, F11, F12, F13 = (finding(i) for i in ("F-01", "F-09", "F-11", "F-12", "F-13"))
F15, F16, F17, F18 = (finding(i) for i in ("F-15", "F-16", "F-17", "F-18"))
SBO, DLR, ONCE = "settles_by_owner", "dead_letter_reason_matches_cause", "non_idempotent_at_most_once"


def replay(path: Path) -> SimulationResult:
    cx = read(path)
    result = cx.run()
    assert result.digest == cx.digest
    assert cx.invariant in result.violations
    return result


def edited(result: SimulationResult, pick: Callable[[Op], bool], change: Mapping[str, Any]) -> Index:
    """The result's history with ``change`` merged into the value of every record ``pick`` selects."""
    ops = [op._replace(value={**op.value, **change}) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def retyped(result: SimulationResult, pick: Callable[[Op], bool], type_: OpType) -> Index:
    ops = [op._replace(type=type_) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def witness(result: SimulationResult, invariant: str) -> tuple[Op, ...]:
    return tuple(result.history[i] for i in result.verdicts[invariant].witness)


# ---- F-15: a stalled post-claim read, then an unguarded settle ----------------------------------


def test_a_stalled_position_read_then_an_unguarded_settle_is_f15() -> None:
    result = replay(F15.path)
    ix, verdict = index_of(result.history), result.verdicts[SBO]
    assert explain(SBO, ix, verdict) is F15
    assert not F12.recognise(ix, verdict), "the settle itself did not stall: not F-12"


def test_the_same_route_through_a_resume_is_f15() -> None:
    result = replay(DATA / "f15-resume-position-read.toml")
    assert explain(SBO, index_of(result.history), result.verdicts[SBO]) is F15
    assert witness(result, SBO)[1].get("site") == "resume.position_failed"


def test_the_same_settle_without_the_stall_of_its_read_is_not_f15() -> None:
    result = replay(F15.path)
    settler = witness(result, SBO)[1].process
    ix = edited(
        result,
        lambda op: op.op == H.FAULT and op.get("family") == "store" and op.get("target") == settler,
        {"kind": "fail"},
    )
    assert not F15.recognise(ix, result.verdicts[SBO])


def test_the_same_settle_without_the_failed_read_is_not_f15() -> None:
    result = replay(F15.path)
    settler = witness(result, SBO)[1].process
    ix = retyped(result, lambda op: op.op == H.READ and op.type is OpType.FAIL and op.process == settler, OpType.OK)
    assert not F15.recognise(ix, result.verdicts[SBO])


def test_the_same_settle_without_the_reapers_requeue_is_not_f15() -> None:
    result = replay(F15.path)
    ix = edited(
        result,
        lambda op: op.op == H.STORE and op.get("transition") == NAMES[REQUEUE_STALE],
        {"transition": NAMES[REQUEUE]},
    )
    assert not F15.recognise(ix, result.verdicts[SBO])


def test_a_settle_issued_before_the_new_claim_is_f12_not_f15() -> None:
    result = replay(F12.path)
    ix, verdict = index_of(result.history), result.verdicts[SBO]
    assert not F15.recognise(ix, verdict)
    assert explain(SBO, ix, verdict) is F12


# ---- F-16: a lagging clock defeats the reaper's staleness re-check -------------------------------


def test_a_dead_letter_over_a_live_lagging_worker_that_cleared_its_fence_is_f16() -> None:
    result = replay(F16.path)
    ix, verdict = index_of(result.history), result.verdicts[DLR]
    assert explain(DLR, ix, verdict) is F16
    assert explain("writes_fenced_under_lease", ix, result.verdicts["writes_fenced_under_lease"]) is F09


def test_the_same_dead_letter_with_a_leading_clock_is_not_f16() -> None:
    result = replay(F16.path)
    ix = edited(result, lambda op: op.op == H.FAULT and op.get("family") == "clock_skew", {"offset_s": 1887.0})
    assert not F16.recognise(ix, result.verdicts[DLR])


def test_the_same_dead_letter_whose_snapshot_had_no_fence_is_not_f16() -> None:
    result = replay(F16.path)
    ix = edited(result, lambda op: op.op == H.DECIDE and op.get("decider") == "reaper", {"pending_effect": ""})
    assert not F16.recognise(ix, result.verdicts[DLR])


def test_the_same_dead_letter_named_retries_exhausted_is_not_f16() -> None:
    result = replay(F16.path)
    dead_letter = witness(result, DLR)[1]
    row = {**dead_letter.value["row"], "termination_reason": "retries_exhausted"}
    ix = edited(result, lambda op: op.index == dead_letter.index, {"row": row})
    assert not F16.recognise(ix, result.verdicts[DLR])


def test_a_clear_whose_renewal_reached_the_future_is_not_f16() -> None:
    """With a true clock the clear's renewal moves the lease ahead, and T14 would have been refused."""
    result = replay(F16.path)
    clear = witness(result, DLR)[0]
    row = {**clear.value["row"], "lease_expires": index_of(result.history).epoch_s + int(clear.time_s) + 900}
    ix = edited(result, lambda op: op.index == clear.index, {"row": row})
    assert not F16.recognise(ix, result.verdicts[DLR])


def test_the_sync_variant_whose_window_is_the_reapers_nested_attempts_is_f16() -> None:
    """Seed 2 draw 485 of the Sync triage: the reaper's tick ran other rows' attempts inline between its
    snapshot and the dead-letter; the worker cleared the fence in that window and renewed (T4) after it,
    each renewal born stale on its lagging clock."""
    result = replay(DATA / "f16-sync-nested-attempt-window.toml")
    ix, verdict = index_of(result.history), result.verdicts[DLR]
    assert explain(DLR, ix, verdict) is F16
    prior = witness(result, DLR)[0]
    assert ix.number(prior) == RENEW_LEASE, "the statement before the dead-letter is a renewal, not the clear"


def test_the_sync_variant_without_the_clear_in_the_window_is_not_f16() -> None:
    """The same dead-letter where the worker's fence clear was another process's: no clear by the live
    segment between the snapshot and the dead-letter, so the fence the snapshot read may still stand."""
    result = replay(DATA / "f16-sync-nested-attempt-window.toml")
    prior, dead_letter = witness(result, DLR)
    ops = [
        op._replace(process="worker:elsewhere")
        if op.op == H.STORE
        and op.run == dead_letter.run
        and str(op.get("transition")).startswith(MARK_PENDING_EFFECT)
        and op.process == prior.process
        else op
        for op in result.history
    ]
    assert ops != list(result.history)
    assert not F16.recognise(index_of(ops), result.verdicts[DLR])


# ---- F-17: the reaper's settle after a failed dispatch ------------------------------------------


def test_a_reaper_settle_after_a_failed_dispatch_over_a_new_claim_is_f17() -> None:
    result = replay(F17.path)
    ix, verdict = index_of(result.history), result.verdicts[SBO]
    assert explain(SBO, ix, verdict) is F17
    assert not F12.recognise(ix, verdict) and not F15.recognise(ix, verdict)


def test_the_seven_fault_case_with_a_stalled_settle_is_f17() -> None:
    """The open case of the last session: the same unguarded settle, its window widened by a stall."""
    result = replay(DATA / "f17-stalled-settle-seven-faults.toml")
    assert explain(SBO, index_of(result.history), result.verdicts[SBO]) is F17


def test_the_same_settle_after_a_dispatch_that_succeeded_is_not_f17() -> None:
    result = replay(F17.path)
    ix = retyped(result, lambda op: op.op == H.DISPATCH and op.type is OpType.FAIL, OpType.OK)
    assert not F17.recognise(ix, result.verdicts[SBO])


def test_the_same_settle_from_another_site_is_not_f17() -> None:
    result = replay(F17.path)
    settle = witness(result, SBO)[1]
    ix = edited(result, lambda op: op.index == settle.index, {"site": "reaper.requeue"})
    assert not F17.recognise(ix, result.verdicts[SBO])


def test_a_settle_whose_requeue_was_not_the_reapers_own_is_not_f17() -> None:
    result = replay(F17.path)
    reaper = witness(result, SBO)[1].process
    ops = [
        op._replace(process="reaper#9")
        if op.op == H.STORE and op.process == reaper and REQUEUE_STALE in str(op.get("transition"))
        else op
        for op in result.history
    ]
    assert not F17.recognise(index_of(ops), result.verdicts[SBO])


def test_a_stalled_worker_settle_is_not_f17() -> None:
    result = replay(F12.path)
    assert not F17.recognise(index_of(result.history), result.verdicts[SBO])


# ---- F-18: a requeue decided on a snapshot without the fence reruns the write --------------------


def test_a_requeue_over_a_fence_stamped_after_the_snapshot_is_f18() -> None:
    result = replay(F18.path)
    ix, verdict = index_of(result.history), result.verdicts[ONCE]
    assert explain(ONCE, ix, verdict) is F18
    assert not F01.recognise(ix, verdict), "the fence was never cleared before the requeue: not F-01"
    assert not F13.recognise(ix, verdict), "no stale suspend: not F-13"
    assert explain("writes_fenced_under_lease", ix, result.verdicts["writes_fenced_under_lease"]) is F11


def test_the_sync_variant_opened_by_a_nested_attempt_is_f18() -> None:
    """Seed 0 draw 93 of the Sync triage: the stamp was issued under a valid lease after the snapshot, while
    the reaper ran an earlier row's attempt inline; no stalled stamp (no F-11)."""
    result = replay(DATA / "f18-sync-nested-attempt-window.toml")
    ix = index_of(result.history)
    assert explain(ONCE, ix, result.verdicts[ONCE]) is F18
    assert "writes_fenced_under_lease" not in result.violations


def test_the_same_requeue_whose_snapshot_read_the_fence_is_not_f18() -> None:
    """A snapshot that carried the fence would have dead-lettered the run (spec 5.1 3a)."""
    result = replay(F18.path)
    ix = edited(
        result,
        lambda op: op.op == H.READ and op.get("what") == "SelectStale" and bool(op.get("result")),
        {"fences": ["non_idempotent_write"]},
    )
    assert not F18.recognise(ix, result.verdicts[ONCE])


def test_the_same_rerun_after_an_owners_requeue_is_not_f18() -> None:
    result = replay(F18.path)
    ix = edited(result, lambda op: op.op == H.STORE and op.get("site") == "reaper.requeue", {"actor": "worker"})
    assert not F18.recognise(ix, result.verdicts[ONCE])


def test_the_same_rerun_whose_fence_was_stamped_by_another_segment_is_not_f18() -> None:
    result = replay(F18.path)
    first = witness(result, ONCE)[0]
    ops = [
        op._replace(process="worker:elsewhere")
        if op.op == H.STORE and op.get("site") == "executor.fence" and op.process == first.get("process")
        else op
        for op in result.history
    ]
    assert ops != list(result.history)
    assert not F18.recognise(index_of(ops), result.verdicts[ONCE])


def test_the_same_rerun_by_an_attempt_that_did_not_claim_after_the_requeue_is_not_f18() -> None:
    """The second landing must come from an attempt that started from the reaper's requeue: its process
    claimed the run after it. With that claim moved to another process, nothing ties the rerun to it."""
    result = replay(F18.path)
    second = witness(result, ONCE)[-1]
    requeue = next(op for op in result.history if op.op == H.STORE and op.get("site") == "reaper.requeue")
    claims = [
        op
        for op in result.history
        if requeue.index < op.index < second.index
        and op.op == H.STORE
        and op.get("site") in ("run_queued.claim", "resume.claim")
        and op.process == second.get("process")
    ]
    assert claims, "the rerun's attempt claimed the run after the requeue"
    moved = {op.index for op in claims}
    ops = [op._replace(process="worker:elsewhere") if op.index in moved else op for op in result.history]
    assert not F18.recognise(index_of(ops), result.verdicts[ONCE])


def test_a_requeue_after_the_fence_was_cleared_is_f01_not_f18() -> None:
    result = replay(F01.path)
    ix, verdict = index_of(result.history), result.verdicts[ONCE]
    assert explain(ONCE, ix, verdict) is F01
    assert not F18.recognise(ix, verdict)


def test_a_stale_suspend_rerun_is_f13_not_f18() -> None:
    result = replay(F13.path)
    ix, verdict = index_of(result.history), result.verdicts[ONCE]
    assert explain(ONCE, ix, verdict) is F13
    assert not F18.recognise(ix, verdict)
