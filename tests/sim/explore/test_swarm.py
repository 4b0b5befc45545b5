"""``sim.explore.swarm.SwarmExplorer``: finds, shrinks and reports distinct violations, deterministically.

Budgets are counted in simulations (never seconds), so every report here is a pure function of its
seed.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

import pytest

from checks import history as H
from sim.explore.base import Budget, ExploreReport, Target, signature
from sim.explore.discovery import mechanism_key
from sim.explore.swarm import SwarmExplorer

UNLIMITED_S = 1e9
SLOW_ON_DEFAULT = Target("default", "head", families=("slow",))
BUDGET = Budget(seconds=UNLIMITED_S, simulations=60, seed=1)


@cache
def slow_report() -> ExploreReport:
    return SwarmExplorer().explore(SLOW_ON_DEFAULT, BUDGET)


def summary(report: ExploreReport) -> list[tuple[Any, ...]]:
    return [
        (
            v.invariant,
            v.signature,
            v.simulations_until_found,
            v.counterexample.seed,
            v.counterexample.digest,
            [f.text() for f in v.counterexample.faults],
        )
        for v in report.violations
    ]


def test_slow_faults_on_default_break_every_write_accounted() -> None:
    report = slow_report()
    assert "every_write_accounted" in {v.invariant for v in report.violations}


def test_the_simulation_budget_is_spent_exactly() -> None:
    assert slow_report().simulations == 60


def test_the_same_seed_gives_the_same_report() -> None:
    again = SwarmExplorer().explore(SLOW_ON_DEFAULT, BUDGET)
    assert again.simulations == slow_report().simulations
    assert summary(again) == summary(slow_report())


def test_every_counterexample_replays_to_its_digest_and_violation() -> None:
    report = slow_report()
    assert report.violations
    for violation in report.violations:
        cx = violation.counterexample
        result = cx.run()
        assert result.digest == cx.digest, violation.invariant
        assert violation.invariant in result.violations
        assert cx.invariant == violation.invariant
        assert (cx.scenario, cx.policy, cx.explorer) == ("default", "head", "swarm")


def test_counterexamples_use_only_the_allowed_families() -> None:
    for violation in slow_report().violations:
        assert {f.family for f in violation.counterexample.faults} <= {"slow"}


def test_signatures_are_distinct_and_name_the_invariant_and_fault_kinds() -> None:
    report = slow_report()
    signatures = [v.signature for v in report.violations]
    assert len(signatures) == len(set(signatures))
    for violation in report.violations:
        assert violation.signature == signature(violation.invariant, violation.counterexample.faults)


@pytest.mark.slow
def test_one_invariant_with_two_mechanisms_is_reported_twice_and_each_mechanism_once() -> None:
    """adr-104 on default: every_write_accounted fails as F-02 and as unexplained shapes; each distinct
    mechanism is one report, shrunk while it keeps that mechanism."""
    report = SwarmExplorer().explore(
        Target("default", "adr-104", families=("crash", "audit", "cancel")),
        Budget(seconds=UNLIMITED_S, simulations=40, seed=2),
    )
    by_invariant = Counter(v.invariant for v in report.violations)
    twice = [name for name, count in by_invariant.items() if count >= 2]
    assert twice, by_invariant
    for name in twice:
        assert len({v.mechanism for v in report.violations if v.invariant == name}) == by_invariant[name]
    keys = [mechanism_key(v.invariant, v.mechanism) for v in report.violations]
    assert len(keys) == len(set(keys))
    met = {m["mechanism"]: m for m in report.extra["mechanisms"]}
    for v in report.violations:
        assert v.mechanism in met
        assert v.simulations_until_found == met[v.mechanism]["first_simulation"]


@pytest.mark.slow
def test_max_per_invariant_caps_the_unexplained_mechanisms_of_one_invariant() -> None:
    report = SwarmExplorer().explore(
        Target("default", "adr-104", families=("crash", "audit", "cancel")),
        Budget(seconds=UNLIMITED_S, simulations=40, seed=2, max_per_invariant=1),
    )
    unexplained = Counter(v.invariant for v in report.violations if not v.known)
    assert report.violations and unexplained
    assert max(unexplained.values()) == 1


def test_stop_at_first_stops_after_the_first_violating_simulation() -> None:
    report = SwarmExplorer().explore(
        SLOW_ON_DEFAULT, Budget(seconds=UNLIMITED_S, simulations=60, seed=1, stop_at_first=True)
    )
    assert report.violations
    first = min(v.simulations_until_found for v in slow_report().violations)
    assert report.simulations == first
    assert {v.simulations_until_found for v in report.violations} == {first}


def test_minimal_scripts_are_concrete_and_anchored() -> None:
    for violation in slow_report().violations:
        faults = violation.counterexample.faults
        assert [f.at for f in faults] == sorted({f.at for f in faults})
        assert all(f.anchor for f in faults)
        assert violation.faults_in_minimal == len(faults)


def test_a_families_restriction_keeps_other_families_out_of_the_counterexample_runs() -> None:
    report = SwarmExplorer().explore(
        Target("single_run", "adr-104", families=("audit",)), Budget(seconds=UNLIMITED_S, simulations=40, seed=1)
    )
    assert any(v.counterexample.faults for v in report.violations), "audit faults break adr-104"
    for violation in report.violations:
        run = violation.counterexample.run()
        fired = {op.value["family"] for op in run.history if op.op == H.FAULT}
        assert fired <= {"audit"}, violation.invariant
        assert {f.family for f in violation.counterexample.faults} <= {"audit"}


def test_a_family_that_cannot_break_head_reports_nothing() -> None:
    report = SwarmExplorer().explore(
        Target("single_run", "head", families=("audit",)), Budget(seconds=UNLIMITED_S, simulations=30, seed=1)
    )
    assert report.simulations == 30
    assert report.violations == []


def test_progress_is_called_once_per_simulation() -> None:
    calls: list[tuple[int, int]] = []
    report = SwarmExplorer().explore(
        Target("single_run", "head", families=("audit",)),
        Budget(seconds=UNLIMITED_S, simulations=7, seed=3),
        lambda simulations, violations: calls.append((simulations, violations)),
    )
    assert [c[0] for c in calls] == list(range(1, report.simulations + 1))


def test_the_document_has_the_report_fields() -> None:
    doc = slow_report().document()
    assert (doc["scenario"], doc["policy"], doc["faults"], doc["explorer"], doc["simulations"]) == (
        "default",
        "head",
        ["slow"],
        "swarm",
        60,
    )
    assert [v["invariant"] for v in doc["violations"]] == [v.invariant for v in slow_report().violations]
    for entry, violation in zip(doc["violations"], slow_report().violations, strict=True):
        assert entry["minimal_script"] == [f.text() for f in violation.counterexample.faults]
        assert entry["signature"] == list(violation.signature)
