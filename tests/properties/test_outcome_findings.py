"""The findings and non-guarantees of what the runtime tells: each replays from a stored
counterexample, is recognised, and its recogniser refuses a near-miss history that differs only in the
route (the ground truth it reads: the fault that struck, the statement that failed, the process that
wrote, the effect of the step), so that a new mechanism with the same symptom shows as unregistered."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from checks import INVARIANTS, Index, Verdict
from checks import history as H
from checks.fused import index_of
from checks.history import Op, OpType
from model.statements import DEAD_LETTER_STALE, NAMES, START_RUN, SUSPEND_RUN
from register.explain import explain
from register.findings import finding
from register.nonguarantees import NON_GUARANTEES
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult

DATA = Path(__file__).parent / "data"
F05, F12, F14 = finding("F-05"), finding("F-12"), finding("F-14")
NG = {ng.id: ng for ng in NON_GUARANTEES}


def replay(path: Path, invariant: str) -> tuple[SimulationResult, Index]:
    cx = read(path)
    result = cx.run()
    assert result.digest == cx.digest
    assert invariant in result.violations
    return result, index_of(result.history)


def edited(
    result: SimulationResult, pick: Callable[[Op], bool], change: Mapping[str, Any] | None = None, **fields: Any
) -> Index:
    """The history with ``change`` merged into the value (and ``fields`` replaced) of every record ``pick`` takes."""
    ops = [op._replace(value={**op.value, **dict(change or {})}, **fields) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


# ---- F-14: a reaper whose clock runs ahead ------------------------------------------------------


def test_the_reaper_clock_ahead_counterexample_is_f14() -> None:
    result, ix = replay(F14.path, "settles_by_owner")
    assert explain("settles_by_owner", ix, result.verdicts["settles_by_owner"]) is F14


def test_at_deployment_ranges_a_reaper_a_lease_ahead_dead_letters_a_healthy_segment_and_it_is_f14() -> None:
    result, ix = replay(DATA / "f14-deployment-healthy-run.toml", "settles_by_owner")
    assert result.faults_fired["clock_skew"] == 1 and sum(result.faults_fired.values()) == 1
    assert explain("settles_by_owner", ix, result.verdicts["settles_by_owner"]) is F14


def test_the_same_early_dead_letter_with_a_lagging_reaper_clock_is_not_f14() -> None:
    result, _ = replay(F14.path, "settles_by_owner")
    ix = edited(result, lambda op: op.op == H.FAULT and op.get("family") == "clock_skew", {"offset_s": -112.8})
    assert not F14.recognise(ix, result.verdicts["settles_by_owner"])


def test_the_same_settle_by_a_worker_is_not_f14() -> None:
    result, _ = replay(F14.path, "settles_by_owner")
    settle = result.verdicts["settles_by_owner"].witness[-1]
    ix = edited(result, lambda op: op.index == settle, {"actor": "worker"})
    assert not F14.recognise(ix, result.verdicts["settles_by_owner"])


def _reaper_tick(*, ahead_before_tick: bool) -> tuple[Index, Verdict]:
    """A hand-built reaper invocation on the records' axis (no epoch): an interactive row leased to 300 s;
    the reaper's invocation begins at 100 s and dead-letters the row at 120 s (true time: 180 s of lease
    left). A ``clock_skew +500`` fault on the reaper fires before the invocation (its staleness ``now``
    reads 600) or, in the near miss, only after it began; a ``clock_skew -600`` fault strikes the reaper
    during the invocation either way (on the Sync transport, inside a nested attempt)."""
    reaper, owner = "reaper#1", "interactive:h1:9"
    row = {"status": "running", "claimed_by": owner, "lease_expires": 300, "pending_effect": "", "has_request": False}
    ahead = (H.FAULT, "", OpType.INFO, {"family": "clock_skew", "kind": "offset", "target": reaper, "offset_s": 500.0})
    specs: list[tuple[float, str, str, str, OpType, dict[str, Any]]] = [
        (0.0, "nemesis", H.PHASE, "", OpType.INFO, {"phase": "chaos"}),
        (
            1.0,
            "client",
            H.STORE,
            "r1",
            OpType.OK,
            {
                "transition": NAMES[START_RUN],
                "site": "run.begin",
                "identity": owner,
                "actor": "interactive",
                "matched": True,
                "row": row,
            },
        ),
    ]
    tick = (100.0, reaper, H.SEGMENT, "", OpType.INVOKE, {"entry": "reap", "identity": "reaper:h1:1"})
    before = [(90.0, "nemesis", *ahead), tick] if ahead_before_tick else [tick, (105.0, "nemesis", *ahead)]
    specs += before
    specs += [
        (
            110.0,
            "nemesis",
            H.FAULT,
            "",
            OpType.INFO,
            {"family": "clock_skew", "kind": "offset", "target": reaper, "offset_s": -600.0},
        ),
        (
            120.0,
            reaper,
            H.STORE,
            "r1",
            OpType.OK,
            {
                "transition": NAMES[DEAD_LETTER_STALE],
                "site": "reaper.dead_letter",
                "identity": "reaper:h1:1",
                "actor": "reaper",
                "matched": True,
                "row": {**row, "status": "failed", "claimed_by": ""},
            },
        ),
    ]
    ops = [Op(i, t, proc, op, run, type_, value) for i, (t, proc, op, run, type_, value) in enumerate(specs)]
    (check,) = [inv for inv in INVARIANTS if inv.name == "settles_by_owner"]
    verdict = check.check(ops)
    assert verdict.witness == (1, len(ops) - 1), verdict.explanation
    return index_of(ops), verdict


def test_the_staleness_clock_is_read_when_the_reaper_invocation_begins() -> None:
    """The offset that counts is the one in force when the invocation read ``now``: a later lagging fault
    (a nested attempt's, on the Sync transport) does not make the dead-letter another mechanism."""
    ix, verdict = _reaper_tick(ahead_before_tick=True)
    assert F14.recognise(ix, verdict)


def test_a_reaper_pushed_ahead_only_after_its_invocation_read_the_clock_is_not_f14() -> None:
    ix, verdict = _reaper_tick(ahead_before_tick=False)
    assert not F14.recognise(ix, verdict)


def test_f12s_stalled_settle_is_not_f14() -> None:
    result, ix = replay(F12.path, "settles_by_owner")
    assert not F14.recognise(ix, result.verdicts["settles_by_owner"])
    assert explain("settles_by_owner", ix, result.verdicts["settles_by_owner"]) is F12


# ---- F-05 as the outcome oracle sees it ----------------------------------------------------------


def test_f05_tells_its_caller_failed_over_a_queued_row() -> None:
    result, ix = replay(F05.path, "every_run_terminates")
    verdict = result.verdicts["segment_outcome_true"]
    assert "'failed'" in verdict.explanation
    assert explain("segment_outcome_true", ix, verdict) is F05


def test_the_same_failed_outcome_after_a_dispatch_that_returned_is_not_f05() -> None:
    result, _ = replay(F05.path, "every_run_terminates")
    ix = edited(result, lambda op: op.op == H.DISPATCH and op.type is OpType.FAIL, {}, type=OpType.OK)
    assert not F05.recognise(ix, result.verdicts["segment_outcome_true"])


# ---- the recorded non-guarantees -----------------------------------------------------------------


def test_a_renewal_that_threw_on_a_row_still_held_is_ng_store_error_lease_lost() -> None:
    result, ix = replay(DATA / "ng-store-error-lease-lost.toml", "lease_lost_means_lost")
    verdict = result.verdicts["lease_lost_means_lost"]
    assert explain("lease_lost_means_lost", ix, verdict) is NG["NG-store-error-lease-lost"]
    failed = verdict.witness[1]
    matched = edited(result, lambda op: op.index == failed, {"matched": True, "row": {}}, type=OpType.OK)
    assert not NG["NG-store-error-lease-lost"].recognise(matched, verdict), "a renewal that matched is KB-6's route"
    suspend = edited(result, lambda op: op.index == failed, {"transition": NAMES[SUSPEND_RUN]})
    assert not NG["NG-store-error-lease-lost"].recognise(suspend, verdict)


def test_a_reaper_that_counts_its_failed_redispatch_as_a_dead_letter_is_the_recorded_one() -> None:
    result, ix = replay(DATA / "ng-reaper-dispatch-dead-letter.toml", "reaper_account_true")
    verdict = result.verdicts["reaper_account_true"]
    ng = NG["NG-reaper-dispatch-dead-letter"]
    assert explain("reaper_account_true", ix, verdict) is ng
    returned = edited(result, lambda op: op.op == H.DISPATCH and op.type is OpType.FAIL, {}, type=OpType.OK)
    assert not ng.recognise(returned, verdict), "the dispatch returned: a different route"
    reason = edited(result, lambda op: op.op == H.ACCOUNT, {"reason": "not_retryable"})
    assert not ng.recognise(reason, verdict)


def test_the_sync_outer_call_told_requeued_after_its_nested_attempt_ended_the_run() -> None:
    result, ix = replay(DATA / "ng-sync-outer-requeued.toml", "segment_outcome_true")
    verdict = result.verdicts["segment_outcome_true"]
    ng = NG["NG-sync-outer-requeued"]
    assert explain("segment_outcome_true", ix, verdict) is ng
    not_inline = edited(result, lambda op: op.op == H.DELIVER, {"inline": False})
    assert not ng.recognise(not_inline, verdict), "no wake-up handled inline: not the Sync route"
    left = verdict.witness[1]
    other = edited(result, lambda op: op.index == left, {}, process="worker9#1")
    assert not ng.recognise(other, verdict), "another process ended the run: not the nested attempt"


def test_a_cancelled_boundary_whose_write_step_could_not_be_stored_is_the_fail_closed_rule() -> None:
    result, ix = replay(DATA / "ng-cancel-probe-fail-closed.toml", "cancel_observed_at_boundary")
    verdict = result.verdicts["cancel_observed_at_boundary"]
    ng = NG["NG-cancel-probe-fail-closed"]
    assert explain("cancel_observed_at_boundary", ix, verdict) is ng
    insert = verdict.witness[1]
    read_only = edited(
        result,
        lambda op: op.op == H.EVENT and op.get("seq") == result.history[insert].get("seq"),
        {"true_effect": "read_only"},
    )
    assert not ng.recognise(read_only, verdict), "a read-only step is fail-soft: it must end CANCELLED"
    stored = edited(result, lambda op: op.op == H.EVENT and op.type is OpType.FAIL, {}, type=OpType.OK)
    assert not ng.recognise(stored, verdict), "the step was stored: the fail-closed rule did not fire"


def test_a_sync_tick_whose_clock_was_read_ahead_before_the_heal_is_f14() -> None:
    """Triage seed 5 draw 478 (Sync, deployment ranges): the T14's own clock is true time (the quiet
    phase healed it during the tick's nested attempts), but the invocation's `now` was read 3,498 s ahead,
    and the row's lease was still ahead in true time: F-14, read at the invocation's clock read."""
    result, ix = replay(DATA / "f14-sync-invocation-clock-before-heal.toml", "settles_by_owner")
    dead_letter = result.history[result.verdicts["settles_by_owner"].witness[-1]]
    assert abs(dead_letter.get("clock_s") - ix.epoch_s - dead_letter.time_s) < 1, "the statement's clock is true"
    assert explain("settles_by_owner", ix, result.verdicts["settles_by_owner"]) is F14


def test_the_same_sync_tick_with_a_lagging_reaper_clock_is_not_f14() -> None:
    result, _ = replay(DATA / "f14-sync-invocation-clock-before-heal.toml", "settles_by_owner")
    ix = edited(
        result,
        lambda op: op.op == H.FAULT and op.get("family") == "clock_skew" and op.get("target") == "reaper#1",
        {"offset_s": -3498.0},
    )
    assert not F14.recognise(ix, result.verdicts["settles_by_owner"])
