"""Two routes of F-12 and F-15 the 211,200-simulation deployment search met, stored open until the
recognisers learnt them: F-12's stalled settle reaching a resume's row through an earlier holder's
stale suspend (spec 9 C12) instead of a reaper requeue, and F-15's stalled post-claim read followed by
the resume's release-path settle (``release_failed``) instead of a failed read. Each recogniser accepts
its new route and refuses near-miss histories that change only one step of it; the old recognisers
refused both cases (they were the register's open cases)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from checks import Index, Verdict
from checks import history as H
from checks.fused import index_of
from checks.history import Op, OpType
from checks.index import row_of
from model.statements import CLAIM_FOR_RESUME, CLAIM_QUEUED, NAMES, RENEW_LEASE, REQUEUE, REQUEUE_STALE, SUSPEND_RUN
from register.explain import explain
from register.findings import finding
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult

DATA = Path(__file__).parent / "data"
SUSPEND_ROUTE = DATA / "f12-stale-suspend-hands-on.toml"
RELEASE_ROUTE = DATA / "f15-resume-release-settle.toml"
RELEASE_HAND_ON = DATA / "f12-stale-release-hands-on.toml"
F12, F15 = finding("F-12"), finding("F-15")
SBO = "settles_by_owner"


def replay(path: Path) -> SimulationResult:
    cx = read(path)
    result = cx.run()
    assert result.digest == cx.digest
    assert cx.invariant == SBO and SBO in result.violations
    return result


def edited(result: SimulationResult, pick: Callable[[Op], bool], change: Mapping[str, Any]) -> Index:
    """The history with ``change`` merged into the value of every record ``pick`` selects."""
    ops = [op._replace(value={**op.value, **change}) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def retyped(result: SimulationResult, pick: Callable[[Op], bool], type_: OpType) -> Index:
    ops = [op._replace(type=type_) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def moved_after(result: SimulationResult, record: Op, anchor: Op) -> tuple[Index, Verdict]:
    """The history with ``record`` moved to just after ``anchor``, renumbered, and the verdict's
    witness following its records to their new places."""
    ops = [op for op in result.history if op.index != record.index]
    at = next(i for i, op in enumerate(ops) if op.index == anchor.index) + 1
    ops.insert(at, record)
    place = {op.index: i for i, op in enumerate(ops)}
    verdict = result.verdicts[SBO]
    moved = dataclasses.replace(verdict, witness=tuple(place[i] for i in verdict.witness))
    return index_of(op._replace(index=i) for i, op in enumerate(ops)), moved


def witness(result: SimulationResult) -> tuple[Op, Op]:
    prior, settle = (result.history[i] for i in result.verdicts[SBO].witness)
    return prior, settle


def store(result: SimulationResult, number: str, **where: Any) -> list[Op]:
    """The store records of one T-number matching ``where`` (value fields, or ``process``/``type``)."""
    found = []
    for op in result.history:
        if op.op != H.STORE or str(op.get("transition", "")).partition(" ")[0] != number:
            continue
        if all((getattr(op, k) if k in ("process", "type") else op.get(k)) == v for k, v in where.items()):
            found.append(op)
    return found


# ---- F-12: the row reaches its next owner through an earlier holder's stale suspend ---------------


def test_a_stalled_settle_over_a_resume_after_a_stale_suspend_is_f12() -> None:
    result = replay(SUSPEND_ROUTE)
    ix, verdict = index_of(result.history), result.verdicts[SBO]
    prior, settle = witness(result)
    assert settle.get("site") == "run_queued.position_failed"
    assert row_of(prior).get("claimed_by", "").startswith("resume:")
    assert explain(SBO, ix, verdict) is F12
    assert not F15.recognise(ix, verdict), "the settle itself stalled, issued before the resume's claim"


def test_the_suspend_route_has_no_reaper_requeue_after_the_settlers_claim() -> None:
    """What the old recogniser required and this route lacks: a T13 between the claim and the settle."""
    result = replay(SUSPEND_ROUTE)
    _, settle = witness(result)
    claim = store(result, "T3", process=settle.process, type=OpType.OK)[-1]
    assert not [op for op in store(result, REQUEUE_STALE, type=OpType.OK) if claim.index < op.index < settle.index]


def test_the_same_settle_without_the_stale_suspend_is_not_f12() -> None:
    result = replay(SUSPEND_ROUTE)
    _, settle = witness(result)
    ix = edited(
        result,
        lambda op: op.op == H.STORE and op.get("transition") == NAMES[SUSPEND_RUN] and op.process != settle.process,
        {"transition": NAMES[RENEW_LEASE]},
    )
    assert not F12.recognise(ix, result.verdicts[SBO])


def test_a_suspend_by_a_process_that_held_the_run_only_later_is_not_f12() -> None:
    """The hand-over is an earlier holder's: the same T9 by the resume that claims the run after it (a
    process whose first claim comes after the settler's) is no stale suspend."""
    result = replay(SUSPEND_ROUTE)
    _, settle = witness(result)
    suspend = store(result, SUSPEND_RUN, type=OpType.OK)[0]
    resume = store(result, CLAIM_FOR_RESUME, type=OpType.OK)[0]
    assert resume.index > suspend.index and suspend.process != settle.process
    ops = [op._replace(process=resume.process) if op.index == suspend.index else op for op in result.history]
    ix = index_of(ops)
    assert not F12.recognise(ix, result.verdicts[SBO])


def test_a_suspend_by_a_process_that_never_claimed_the_run_is_not_f12() -> None:
    result = replay(SUSPEND_ROUTE)
    suspend = store(result, SUSPEND_RUN, type=OpType.OK)[0]
    ix = edited(
        result,
        lambda op: op.op == H.STORE and op.process == suspend.process and op.get("transition") == NAMES[CLAIM_QUEUED],
        {"transition": NAMES[RENEW_LEASE]},
    )
    assert not F12.recognise(ix, result.verdicts[SBO])


def test_a_stale_release_by_an_earlier_resume_is_f12() -> None:
    """The other T9 without an owner guard: a resume whose post-claim read stalled releases the run
    (``resume.release``) from the settling worker's RUNNING row, issued after that worker's claim."""
    result = replay(RELEASE_HAND_ON)
    ix, verdict = index_of(result.history), result.verdicts[SBO]
    _, settle = witness(result)
    claim = store(result, "T3", process=settle.process, type=OpType.OK)[-1]
    release = [op for op in store(result, SUSPEND_RUN, type=OpType.OK) if op.get("site") == "resume.release"]
    assert release and release[0].index > claim.index and release[0].process != settle.process
    assert explain(SBO, ix, verdict) is F12


def test_the_same_suspend_without_a_resume_claim_after_it_is_not_f12() -> None:
    result = replay(SUSPEND_ROUTE)
    ix = edited(
        result,
        lambda op: op.op == H.STORE and op.get("transition") == NAMES[CLAIM_FOR_RESUME],
        {"transition": NAMES[RENEW_LEASE]},
    )
    assert not F12.recognise(ix, result.verdicts[SBO])


def test_the_same_suspend_route_from_a_guarded_site_is_not_f12() -> None:
    result = replay(SUSPEND_ROUTE)
    _, settle = witness(result)
    ix = edited(
        result, lambda op: op.op == H.STORE and op.get("site") == settle.get("site"), {"site": "executor.settle_failed"}
    )
    assert not F12.recognise(ix, result.verdicts[SBO])
    assert explain(SBO, ix, result.verdicts[SBO]) is None


def test_the_registered_f12_route_through_the_reaper_still_is_f12() -> None:
    result = replay(F12.path)
    assert explain(SBO, index_of(result.history), result.verdicts[SBO]) is F12


# ---- F-15: the stalled post-claim read, then the release path's settle ---------------------------


def test_a_stalled_resume_read_then_a_failed_release_settle_is_f15() -> None:
    result = replay(RELEASE_ROUTE)
    ix, verdict = index_of(result.history), result.verdicts[SBO]
    prior, settle = witness(result)
    assert settle.get("site") == "resume.release_failed"
    assert row_of(prior).get("claimed_by", "").startswith("worker:")
    assert explain(SBO, ix, verdict) is F15
    assert not F12.recognise(ix, verdict), "the settle was issued after the worker's claim: not F-12"


def test_the_release_route_read_did_not_fail() -> None:
    """What the old recogniser required and this route lacks: a failed position read."""
    result = replay(RELEASE_ROUTE)
    _, settle = witness(result)
    failed = [
        op for op in result.history if op.op == H.READ and op.type is OpType.FAIL and op.process == settle.process
    ]
    assert not failed


def test_the_release_settle_without_the_stall_of_its_read_is_not_f15() -> None:
    result = replay(RELEASE_ROUTE)
    _, settle = witness(result)
    ix = edited(
        result,
        lambda op: (
            op.op == H.FAULT
            and op.get("family") == "store"
            and op.get("kind") == "slow"
            and op.get("target") == settle.process
        ),
        {"kind": "fail"},
    )
    assert not F15.recognise(ix, result.verdicts[SBO])


def test_the_release_settle_without_the_reapers_requeue_is_not_f15() -> None:
    result = replay(RELEASE_ROUTE)
    ix = edited(
        result,
        lambda op: op.op == H.STORE and op.get("transition") == NAMES[REQUEUE_STALE],
        {"transition": NAMES[REQUEUE]},
    )
    assert not F15.recognise(ix, result.verdicts[SBO])


def test_the_release_settle_without_the_failed_release_is_not_f15() -> None:
    """The settle must follow the release (T9 at resume.release) that threw: a T9 from elsewhere is no release."""
    result = replay(RELEASE_ROUTE)
    _, settle = witness(result)
    ix = edited(
        result,
        lambda op: op.op == H.STORE and op.process == settle.process and op.get("site") == "resume.release",
        {"site": "executor.suspend"},
    )
    assert not F15.recognise(ix, result.verdicts[SBO])


def test_the_release_settle_whose_position_read_came_before_the_new_claim_is_not_f15() -> None:
    """The stalled read must return after the other claim: a post-claim read of another site is no stall."""
    result = replay(RELEASE_ROUTE)
    _, settle = witness(result)
    ix = edited(
        result,
        lambda op: op.op == H.READ and op.process == settle.process and op.get("site") == "resume.position",
        {"site": "resume.read"},
    )
    assert not F15.recognise(ix, result.verdicts[SBO])


def test_the_release_settle_issued_before_the_new_claim_is_not_f15() -> None:
    """Move the settle's invoke before the worker's claim: then it is F-12's shape, not F-15's."""
    result = replay(RELEASE_ROUTE)
    prior, settle = witness(result)
    issued = store(result, "T7", process=settle.process, type=OpType.INVOKE)[-1]
    reap = next(op for op in store(result, REQUEUE_STALE, type=OpType.OK) if op.run == settle.run)
    assert reap.index < prior.index < issued.index
    ix, verdict = moved_after(result, issued, reap)
    assert [ix.history[i].value for i in verdict.witness] == [prior.value, settle.value]
    assert not F15.recognise(ix, verdict)


def test_the_registered_f15_routes_still_are_f15() -> None:
    for path in (F15.path, DATA / "f15-resume-position-read.toml"):
        result = replay(path)
        assert explain(SBO, index_of(result.history), result.verdicts[SBO]) is F15, path.name
