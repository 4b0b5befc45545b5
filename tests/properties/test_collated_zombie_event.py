"""NG-identity's collated route over an earlier owner's stream (``unique_event_sequence``).

A worker that lost its run (hung in a tool past its lease; the reaper requeued the run and another
worker claimed it and stored events) renewed over the row a third worker held under a distinct identity
the store's ``utf8mb4_unicode_ci`` equates with its own, and stored an event at its own next sequence:
the collision is with the stream of the worker between them, not with the equated holder's. The pair
test of :func:`register.recognisers.collated_identity` (every witness process one of the equated pair)
refuses it; :func:`register.recognisers.ownership.collated_zombie_event` takes it, and nothing wider.
Near misses are hand-edited from the replayed history.
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
from register.explain import explain
from register.recognisers import collated_identity, identity_not_unique
from register.recognisers.ownership import collated_zombie_event, equated_statements
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult

CASE = Path(__file__).parent / "data" / "ng-identity-collated-zombie-event-over-earlier-owner.toml"


@pytest.fixture(scope="module")
def replayed() -> SimulationResult:
    cx = read(CASE)
    result = cx.run()
    assert result.digest == cx.digest
    return result


def _edited(result: SimulationResult, pick: Callable[[Op], bool], change: Callable[[Op], Mapping[str, Any]]) -> Any:
    ops = [op._replace(**change(op)) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def _value(**update: Any) -> Callable[[Op], Mapping[str, Any]]:
    return lambda op: {"value": {**op.value, **update}}


def _witness(result: SimulationResult) -> tuple[Op, Op]:
    first, later = (result.history[i] for i in result.verdicts["unique_event_sequence"].witness)
    return first, later


def test_the_case_is_ng_identity_by_this_route(replayed: SimulationResult) -> None:
    ix, verdict = replayed.indexed(), replayed.verdicts["unique_event_sequence"]
    entry = explain("unique_event_sequence", ix, verdict)
    assert entry is not None and entry.id == "NG-identity"
    assert collated_zombie_event(ix, verdict)
    assert identity_not_unique(ix, verdict) and collated_identity(ix, verdict)


def test_the_pair_test_alone_refuses_it(replayed: SimulationResult) -> None:
    """Why the search left it unexplained: the first event's process is neither side of any equated pair."""
    ix = replayed.indexed()
    first, later = _witness(replayed)
    pairs = equated_statements(ix, later.run, later.index)
    assert pairs
    assert all(first.process not in {s.process, h.process} for s, h in pairs)
    assert any(s.process == later.process for s, _h in pairs)


def test_near_misses_are_refused(replayed: SimulationResult) -> None:
    verdict = replayed.verdicts["unique_event_sequence"]
    first, later = _witness(replayed)
    zombie = later.process

    def is_chaos(op: Op) -> bool:
        return op.op == H.PHASE and op.get("phase") == "chaos"

    def zombie_equated(op: Op) -> bool:
        return op.op == H.STORE and op.process == zombie and "equated" in op.value

    def unequated(op: Op) -> Mapping[str, Any]:
        return {"value": {k: v for k, v in op.value.items() if k != "equated"}}

    near_misses = {
        "a binary store": _edited(replayed, is_chaos, lambda op: {"value": {"collation": "binary"}}),
        "the zombie's renewals matched on their own": _edited(replayed, zombie_equated, unequated),
        "the later event under another identity than its guard": _edited(
            replayed, lambda op: op.index == later.index, _value(identity="worker:app-2:109")
        ),
        "the first event's process never claimed the run": _edited(
            replayed, lambda op: op.index == first.index, _value(identity="worker:APP-1:999")
        ),
        "two different sequences": _edited(replayed, lambda op: op.index == later.index, _value(seq=99)),
        "the first event a landing, not an event": _edited(
            replayed, lambda op: op.index == first.index, lambda op: {"op": H.TOOL}
        ),
    }
    for what, ix in near_misses.items():
        assert not collated_zombie_event(ix, verdict), what
        assert not collated_identity(ix, verdict), what


def test_a_collision_within_the_equated_pair_is_the_pair_tests_not_this_one(replayed: SimulationResult) -> None:
    verdict = replayed.verdicts["unique_event_sequence"]
    first, later = _witness(replayed)
    ix = _edited(replayed, lambda op: op.index == first.index, lambda op: {"process": later.process})
    assert not collated_zombie_event(ix, verdict), "both events by the zombie"
    assert collated_identity(ix, verdict), "the pair test's own shape"


def test_the_order_and_the_invariant_matter(replayed: SimulationResult) -> None:
    ix, verdict = replayed.indexed(), replayed.verdicts["unique_event_sequence"]
    swapped = dataclasses.replace(verdict, witness=tuple(reversed(verdict.witness)))
    assert not collated_zombie_event(ix, swapped), "the zombie's event first"
    other = dataclasses.replace(verdict, name="settles_by_owner")
    assert not collated_zombie_event(ix, other), "another invariant"
