"""Routes the fresh deployment searches met (seeds 802 and 300), each a known mechanism
through an invariant its entry did not list: NG-identity through ``fence_matches_inflight_write`` (a
superseded segment sharing the new owner's identity passes the owner guard and suspends the run with the
new owner's fence standing), NG-identity through ``terminal_row_no_stale_fence`` (a zombie sharing the
owner's identity stamps its fence on the owner's row, its clear fails, the owner's settle leaves it) and
F-12 through ``every_write_accounted`` (F-12's stalled settle fails the
writer's row first, so the writer's fail-closed settle matches nothing). Each is accepted, and near misses
that change one step of the route are refused."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from checks import Index
from checks import history as H
from checks.fused import index_of
from checks.history import Op, OpType
from model.statements import CANCEL, NAMES, RENEW_LEASE
from register.explain import explain
from register.findings import FINDINGS, finding
from register.nonguarantees import NON_GUARANTEES
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult

DATA = Path(__file__).parent / "data"
FENCE_ROUTE = DATA / "ng-identity-suspend-hands-fence.toml"
ZOMBIE_ROUTE = DATA / "ng-identity-zombie-fence.toml"
STALE_FENCE = "terminal_row_no_stale_fence"
AUDIT_ROUTE = DATA / "f12-writer-audit-lost.toml"
FENCE, ACCOUNTED = "fence_matches_inflight_write", "every_write_accounted"
NG_IDENTITY = next(ng for ng in NON_GUARANTEES if ng.id == "NG-identity")
F02, F12, F15 = finding("F-02"), finding("F-12"), finding("F-15")


def replay(path: Path, invariant: str) -> SimulationResult:
    cx = read(path)
    result = cx.run()
    assert result.digest == cx.digest and cx.invariant == invariant
    assert invariant in result.violations
    return result


def edited(result: SimulationResult, pick: Callable[[Op], bool], change: Mapping[str, Any]) -> Index:
    ops = [op._replace(value={**op.value, **change}) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def fence_parts(result: SimulationResult) -> tuple[Op, Op]:
    """(the stamp the resume read, the suspend before the resume's claim)."""
    ops = [result.history[i] for i in result.verdicts[FENCE].witness]
    stamp = next(op for op in ops if op.op == H.STORE and str(op.get("transition")).startswith("T5"))
    claim = next(op for op in ops if op.op == H.STORE and str(op.get("transition")).startswith("T10"))
    suspend = [
        op
        for op in result.history
        if op.op == H.STORE
        and op.type is OpType.OK
        and op.run == claim.run
        and op.index < claim.index
        and str(op.get("transition")).startswith("T9")
    ][-1]
    return stamp, suspend


# ---- NG-identity through fence_matches_inflight_write ---------------------------------------------


def test_a_shared_identity_suspend_that_hands_on_the_fence_is_ng_identity() -> None:
    result = replay(FENCE_ROUTE, FENCE)
    ix, verdict = index_of(result.history), result.verdicts[FENCE]
    assert explain(FENCE, ix, verdict) is NG_IDENTITY
    assert not any(FENCE in f.invariants and f.recognise(ix, verdict) for f in FINDINGS), "no finding's route"
    stamp, suspend = fence_parts(result)
    assert suspend.process != stamp.process and suspend.get("identity") == stamp.get("identity")


def test_the_same_history_without_the_identity_fault_is_not_ng_identity() -> None:
    result = replay(FENCE_ROUTE, FENCE)
    ix = edited(result, lambda op: op.op == H.FAULT and op.get("family") == "identity", {"identity": "worker:hx:999"})
    assert not NG_IDENTITY.recognise(ix, result.verdicts[FENCE])


def test_a_suspender_that_passed_no_owner_guard_is_not_ng_identity() -> None:
    result = replay(FENCE_ROUTE, FENCE)
    _, suspend = fence_parts(result)
    ix = edited(
        result,
        lambda op: op.op == H.STORE and op.process == suspend.process and op.get("transition") == NAMES[RENEW_LEASE],
        {"transition": NAMES[CANCEL]},
    )
    assert not NG_IDENTITY.recognise(ix, result.verdicts[FENCE])


def test_a_suspend_under_another_identity_is_not_ng_identity() -> None:
    result = replay(FENCE_ROUTE, FENCE)
    _, suspend = fence_parts(result)
    ix = edited(result, lambda op: op.index == suspend.index, {"identity": "worker:hx:999"})
    assert not NG_IDENTITY.recognise(ix, result.verdicts[FENCE])


def test_the_stamping_segments_own_suspend_is_not_ng_identity() -> None:
    result = replay(FENCE_ROUTE, FENCE)
    stamp, suspend = fence_parts(result)
    ops = [op._replace(process=stamp.process) if op.index == suspend.index else op for op in result.history]
    assert not NG_IDENTITY.recognise(index_of(ops), result.verdicts[FENCE])


def test_the_other_ng_identity_routes_still_judge_their_invariants() -> None:
    result = replay(FENCE_ROUTE, FENCE)
    ix = index_of(result.history)
    assert explain("writes_fenced_under_lease", ix, result.verdicts["writes_fenced_under_lease"]) is NG_IDENTITY


def test_a_zombie_sharing_the_owners_identity_leaves_its_fence_is_ng_identity() -> None:
    result = replay(ZOMBIE_ROUTE, STALE_FENCE)
    ix, verdict = index_of(result.history), result.verdicts[STALE_FENCE]
    assert explain(STALE_FENCE, ix, verdict) is NG_IDENTITY
    stamp, settle = (result.history[i] for i in (verdict.witness[0], verdict.witness[3]))
    assert stamp.process != settle.process and stamp.get("identity") == settle.get("identity")


def test_the_zombie_fence_without_the_identity_fault_is_not_ng_identity() -> None:
    result = replay(ZOMBIE_ROUTE, STALE_FENCE)
    ix = edited(result, lambda op: op.op == H.FAULT and op.get("family") == "identity", {"identity": "worker:hx:999"})
    assert not NG_IDENTITY.recognise(ix, result.verdicts[STALE_FENCE])
    assert explain(STALE_FENCE, ix, result.verdicts[STALE_FENCE]) is None


def test_a_fence_stamped_by_the_settling_process_is_not_ng_identity() -> None:
    result = replay(ZOMBIE_ROUTE, STALE_FENCE)
    verdict = result.verdicts[STALE_FENCE]
    stamp, settle = (result.history[i] for i in (verdict.witness[0], verdict.witness[3]))
    ops = [op._replace(process=settle.process) if op.index == stamp.index else op for op in result.history]
    assert not NG_IDENTITY.recognise(index_of(ops), verdict)


def test_a_settler_with_no_claim_of_the_run_is_not_ng_identity() -> None:
    result = replay(ZOMBIE_ROUTE, STALE_FENCE)
    verdict = result.verdicts[STALE_FENCE]
    settle = result.history[verdict.witness[3]]
    ix = edited(
        result,
        lambda op: op.op == H.STORE and op.process == settle.process and op.get("transition") == "T3 claimQueued",
        {"transition": NAMES[RENEW_LEASE]},
    )
    assert not NG_IDENTITY.recognise(ix, verdict)


# ---- F-12 through every_write_accounted ------------------------------------------------------------


def audit_parts(result: SimulationResult) -> tuple[Op, Op]:
    """(the stalled settle that ended the run, the writer's fail-closed settle that matched nothing)."""
    landing = result.history[result.verdicts[ACCOUNTED].witness[0]]
    writer = landing.get("process")
    settles = [
        op
        for op in result.history
        if op.op == H.STORE
        and op.type is OpType.OK
        and op.run == landing.run
        and str(op.get("transition")).startswith("T7")
        and op.index > landing.index
    ]
    ending = next(op for op in settles if op.process != writer)
    refused = next(op for op in settles if op.process == writer and not op.get("matched"))
    return ending, refused


def test_a_writers_audit_lost_to_f12s_settle_is_f12() -> None:
    result = replay(AUDIT_ROUTE, ACCOUNTED)
    ix, verdict = index_of(result.history), result.verdicts[ACCOUNTED]
    assert explain(ACCOUNTED, ix, verdict) is F12
    assert not F02.recognise(ix, verdict) and not F15.recognise(ix, verdict)
    assert explain("settles_by_owner", ix, result.verdicts["settles_by_owner"]) is F12
    ending, refused = audit_parts(result)
    assert ending.get("site") == "run_queued.position_failed" and ending.index < refused.index


def test_the_same_landing_whose_writer_settled_is_not_f12() -> None:
    result = replay(AUDIT_ROUTE, ACCOUNTED)
    _, refused = audit_parts(result)
    ix = edited(result, lambda op: op.index == refused.index, {"matched": True})
    assert not F12.recognise(ix, result.verdicts[ACCOUNTED])


def test_the_same_landing_ended_by_a_guarded_settle_is_not_f12() -> None:
    result = replay(AUDIT_ROUTE, ACCOUNTED)
    ending, _ = audit_parts(result)
    ix = edited(
        result, lambda op: op.op == H.STORE and op.get("site") == ending.get("site"), {"site": "executor.settle_failed"}
    )
    assert not F12.recognise(ix, result.verdicts[ACCOUNTED])
    assert explain(ACCOUNTED, ix, result.verdicts[ACCOUNTED]) is None


def test_the_same_landing_ended_by_the_writers_own_settle_is_not_f12() -> None:
    result = replay(AUDIT_ROUTE, ACCOUNTED)
    ending, _ = audit_parts(result)
    writer = result.history[result.verdicts[ACCOUNTED].witness[0]].get("process")
    ops = [op._replace(process=writer) if op.index == ending.index else op for op in result.history]
    assert not F12.recognise(index_of(ops), result.verdicts[ACCOUNTED])
