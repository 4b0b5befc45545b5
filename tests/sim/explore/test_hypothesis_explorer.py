"""``sim.explore.hypo.HypothesisExplorer``: profile-then-schedule search shrinks to a minimal script that
replays. Budgets are simulations (and ``stop_at_first``) so that runs are seeded and short."""

from __future__ import annotations

from functools import cache

import pytest

from sim.explore.base import Budget, ExploreReport, Target, signature
from sim.explore.hypo import HypothesisExplorer, schedule_horizon, violation_type
from sim.world.simulate import simulate

UNLIMITED_S = 1e9
KB6 = Target("same_second_renewals", "head", {"kb6_renew_trusts_changed_rows": True})
CRASH = Target("single_run", "head", families=("crash",))


@cache
def kb6_report() -> ExploreReport:
    return HypothesisExplorer().explore(KB6, Budget(seconds=UNLIMITED_S, simulations=20, seed=0, stop_at_first=True))


@cache
def crash_report() -> ExploreReport:
    return HypothesisExplorer().explore(CRASH, Budget(seconds=UNLIMITED_S, simulations=20, seed=0, stop_at_first=True))


def test_kb6_on_same_second_renewals_is_found_without_faults() -> None:
    report = kb6_report()
    assert [v.invariant for v in report.violations] == ["non_idempotent_at_most_once"]
    violation = report.violations[0]
    assert violation.counterexample.faults == ()
    assert violation.signature == ("non_idempotent_at_most_once",)
    assert violation.simulations_until_found <= 20


def test_a_crash_on_single_run_is_found_with_a_minimal_script_of_at_most_three_faults() -> None:
    report = crash_report()
    assert report.violations
    for violation in report.violations:
        faults = violation.counterexample.faults
        assert 1 <= len(faults) <= 3
        assert {f.family for f in faults} == {"crash"}
        assert violation.simulations_until_found <= 20


@pytest.mark.parametrize("which", ["kb6", "crash"])
def test_the_counterexample_replays_to_its_digest_and_violation(which: str) -> None:
    report = kb6_report() if which == "kb6" else crash_report()
    for violation in report.violations:
        cx = violation.counterexample
        result = cx.run()
        assert result.digest == cx.digest
        assert violation.invariant in result.violations
        assert cx.explorer == "hypothesis"
        assert dict(cx.flags) == dict(report.target.flags)


def test_the_minimal_script_is_one_minimal() -> None:
    violation = crash_report().violations[0]
    cx = violation.counterexample
    scenario = cx.effective_scenario()
    for i in range(len(cx.faults)):
        fewer = cx.faults[:i] + cx.faults[i + 1 :]
        assert violation.invariant not in simulate(scenario, cx.policy, cx.seed, script=fewer).violations


def test_signatures_name_the_invariant_and_the_fault_kinds() -> None:
    for violation in crash_report().violations:
        assert violation.signature == signature(violation.invariant, violation.counterexample.faults)


def test_the_same_seed_finds_the_same_counterexample() -> None:
    again = HypothesisExplorer().explore(CRASH, Budget(seconds=UNLIMITED_S, simulations=20, seed=0, stop_at_first=True))
    first = crash_report()
    assert [(v.signature, v.simulations_until_found, v.counterexample.digest) for v in again.violations] == [
        (v.signature, v.simulations_until_found, v.counterexample.digest) for v in first.violations
    ]


def test_the_report_says_the_schedule_horizon() -> None:
    report = crash_report()
    assert report.extra["schedule_horizon"] == schedule_horizon(CRASH)
    assert report.document()["schedule_horizon"] == report.extra["schedule_horizon"]
    baseline = simulate("single_run", "head", 0, script=[])
    assert report.extra["schedule_horizon"] >= baseline.stats["requests"]


def test_one_exception_class_per_invariant() -> None:
    a, b = violation_type("every_write_accounted"), violation_type("every_run_terminates")
    assert a is violation_type("every_write_accounted")
    assert a is not b
    assert issubclass(a, AssertionError) and issubclass(b, AssertionError)


def test_the_simulation_budget_is_respected() -> None:
    report = HypothesisExplorer(batch_examples=40).explore(
        Target("single_run", "head", families=("audit",)), Budget(seconds=UNLIMITED_S, simulations=10, seed=0)
    )
    assert report.simulations <= 10
