"""NG-identity's collated route: on a store whose collation equates distinct identities (MariaDB's
utf8mb4_unicode_ci), an owner-guarded statement of one process matched the row another process held.

Each stored counterexample (``tests/properties/data/ng-identity-collated-*.toml``, from
``collated_hosts``: workers ``worker:app-1:N`` and ``worker:APP-1:N``) replays to its digest and is
explained by NG-identity through :func:`register.recognisers.collated_identity` alone; the same faults on a
binary store violate nothing of the kind. Near misses, hand-edited from the replayed history, are refused:
a binary store, a guard that compared equal, the same identity (the shared route, without its fault), two
identities the collation keeps apart, one process on both sides, a third process in the witness.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from checks import history as H
from checks.fused import index_of
from checks.history import Op
from checks.index import row_of
from register.explain import explain
from register.recognisers import collated_identity, identity_not_unique, shared_identity
from register.recognisers.ownership import equated_statements
from sim.explore.counterexample import Counterexample, read
from sim.world.simulate import SimulationResult, simulate

DATA = Path(__file__).parent / "data"
FILES = sorted(DATA.glob("ng-identity-collated-*.toml"))


def _replayed(path: Path) -> tuple[Counterexample, SimulationResult]:
    cx = read(path)
    result = cx.run()
    assert result.digest == cx.digest
    return cx, result


def _edited(result: SimulationResult, pick: Callable[[Op], bool], change: Callable[[Op], Mapping[str, Any]]) -> Any:
    ops = [op._replace(**change(op)) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def _equated(result: SimulationResult, cx: Counterexample) -> tuple[Op, Op]:
    verdict = result.verdicts[cx.invariant]
    last = max(verdict.witness)
    run = result.history[verdict.witness[0]].run
    pairs = equated_statements(result.indexed(), run, last)
    assert pairs, "the replay holds a collated match before its symptom"
    return pairs[0]


def test_seven_counterexamples_cover_the_routes_invariants() -> None:
    assert len(FILES) == 7
    assert {read(f).invariant for f in FILES} == {
        "settles_by_owner",
        "writes_fenced_under_lease",
        "unique_event_sequence",
        "non_idempotent_at_most_once",
        "terminal_row_no_stale_fence",
        "requeue_budget_respected",
    }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_replays_and_is_ng_identity_by_the_collated_route_alone(path: Path) -> None:
    cx, result = _replayed(path)
    ix, verdict = result.indexed(), result.verdicts[cx.invariant]
    entry = explain(cx.invariant, ix, verdict)
    assert entry is not None and entry.id == "NG-identity"
    assert collated_identity(ix, verdict)
    assert not shared_identity(ix, verdict), "no identity fault: the collation alone equated the two"
    statement, holder = _equated(result, cx)
    assert statement.get("guard") != statement.get("equated") == row_of(holder).get("claimed_by")
    assert str(statement.get("guard")).lower() == str(statement.get("equated")).lower()
    assert statement.process != holder.process


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_the_same_faults_on_a_binary_store_keep_the_invariant(path: Path) -> None:
    cx = read(path)
    binary = simulate(cx.effective_scenario(), cx.policy, cx.seed, script=cx.faults, collation="binary")
    assert cx.invariant not in binary.violations


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_near_misses_are_refused(path: Path) -> None:
    cx, result = _replayed(path)
    verdict = result.verdicts[cx.invariant]
    statement, holder = _equated(result, cx)
    held = statement.get("equated")

    def is_chaos(op: Op) -> bool:
        return op.op == H.PHASE and op.get("phase") == "chaos"

    def without(key: str) -> Callable[[Op], Mapping[str, Any]]:
        return lambda op: {"value": {k: v for k, v in op.value.items() if k != key}}

    def guard(value: str) -> Callable[[Op], Mapping[str, Any]]:
        return lambda op: {"value": {**op.value, "guard": value}}

    def equated(op: Op) -> bool:
        return op.op == H.STORE and "equated" in op.value

    near_misses = {
        "a binary store": _edited(result, is_chaos, without("collation")),
        "every guard compared equal": _edited(result, equated, without("equated")),
        "the same identity (the shared route)": _edited(result, equated, guard(str(held))),
        "identities the collation keeps apart": _edited(result, equated, guard("worker:app-2:101")),
        "one process on both sides": _edited(
            result, lambda op: op.process == holder.process, lambda op: {"process": statement.process}
        ),
    }
    for what, ix in near_misses.items():
        assert not collated_identity(ix, verdict), what
        assert not identity_not_unique(ix, verdict), what


def test_a_third_process_in_the_witness_is_refused() -> None:
    """The witness records that are no statement (events, tool calls, landings) moved to another process."""
    moved = 0
    for path in FILES:
        cx, result = _replayed(path)
        verdict = result.verdicts[cx.invariant]
        others = [i for i in verdict.witness if result.history[i].op != H.STORE]
        if not others:
            continue
        ix = _edited(
            result,
            lambda op, at=others[-1]: op.index == at,
            lambda op: {"process": "worker9#1", "value": {**op.value, "process": "worker9#1"}},
        )
        assert not collated_identity(ix, verdict), path.stem
        moved += 1
    assert moved >= 3


def test_a_stolen_identity_on_a_binary_store_is_the_shared_route_not_the_collated_one() -> None:
    _cx, result = _replayed(DATA / "shrink-identity-unshrunk.toml")
    ix = result.indexed()
    stolen = [name for name in result.violations if shared_identity(ix, result.verdicts[name])]
    assert stolen
    for name in stolen:
        assert not collated_identity(ix, result.verdicts[name])
        assert not any("equated" in op.value for op in ix.rows)


def test_the_shared_route_is_held_to_the_invariants_it_was_triaged_on() -> None:
    """On terminal_row_no_stale_fence a stolen identity in the witness is not enough: the shared route
    takes it only by its zombie-fence route (a process that lost the run stamped the owner's row), and
    the collated route needs the store's equated match, so the doctored history is accepted by neither."""
    cx, result = _replayed(DATA / "ng-identity-collated-terminal-row-no-stale-fence.toml")
    verdict = result.verdicts[cx.invariant]
    statement, _holder = _equated(result, cx)
    stolen = str(statement.get("equated"))
    fault = {"family": "identity", "identity": stolen}
    ops = [*result.history]
    chaos = next(i for i, op in enumerate(ops) if op.op == H.PHASE)
    ops.insert(chaos + 1, ops[chaos]._replace(op=H.FAULT, value=fault))
    ops = [op._replace(index=i) for i, op in enumerate(ops)]
    ops = [
        op._replace(value={k: v for k, v in op.value.items() if k != "equated"}) if op.op == H.STORE else op
        for op in ops
    ]
    ix = index_of(ops)
    shifted = dataclasses.replace(verdict, witness=tuple(i + 1 for i in verdict.witness))
    witness = [ix.history[i] for i in shifted.witness]
    assert any(op.get("identity") == stolen or row_of(op).get("claimed_by") == stolen for op in witness), (
        "the witness involves the stolen identity"
    )
    assert not shared_identity(ix, shifted), "the shared route needs its zombie-fence route here"
    assert not identity_not_unique(ix, shifted), "and it is not accepted on this invariant"
