"""F-05 over a new owner's settle, met by the deployment search on ``pipeline_stops`` and stored open until
triaged: recovery requeued the run (T11), its wake-up dispatch threw, and its owner-guarded dead-letter
stalled; another worker claimed the requeued run from a duplicated wake-up and completed it (T7 at
executor.settle_completed); the dead-letter then matched nothing and the segment reported FAILED over that
worker's COMPLETED row. The refusal is F-05's, as on the route over a new owner's requeue: the guard can
match no row after the segment's own requeue; the stall only decides whose row the segment is told over.
The route test fails on the recognisers before this triage; the near misses change one step each."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from checks import Index
from checks import history as H
from checks.fused import index_of
from checks.history import Op, OpType
from model.statements import NAMES, RENEW_LEASE
from register.explain import explain
from register.findings import finding
from register.mechanism import mechanism_of
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult

CASE = Path(__file__).parent / "data" / "f05-dead-letter-over-new-owner-completion.toml"
F05 = finding("F-05")
SOMR = "segment_outcome_matches_row"


def replay() -> SimulationResult:
    cx = read(CASE)
    result = cx.run()
    assert result.digest == cx.digest
    assert SOMR in result.violations
    return result


def edited(result: SimulationResult, pick: Callable[[Op], bool], change: Mapping[str, Any]) -> Index:
    """The history with ``change`` merged into the value of every record ``pick`` selects."""
    ops = [op._replace(value={**op.value, **change}) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def witness(result: SimulationResult) -> tuple[Op, Op]:
    row, segment = (result.history[i] for i in result.verdicts[SOMR].witness)
    return row, segment


def test_a_stalled_dead_letter_over_a_new_owners_completion_is_f05() -> None:
    result = replay()
    row, segment = witness(result)
    assert row.get("site") == "executor.settle_completed" and row.process != segment.process
    assert segment.get("outcome") == "failed"
    ix = index_of(result.history)
    assert explain(SOMR, ix, result.verdicts[SOMR]) is F05
    assert mechanism_of(SOMR, ix, result.verdicts[SOMR]).explained
    assert F05.recognise(ix, result.verdicts["segment_outcome_true"])


def test_the_refusal_is_the_segments_own_guard_after_its_own_requeue() -> None:
    """What makes it F-05: the segment's T11 matched, its dispatch threw, its dead-letter matched nothing
    after the other worker's settle."""
    result = replay()
    row, segment = witness(result)
    own = [
        op
        for op in result.history
        if op.op == H.STORE and op.process == segment.process and op.get("site") == "recovery.requeue"
        if op.type is OpType.OK and op.index < row.index
    ]
    assert own and own[-1].get("matched")
    dead = [op for op in result.history if op.process == segment.process and op.get("site") == "recovery.dead_letter"]
    assert dead[-1].type is OpType.OK and not dead[-1].get("matched") and dead[-1].index > row.index


def test_the_same_history_with_the_dead_letter_matched_is_not_f05() -> None:
    result = replay()
    ix = edited(
        result,
        lambda op: op.op == H.STORE and op.type is OpType.OK and op.get("site") == "recovery.dead_letter",
        {"matched": True},
    )
    assert not F05.recognise(ix, result.verdicts[SOMR])


def test_the_same_history_without_the_new_owners_claim_is_not_f05() -> None:
    result = replay()
    row, _ = witness(result)
    ix = edited(
        result,
        lambda op: op.op == H.STORE and op.process == row.process and op.get("site") == "run_queued.claim",
        {"transition": NAMES[RENEW_LEASE]},
    )
    assert not F05.recognise(ix, result.verdicts[SOMR])


def test_the_same_history_with_a_delivered_wake_up_is_not_f05() -> None:
    """The segment's own dispatch succeeded: no outer catch, no dead-letter route."""
    result = replay()
    _, segment = witness(result)
    ops = [
        op._replace(type=OpType.OK)
        if op.op == H.DISPATCH and op.type is OpType.FAIL and op.process == segment.process
        else op
        for op in result.history
    ]
    assert ops != list(result.history)
    assert not F05.recognise(index_of(ops), result.verdicts[SOMR])


def test_a_reapers_settle_as_the_row_is_not_this_route() -> None:
    """Only a worker segment's own settle: the same T7 written at the reaper's site is refused."""
    result = replay()
    row, _ = witness(result)
    ix = edited(result, lambda op: op.index == row.index, {"site": "reaper.dead_letter"})
    assert not F05.recognise(ix, result.verdicts[SOMR])
    assert explain(SOMR, ix, result.verdicts[SOMR]) is None


def test_the_route_over_a_new_owners_requeue_is_still_f05() -> None:
    cx = read(Path(__file__).parent / "data" / "f05-dead-letter-over-new-owner-requeue.toml")
    result = cx.run()
    assert explain(cx.invariant, index_of(result.history), result.verdicts[cx.invariant]) is F05
