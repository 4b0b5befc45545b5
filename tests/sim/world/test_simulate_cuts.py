"""Chained prefix cuts (``sim.world.conditioned.simulate_cuts``), what the guided explorer's footholds
branch with: the prefix must be the given run's exactly, the same cuts must give the same history, the
scenario's targeted faults still ahead must fire in the suffix, and the raised rates must hold for the
burst only."""

from __future__ import annotations

import random

import pytest

from model.policy import resolve_policy
from model.requests import FindRun
from scenarios.loader import load_scenario
from scenarios.schema import FaultsModel
from sim.explore.profiles import raised
from sim.world.conditioned import simulate_cuts, simulate_from
from sim.world.faults import FaultPlan
from sim.world.simulate import simulate

SCENARIO = "register/entries/sync/tool_outlives_lease_sync.toml"


def records(result, upto: int) -> list[tuple[object, ...]]:  # type: ignore[no-untyped-def]
    return [(op.op, op.type, op.process, op.value) for op in result.history[:upto]]


@pytest.mark.parametrize("seed", [0, 3, 11])
def test_the_prefix_is_the_runs_own_and_the_same_cuts_replay_it(seed: int) -> None:
    scenario = load_scenario(SCENARIO).at_deployment_ranges()
    policy = resolve_policy("head")
    plain = simulate(scenario, policy, seed)
    cut = len(plain.history) // 3
    first = simulate_cuts(scenario, policy, seed, script=plain.fault_script, cuts=[(cut, 99)])
    assert records(first, cut) == records(plain, cut)
    second = simulate_cuts(scenario, policy, seed, script=first.fault_script, cuts=[(cut, 99), (cut + 10, 7)])
    assert records(second, cut + 10) == records(first, cut + 10)
    again = simulate_cuts(scenario, policy, seed, script=second.fault_script, cuts=[(cut, 99), (cut + 10, 7)])
    assert again.digest == second.digest


def test_another_suffix_seed_draws_another_suffix() -> None:
    scenario = load_scenario(SCENARIO).at_deployment_ranges()
    plain = simulate(scenario, "head", 2)
    digests = {simulate_cuts(scenario, "head", 2, script=plain.fault_script, cuts=[(20, s)]).digest for s in range(6)}
    assert len(digests) > 1


def test_cuts_must_be_positive_and_increasing() -> None:
    scenario = load_scenario(SCENARIO)
    with pytest.raises(ValueError, match="increasing"):
        simulate_cuts(scenario, "head", 0, script=[], cuts=[(10, 1), (10, 2)])
    with pytest.raises(ValueError, match="at least one"):
        simulate_cuts(scenario, "head", 0, script=[], cuts=[])


def test_the_scenarios_targeted_faults_still_ahead_fire_in_the_suffix() -> None:
    """The scenario stretches both tool calls (``[[script]]``); a cut before either call keeps them."""
    scenario = load_scenario(SCENARIO)
    plain = simulate(scenario, "head", 1)
    stretched = [f for f in plain.fault_script if f.family == "slow"]
    assert len(stretched) == 2
    suffix = simulate_cuts(scenario, "head", 1, script=plain.fault_script, cuts=[(2, 5)])
    assert [f.kind for f in suffix.fault_script if f.family == "slow"] == ["stretch", "stretch"]
    # the near miss: a prefix-conditioned run of the causality curves leaves them off
    bare = simulate_from(scenario, "head", 1, script=plain.fault_script, records=2, suffix_seed=5, shuffle=False)
    assert [f for f in bare.fault_script if f.family == "slow"] == []


def test_the_raised_rates_hold_for_the_burst_then_the_plans_own() -> None:
    base = FaultsModel.model_validate({"store": {"probability": 0.01, "slow_probability": 0.005}})
    plan = FaultPlan.build(base, random.Random(0), script=[])
    plan.count_targeted([], raised(base), burst=2)
    plan.follow_profile()
    request = FindRun("run-001")
    assert plan.faults.store.probability == pytest.approx(0.3)
    plan.decide(0, request, "worker")
    plan.decide(1, request, "worker")
    assert plan.faults.store.probability == pytest.approx(0.3)
    plan.decide(2, request, "worker")
    assert plan.faults.store.probability == pytest.approx(0.01)


def test_raised_keeps_a_family_that_is_off_off_and_caps_the_rest() -> None:
    base = FaultsModel.model_validate({"store": {"probability": 0.1, "slow_probability": 0.05}})
    up = raised(base)
    assert up.store.probability == pytest.approx(0.9)
    assert up.store.slow_probability == pytest.approx(0.45)
    assert up.clock_skew.probability == 0.0
