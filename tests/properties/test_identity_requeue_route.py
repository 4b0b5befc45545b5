"""NG-identity through ``requeue_budget_respected`` by the shared route (met by the deployment search on
``collated_hosts``, own transport, search seed 801, draw 70): an ``identity`` fault gave worker2 worker1's
exact identity; worker1's recovery decided to retry on its own claim's count and its T11 stalled; the
reaper requeued the run and worker2 claimed it up to the budget; the stalled T11 (owner guard only, no
count predicate) matched worker2's row and requeued the run a fourth time.

The collation plays no part (no statement matched by an ``equated`` identity; the same faults on a binary
store violate the same way), so the collated route does not take it. Near misses, each one step of the
route changed on the replayed history, are refused."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from checks import Index
from checks import history as H
from checks.fused import index_of
from checks.history import Op
from checks.index import row_of
from model.statements import CLAIMS, NAMES, RENEW_LEASE, REQUEUE_STALE
from register.explain import explain
from register.findings import finding
from register.mechanism import mechanism_of
from register.nonguarantees import NON_GUARANTEES
from register.recognisers import collated_identity, shared_identity
from register.recognisers.identity_requeue import shared_identity_stale_requeue
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult, simulate

CASE = Path(__file__).parent / "data" / "ng-identity-shared-requeue-budget.toml"
BUDGET = "requeue_budget_respected"
NG_IDENTITY = next(ng for ng in NON_GUARANTEES if ng.id == "NG-identity")


def replay() -> SimulationResult:
    cx = read(CASE)
    result = cx.run()
    assert result.digest == cx.digest and cx.invariant == BUDGET
    assert BUDGET in result.violations
    return result


def parts(result: SimulationResult) -> tuple[Op, Op]:
    """(the stalled recovery requeue, the other process's claim that held the row it matched)."""
    (at,) = result.verdicts[BUDGET].witness
    requeue = result.history[at]
    ix = index_of(result.history)
    claims = [op for op in ix.rows if op.run == requeue.run and op.index < at and ix.number(op) in CLAIMS]
    return requeue, claims[-1]


def edited(result: SimulationResult, pick: Callable[[Op], bool], change: Callable[[Op], Mapping[str, Any]]) -> Index:
    ops = [op._replace(**change(op)) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def value(**changes: Any) -> Callable[[Op], Mapping[str, Any]]:
    return lambda op: {"value": {**op.value, **changes}}


def test_the_stalled_requeue_over_a_sharing_owner_is_ng_identity_by_the_shared_route() -> None:
    result = replay()
    ix, verdict = index_of(result.history), result.verdicts[BUDGET]
    assert explain(BUDGET, ix, verdict) is NG_IDENTITY
    assert mechanism_of(BUDGET, ix, verdict).label() == "NG-identity"
    assert shared_identity_stale_requeue(ix, verdict) and shared_identity(ix, verdict)
    assert not collated_identity(ix, verdict), "no statement matched by a collated identity"
    assert not finding("F-19").recognise(ix, verdict), "an owner's requeue, not a clock-ahead reaper's"
    assert not any("equated" in op.value for op in ix.rows)
    requeue, holder = parts(result)
    assert requeue.process != holder.process
    assert requeue.get("identity") == row_of(holder).get("claimed_by")
    assert row_of(requeue).get("requeue_count") == 4 > row_of(holder).get("requeue_count")


def test_the_same_faults_on_a_binary_store_violate_the_same_way() -> None:
    cx = read(CASE)
    binary = simulate(cx.effective_scenario(), cx.policy, cx.seed, script=cx.faults, collation="binary")
    assert BUDGET in binary.violations
    assert explain(BUDGET, binary.indexed(), binary.verdicts[BUDGET]) is NG_IDENTITY


def test_without_the_identity_fault_it_is_unexplained() -> None:
    result = replay()
    ix = edited(result, lambda op: op.op == H.FAULT and op.get("family") == "identity", value(identity="worker:hx:9"))
    assert not NG_IDENTITY.recognise(ix, result.verdicts[BUDGET])
    assert explain(BUDGET, ix, result.verdicts[BUDGET]) is None


def test_a_row_held_by_the_requeuing_process_itself_is_refused() -> None:
    result = replay()
    requeue, holder = parts(result)
    ix = edited(result, lambda op: op.index == holder.index, lambda op: {"process": requeue.process})
    assert not NG_IDENTITY.recognise(ix, result.verdicts[BUDGET])


def test_a_requeuer_that_never_claimed_the_run_is_refused() -> None:
    result = replay()
    requeue, _holder = parts(result)
    ix = edited(
        result,
        lambda op: op.op == H.STORE and op.process == requeue.process and str(op.get("transition")).startswith("T3"),
        value(transition=NAMES[RENEW_LEASE]),
    )
    assert not NG_IDENTITY.recognise(ix, result.verdicts[BUDGET])


def test_a_holder_under_another_identity_is_refused() -> None:
    result = replay()
    _requeue, holder = parts(result)
    ix = edited(
        result, lambda op: op.index == holder.index, value(row={**row_of(holder), "claimed_by": "worker:app-2:101"})
    )
    assert not NG_IDENTITY.recognise(ix, result.verdicts[BUDGET])


def test_a_reaper_requeue_is_not_this_route() -> None:
    result = replay()
    requeue, _holder = parts(result)
    ix = edited(
        result, lambda op: op.index == requeue.index, value(transition=NAMES[REQUEUE_STALE], site="reaper.requeue")
    )
    assert not shared_identity_stale_requeue(ix, result.verdicts[BUDGET])
    assert not NG_IDENTITY.recognise(ix, result.verdicts[BUDGET])


def test_another_invariant_is_not_taken_by_this_route() -> None:
    result = replay()
    other = dataclasses.replace(result.verdicts[BUDGET], name="settles_by_owner")
    assert not shared_identity_stale_requeue(index_of(result.history), other)
