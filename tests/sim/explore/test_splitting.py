"""The two-level splitting estimator (``sim.explore.splitting``).

Unbiasedness rests on two facts tested here: a root that never reaches the level contributes exactly
what a plain run would, and a continuation kept to the end of the root's history (with simpy's own tie
order, as a plain run has it) is the root itself; the statistical check against a long plain run is in
benchmarks/PROFILE.md.
"""

from __future__ import annotations

import pytest

from checks.history import Op
from scenarios.loader import load_scenario
from sim.explore.splitting import applies, estimate, estimate_chain, outlives_lease
from sim.world.conditioned import simulate_from
from sim.world.simulate import simulate


def never(op: Op) -> bool:
    return False


def test_with_a_level_never_reached_the_estimate_is_the_plain_share() -> None:
    scenario = load_scenario("single_run")
    got = estimate(scenario, "adr-104", "NG-queued-orphan", roots=30, splits=4, level=never)
    assert got.reached == 0 and got.simulations == 30
    assert got.rate == got.plain_met / 30
    assert got.low <= got.rate <= got.high


def test_a_continuation_that_keeps_the_whole_history_is_the_root() -> None:
    scenario = load_scenario("default").at_deployment_ranges()
    root = simulate(scenario, "head", 3)
    kept = simulate_from(
        scenario, "head", 3, script=root.fault_script, records=len(root.history), suffix_seed=1, shuffle=False
    )
    assert kept.digest == root.digest


def test_the_estimate_is_deterministic_and_its_interval_holds_it() -> None:
    scenario = load_scenario("default").at_deployment_ranges()
    first = estimate(scenario, "head", "NG-queued-orphan", roots=12, splits=3, level=outlives_lease)
    second = estimate(scenario, "head", "NG-queued-orphan", roots=12, splits=3, level=outlives_lease)
    assert first == second
    assert first.reached > 0 and first.simulations == 12 + 3 * first.reached
    assert 0.0 <= first.low <= first.rate <= first.high <= 1.0
    assert "two-level splitting" in first.sentence()


def test_a_scenario_with_targeted_faults_is_refused_saying_why() -> None:
    scenario = load_scenario("tool_outlives_lease")
    assert "targeted faults" in applies(scenario)
    with pytest.raises(ValueError, match="targeted faults"):
        estimate(scenario, "head", "F-18", roots=1, splits=1)
    assert applies(load_scenario("default")) == ""


def test_rates_are_written_with_two_significant_digits() -> None:
    from sim.explore.splitting import _sig

    assert [_sig(x) for x in (0.0345, 343.75, 121.8, 12345.0, 1.0, 0.0)] == [
        "0.035",
        "340",
        "120",
        "12,000",
        "1.0",
        "0",
    ]


def test_the_chain_estimate_is_deterministic_splits_where_the_chain_steps_and_holds_its_rate() -> None:
    scenario = load_scenario("default").at_deployment_ranges()
    first = estimate_chain(scenario, "head", "F-15", roots=8, splits=2, invariants=["settles_by_owner"])
    second = estimate_chain(scenario, "head", "F-15", roots=8, splits=2, invariants=["settles_by_owner"])
    assert first == second
    assert first.simulations == 8 + 2 * first.reached
    assert 0.0 <= first.low <= first.rate <= first.high <= 1.0
    assert "multilevel splitting" in first.sentence()


def test_with_no_step_taken_the_chain_estimate_is_the_plain_share() -> None:
    scenario = load_scenario("single_run")  # no store stall past a lease: F-18's chain never begins
    got = estimate_chain(scenario, "head", "F-18", roots=10, splits=3)
    assert got.reached == 0 and got.simulations == 10
    assert got.rate == got.plain_met / 10 == 0.0
    assert got.high == pytest.approx(0.3)  # the rule of three over 10 roots


def test_a_chain_estimate_takes_scenarios_with_targeted_faults_and_refuses_a_mechanism_without_a_chain() -> None:
    scenario = load_scenario("tool_outlives_lease").at_deployment_ranges()
    got = estimate_chain(scenario, "head", "F-18", roots=3, splits=2)
    assert got.roots == 3
    with pytest.raises(ValueError, match="no chain"):
        estimate_chain(scenario, "head", "F-01", roots=1, splits=1)
