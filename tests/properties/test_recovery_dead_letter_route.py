"""F-05 over a new owner's row: recovery requeued the run (T11), its wake-up dispatch threw, and its
owner-guarded dead-letter stalled; another worker claimed the requeued run and then either requeued it in
turn (met by an explore of ``collated_hosts`` at deployment ranges) or completed it (T7 at
executor.settle_completed; met by the deployment search on ``pipeline_stops``); the dead-letter then
matched nothing and the segment reported FAILED over that worker's row. The refusal is F-05's (the guard
can match no row after the segment's own requeue; QueuedRunFailureRecovery's outer catch ignores it and
returns FAILED); the stall only decides whose row the segment is told over. Each case was stored open
until triaged, and its route test fails on the recognisers before that triage; the near misses change
one step of the route each, on both cases."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from checks import Index
from checks import history as H
from checks.fused import index_of
from checks.history import Op, OpType
from model.statements import NAMES, RENEW_LEASE
from register.explain import explain
from register.findings import finding
from register.mechanism import mechanism_of
from scenarios.overrides import with_collation
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult, simulate

DATA = Path(__file__).parent / "data"
F05 = finding("F-05")
SOMR = "segment_outcome_matches_row"


@dataclass(frozen=True)
class Route:
    """One stored case of the route: its file, the site of the new owner's row, and a site of the same
    statement the route must refuse (the reaper's)."""

    file: str
    row_site: str
    foreign_site: str


ROUTES = {
    "over-a-requeue": Route("f05-dead-letter-over-new-owner-requeue.toml", "recovery.requeue", "reaper.requeue"),
    "over-a-completion": Route(
        "f05-dead-letter-over-new-owner-completion.toml", "executor.settle_completed", "reaper.dead_letter"
    ),
}


@pytest.fixture(params=sorted(ROUTES), scope="module")
def route(request: pytest.FixtureRequest) -> Route:
    return ROUTES[request.param]


@pytest.fixture(scope="module")
def replayed(route: Route) -> SimulationResult:
    cx = read(DATA / route.file)
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


def test_a_stalled_dead_letter_over_a_new_owners_row_is_f05(route: Route, replayed: SimulationResult) -> None:
    row, segment = witness(replayed)
    assert row.get("site") == route.row_site and row.process != segment.process
    assert segment.get("outcome") == "failed"
    ix = index_of(replayed.history)
    assert explain(SOMR, ix, replayed.verdicts[SOMR]) is F05
    assert mechanism_of(SOMR, ix, replayed.verdicts[SOMR]).explained
    assert F05.recognise(ix, replayed.verdicts["segment_outcome_true"])


def test_the_refusal_is_the_segments_own_guard_after_its_own_requeue(replayed: SimulationResult) -> None:
    """What makes it F-05: the segment's T11 matched and its dispatch threw before the other's claim; its
    dead-letter matched nothing after the other worker's row."""
    row, segment = witness(replayed)
    own = [
        op
        for op in replayed.history
        if op.op == H.STORE and op.process == segment.process and op.get("site") == "recovery.requeue"
        if op.type is OpType.OK and op.index < row.index
    ]
    assert own and own[-1].get("matched")
    dead = [op for op in replayed.history if op.process == segment.process and op.get("site") == "recovery.dead_letter"]
    assert dead[-1].type is OpType.OK and not dead[-1].get("matched") and dead[-1].index > row.index


def test_the_same_history_with_the_dead_letter_matched_is_not_f05(replayed: SimulationResult) -> None:
    ix = edited(
        replayed,
        lambda op: op.op == H.STORE and op.type is OpType.OK and op.get("site") == "recovery.dead_letter",
        {"matched": True},
    )
    assert not F05.recognise(ix, replayed.verdicts[SOMR])


def test_the_same_history_without_the_new_owners_claim_is_not_f05(replayed: SimulationResult) -> None:
    row, _ = witness(replayed)
    ix = edited(
        replayed,
        lambda op: op.op == H.STORE and op.process == row.process and op.get("site") == "run_queued.claim",
        {"transition": NAMES[RENEW_LEASE]},
    )
    assert not F05.recognise(ix, replayed.verdicts[SOMR])


def test_the_same_history_with_a_delivered_wake_up_is_not_f05(replayed: SimulationResult) -> None:
    """The segment's own dispatch succeeded: no outer catch, no dead-letter route."""
    _, segment = witness(replayed)
    ops = [
        op._replace(type=OpType.OK)
        if op.op == H.DISPATCH and op.type is OpType.FAIL and op.process == segment.process
        else op
        for op in replayed.history
    ]
    assert ops != list(replayed.history)
    assert not F05.recognise(index_of(ops), replayed.verdicts[SOMR])


def test_the_same_row_at_the_reapers_site_is_not_this_route(route: Route, replayed: SimulationResult) -> None:
    """Only another worker's own requeue or settle: the same row written at the reaper's site is refused."""
    row, _ = witness(replayed)
    ix = edited(replayed, lambda op: op.index == row.index, {"site": route.foreign_site})
    assert not F05.recognise(ix, replayed.verdicts[SOMR])
    assert explain(SOMR, ix, replayed.verdicts[SOMR]) is None


def test_the_registered_f05_case_still_is_f05() -> None:
    cx = read(F05.path)
    result = cx.run()
    ix = index_of(result.history)
    assert explain(cx.invariant, ix, result.verdicts[cx.invariant]) is F05


def test_the_same_faults_on_a_binary_store_are_f05_too() -> None:
    """The collation plays no part: the scenario's store compared identities case-blind, a binary one
    meets the same refused dead-letter over the other worker's requeue."""
    cx = read(DATA / ROUTES["over-a-requeue"].file)
    scenario = cx.effective_scenario()
    assert scenario.world.identity_collation == "unicode_ci"
    result = simulate(with_collation(scenario, "binary"), cx.policy, cx.seed, flags=dict(cx.flags), script=cx.faults)
    assert result.digest != cx.digest
    assert SOMR in result.violations
    assert explain(SOMR, index_of(result.history), result.verdicts[SOMR]) is F05
