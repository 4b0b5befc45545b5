"""The findings met only at the fault ranges of real deployments (F-09 .. F-12): each recogniser accepts
its mechanism, including a variant the sweep met, and refuses the same history once the ground truth it
reads (a clock offset, a commit stall, the event's kind, the settle's site, the settling process) is
changed, and refuses the neighbouring findings' histories."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from checks import Index
from checks import history as H
from checks.fused import index_of
from checks.history import Op, OpType
from checks.index import row_of
from model.constants import LEASE_S
from model.statements import CLAIM_FOR_RESUME, CLAIM_QUEUED, NAMES, RENEW_LEASE, REQUEUE_STALE, SUSPEND_RUN
from register.explain import explain
from register.findings import FINDINGS, FINDINGS_DIR, Finding, finding
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult

DATA = Path(__file__).parent / "data"
F03, F04, F09, F10, F11, F12 = (finding(i) for i in ("F-03", "F-04", "F-09", "F-10", "F-11", "F-12"))


def replay(path: Path) -> SimulationResult:
    cx = read(path)
    result = cx.run()
    assert result.digest == cx.digest
    return result


def edited(result: SimulationResult, pick: Callable[[Op], bool], change: Mapping[str, Any]) -> Index:
    """The result's history with ``change`` merged into the value of every record ``pick`` selects."""
    ops = [op._replace(value={**op.value, **change}) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def is_reaper_requeue(op: Op) -> bool:
    return op.op == H.STORE and op.get("transition") == NAMES[REQUEUE_STALE]


def recognised(path: Path, invariant: str) -> tuple[SimulationResult, Index]:
    result = replay(path)
    assert invariant in result.violations
    return result, index_of(result.history)


# ---- F-09: a lagging clock stamps an expired lease ----------------------------------------------


def test_a_stamp_with_a_clock_lagging_beyond_the_lease_is_f09() -> None:
    result, ix = recognised(F09.path, "writes_fenced_under_lease")
    verdict = result.verdicts["writes_fenced_under_lease"]
    assert explain("writes_fenced_under_lease", ix, verdict) is F09
    assert not F11.recognise(ix, verdict), "no statement stalled: not F-11"


def test_a_skew_that_fires_between_the_clock_read_and_the_stamp_is_still_f09() -> None:
    """The runtime reads the clock before the statement: a fault that moves the clock forward at that
    boundary does not change the lease the stamp writes, which still carries the lagging offset."""
    result, ix = recognised(DATA / "f09-skew-after-clock-read.toml", "writes_fenced_under_lease")
    verdict = result.verdicts["writes_fenced_under_lease"]
    stamp = result.history[verdict.witness[0]]
    offsets = [
        op.get("offset_s")
        for op in ix.of_type(H.FAULT, OpType.INFO)
        if op.get("family") == "clock_skew" and op.get("target") == stamp.process and op.index < stamp.index
    ]
    assert offsets[-1] > 0 > offsets[-2]
    assert explain("writes_fenced_under_lease", ix, verdict) is F09


def test_the_same_expired_stamp_with_a_leading_clock_is_not_f09() -> None:
    result = replay(F09.path)
    verdict = result.verdicts["writes_fenced_under_lease"]
    ix = edited(result, lambda op: op.op == H.FAULT and op.get("family") == "clock_skew", {"offset_s": 2698.7})
    assert not F09.recognise(ix, verdict)
    assert explain("writes_fenced_under_lease", ix, verdict) is None


def test_the_same_expired_stamp_without_a_clock_fault_is_not_f09() -> None:
    result = replay(F09.path)
    verdict = result.verdicts["writes_fenced_under_lease"]
    ix = edited(result, lambda op: op.op == H.FAULT and op.get("family") == "clock_skew", {"family": "cancel"})
    assert not F09.recognise(ix, verdict)


def test_a_write_on_a_cancelled_row_is_neither_f09_nor_f11() -> None:
    result, ix = recognised(F04.path, "writes_fenced_under_lease")
    verdict = result.verdicts["writes_fenced_under_lease"]
    assert not F09.recognise(ix, verdict)
    assert not F11.recognise(ix, verdict)


# ---- F-11: a stalled fence stamp ----------------------------------------------------------------


def test_a_fence_stamp_that_stalls_past_its_lease_is_f11() -> None:
    result, ix = recognised(F11.path, "writes_fenced_under_lease")
    verdict = result.verdicts["writes_fenced_under_lease"]
    assert explain("writes_fenced_under_lease", ix, verdict) is F11
    assert not F09.recognise(ix, verdict), "no clock lagged: not F-09"


def test_a_stalled_stamp_with_a_lagging_clock_too_is_f11() -> None:
    """Neither fault alone expires the lease before the call: the stall needs the lag and the lag the
    stall. F-09 refuses it (a true clock would not have covered the call), F-11 accepts it."""
    result, ix = recognised(DATA / "f11-stall-with-lagging-clock.toml", "writes_fenced_under_lease")
    verdict = result.verdicts["writes_fenced_under_lease"]
    assert not F09.recognise(ix, verdict)
    assert explain("writes_fenced_under_lease", ix, verdict) is F11


def test_the_same_expired_stamp_without_the_stall_is_not_f11() -> None:
    result = replay(F11.path)
    verdict = result.verdicts["writes_fenced_under_lease"]
    stamp = result.history[verdict.witness[0]]
    ix = edited(
        result,
        lambda op: op.op == H.FAULT and op.get("family") == "store" and op.get("target") == stamp.process,
        {"kind": "fail"},
    )
    assert not F11.recognise(ix, verdict)
    assert explain("writes_fenced_under_lease", ix, verdict) is None


def test_an_expired_lease_the_segment_did_not_stamp_itself_is_not_f11() -> None:
    result = replay(F11.path)
    verdict = result.verdicts["writes_fenced_under_lease"]
    stamp = result.history[verdict.witness[0]]
    ix = edited(result, lambda op: op.index == stamp.index, {"site": "executor.boundary"})
    assert not F11.recognise(ix, verdict)


# ---- F-10: a stalled resume's approval collides -------------------------------------------------


def test_a_stalled_resume_approval_in_the_next_owners_stream_is_f10() -> None:
    result, ix = recognised(F10.path, "unique_event_sequence")
    verdict = result.verdicts["unique_event_sequence"]
    kinds = {result.history[i].get("kind") for i in verdict.witness}
    assert "approval" in kinds
    assert explain("unique_event_sequence", ix, verdict) is F10
    assert not F03.recognise(ix, verdict), "no cancel: not F-03"


def test_the_same_collision_of_a_step_event_is_not_f10() -> None:
    """Step events are persisted after a renewal (ADR-104); only the resume coordinator's own events
    are written between the claim and the loop with no renewal."""
    result = replay(F10.path)
    verdict = result.verdicts["unique_event_sequence"]
    ix = edited(result, lambda op: op.op == H.EVENT and op.get("kind") == "approval", {"kind": "llm"})
    assert not F10.recognise(ix, verdict)


def test_the_same_collision_without_the_reapers_requeue_is_not_f10() -> None:
    result = replay(F10.path)
    verdict = result.verdicts["unique_event_sequence"]
    ix = edited(result, is_reaper_requeue, {"transition": NAMES[RENEW_LEASE]})
    assert not F10.recognise(ix, verdict)


def test_the_cancel_probe_zombie_is_not_f10() -> None:
    result, ix = recognised(F03.path, "unique_event_sequence")
    assert not F10.recognise(ix, result.verdicts["unique_event_sequence"])


# ---- F-12: a stalled unguarded settle fails the next owner's row --------------------------------


def test_a_stalled_unguarded_settle_over_the_next_owner_is_f12() -> None:
    result, ix = recognised(F12.path, "settles_by_owner")
    verdict = result.verdicts["settles_by_owner"]
    prior, settle = (result.history[i] for i in verdict.witness)
    assert settle.get("site") == "run_queued.position_failed"
    assert row_of(prior).get("claimed_by") != settle.get("identity")
    assert explain("settles_by_owner", ix, verdict) is F12


def test_the_same_settle_from_a_guarded_site_is_not_f12() -> None:
    result = replay(F12.path)
    verdict = result.verdicts["settles_by_owner"]
    site = result.history[verdict.witness[1]].get("site")
    ix = edited(result, lambda op: op.op == H.STORE and op.get("site") == site, {"site": "executor.settle_failed"})
    assert not F12.recognise(ix, verdict)
    assert explain("settles_by_owner", ix, verdict) is None


def test_the_same_settle_without_the_reapers_requeue_is_not_f12() -> None:
    result = replay(F12.path)
    verdict = result.verdicts["settles_by_owner"]
    ix = edited(result, is_reaper_requeue, {"transition": NAMES[RENEW_LEASE]})
    assert not F12.recognise(ix, verdict)


def test_a_settle_not_issued_right_after_its_own_claim_is_not_f12() -> None:
    """The mechanism is a pre-execution settle issued right after the segment's own claim, while it
    still held the run: with the settling process's last row before it not a claim, it is not F-12."""
    result = replay(F12.path)
    verdict = result.verdicts["settles_by_owner"]
    settle = result.history[verdict.witness[1]]
    ix = edited(
        result,
        lambda op: op.op == H.STORE and op.process == settle.process and op.get("transition") == NAMES[CLAIM_QUEUED],
        {"transition": NAMES[RENEW_LEASE]},
    )
    assert not F12.recognise(ix, verdict)


def test_every_new_finding_file_is_in_the_register_directory() -> None:
    for entry in (F09, F10, F11, F12):
        assert (FINDINGS_DIR / entry.counterexample).exists()
        assert (FINDINGS_DIR / entry.writeup).exists()


# ---- F-13: a stale suspend re-opens an executed write turn --------------------------------------


F01, F13 = finding("F-01"), finding("F-13")


def test_a_stale_suspend_that_reopens_an_executed_write_turn_is_f13() -> None:
    result, ix = recognised(F13.path, "non_idempotent_at_most_once")
    for invariant in ("non_idempotent_at_most_once", "fence_matches_inflight_write"):
        assert explain(invariant, ix, result.verdicts[invariant]) is F13, invariant
    assert not F01.recognise(ix, result.verdicts["non_idempotent_at_most_once"]), "the fence was never cleared"


def test_the_open_notes_case_with_a_reaper_clock_ahead_is_f13() -> None:
    result, ix = recognised(DATA / "f13-reaper-clock-ahead.toml", "non_idempotent_at_most_once")
    assert explain("non_idempotent_at_most_once", ix, result.verdicts["non_idempotent_at_most_once"]) is F13


def test_the_same_double_landing_without_the_late_suspend_is_not_f13() -> None:
    result = replay(F13.path)
    verdict = result.verdicts["non_idempotent_at_most_once"]
    first, second = (result.history[i] for i in verdict.witness)
    ix = edited(
        result,
        lambda op: (
            op.op == H.STORE and first.index < op.index < second.index and op.get("transition") == NAMES[SUSPEND_RUN]
        ),
        {"transition": NAMES[RENEW_LEASE]},
    )
    assert not F13.recognise(ix, verdict)


def test_a_suspend_issued_after_the_later_attempts_claim_is_not_f13() -> None:
    """A T9 the same segment issued after nobody else had claimed the run is the ordinary suspend:
    with the later attempt's claims attributed to the suspending process, nothing was overtaken."""
    result = replay(F13.path)
    verdict = result.verdicts["non_idempotent_at_most_once"]
    first, second = (result.history[i] for i in verdict.witness)
    suspend = next(
        op
        for op in result.history
        if op.op == H.STORE
        and op.type is OpType.OK
        and first.index < op.index < second.index
        and op.get("transition") == NAMES[SUSPEND_RUN]
    )
    ops = [
        op._replace(process=suspend.process)
        if op.op == H.STORE
        and op.index < first.index
        and op.get("transition") in (NAMES[CLAIM_QUEUED], NAMES[CLAIM_FOR_RESUME])
        else op
        for op in result.history
    ]
    assert not F13.recognise(index_of(ops), verdict)


def test_a_completed_write_rerun_is_not_f13() -> None:
    result, ix = recognised(F01.path, "non_idempotent_at_most_once")
    assert not F13.recognise(ix, result.verdicts["non_idempotent_at_most_once"])


@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)
def test_a_finding_is_marked_for_deployment_ranges_exactly_when_its_counterexample_needs_them(finding: Finding) -> None:
    """The report says "not reachable here" for a finding so marked: the mark must agree with the
    ranges its counterexample actually ran under (a clock offset or a commit stall beyond the lease)."""
    faults = read(finding.path).effective_scenario().faults
    beyond_library = faults.store.slow_s[1] > LEASE_S or faults.clock_skew.max_skew_s > LEASE_S
    assert finding.deployment_ranges == beyond_library
