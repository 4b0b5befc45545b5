"""``FaultPlan.decider``'s profile-mode closure decides exactly what :meth:`FaultPlan.decide` does.

The closure keeps its own bookkeeping (per request type, the runs of its requests, counted only when a
fault strikes), so it is compared with the method over arbitrary request streams: the same faults with
the same indexes and anchors, and the same random stream left behind.
"""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from model.requests import CountEvents, FindRun, MaxSequence, Request, SelectStale
from scenarios.loader import load_scenario
from scenarios.schema import FaultsModel
from sim.world.faults import FaultPlan

RUNS = ("run-001", "run-002", "run-003")
REQUESTS = st.one_of(
    st.builds(FindRun, st.sampled_from(RUNS)),
    st.builds(MaxSequence, st.sampled_from(RUNS)),
    st.builds(CountEvents, st.sampled_from(RUNS)),
    st.builds(SelectStale, st.integers(0, 10), st.just(50)),
)


def _faults() -> FaultsModel:
    faults = load_scenario("default").faults
    store = faults.store.model_copy(update={"probability": 0.2, "slow_probability": 0.1})
    crash = faults.crash.model_copy(update={"probability": 0.1})
    return faults.model_copy(update={"store": store, "crash": crash})


FAULTS = _faults()


@given(st.lists(REQUESTS, max_size=60), st.integers(0, 2**32 - 1), st.integers(0, 60))
def test_the_closure_decides_as_the_method_does(requests: list[Request], seed: int, heal_at: int) -> None:
    by_method = FaultPlan.build(FAULTS, random.Random(seed), None)
    by_closure = FaultPlan.build(FAULTS, random.Random(seed), None)
    decide = by_closure.decider()
    assert decide != by_closure.decide  # the closure, not the method
    for index, request in enumerate(requests):
        if index == heal_at:
            by_method.healed = by_closure.healed = True
        closure_fault, method_fault = decide(index, request, "worker"), by_method.decide(index, request, "worker")
        assert closure_fault == method_fault
        assert (closure_fault and closure_fault.anchor) == (method_fault and method_fault.anchor)
    assert [(f, f.anchor) for f in by_closure.fired] == [(f, f.anchor) for f in by_method.fired]
    assert by_closure.rng.random() == by_method.rng.random()


def test_a_plan_that_has_decided_hands_out_its_method() -> None:
    """Counts the method kept would be lost to a fresh closure: it is not handed out."""
    plan = FaultPlan.build(FAULTS, random.Random(0), None)
    plan.decide(0, FindRun("run-001"), "worker")
    assert plan.decider() == plan.decide
