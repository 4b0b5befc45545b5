"""Register entries as search targets (:mod:`sim.explore.entry_target`): the budget the bench and the CLI share,
the chains it makes the guided explorer climb, the one-line error for anything else, and the outcome
read from what the search met (near misses: another mechanism of the same invariant)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.errors import LeaselabError
from register.findings import FINDINGS
from register.nonguarantees import NON_GUARANTEES
from scenarios.families import FAMILIES
from sim.bench.mechanisms import entries, entry_target_of
from sim.explore.base import Budget, ExploreReport, Target
from sim.explore.entry_target import check_entry_target, entry_target_ids, outcome, outcome_text
from sim.explore.guided import chains


def test_every_finding_and_non_guarantee_is_a_target_with_the_invariants_behind_it() -> None:
    assert entry_target_ids() == [f.id for f in FINDINGS] + [n.id for n in NON_GUARANTEES]
    for finding in FINDINGS:
        entry = check_entry_target(finding.id)
        assert entry.invariants == finding.invariants and entry.families == finding.families
        assert entry.deployment is finding.deployment_ranges
    for ng in NON_GUARANTEES:
        entry = check_entry_target(ng.id)
        assert entry.invariants == ng.invariants and entry.families == FAMILIES and entry.scenario == "default"


def test_the_cli_target_is_the_bench_search() -> None:
    for entry in entries():
        assert check_entry_target(entry.id) == entry_target_of(entry)


def test_the_budget_judges_the_entry_alone_and_stops_at_it() -> None:
    plain = Budget(seconds=12.0, simulations=345, seed=6, shrink_tests=50)
    entered = check_entry_target("F-18").budget(plain)
    assert (entered.seconds, entered.simulations, entered.seed, entered.shrink_tests) == (12.0, 345, 6, 50)
    assert entered.stop_at_first and entered.mechanisms == frozenset({"F-18"})
    assert entered.invariants == frozenset({"non_idempotent_at_most_once"})
    assert entered.stops_at("F-18") and not entered.stops_at("F-01")  # same invariant, another mechanism
    assert not entered.wants("every_write_accounted") and not plain.stop_at_first


def test_naming_f16_is_what_climbs_its_chain() -> None:
    assert "F-16" not in chains(Budget())
    assert chains(check_entry_target("F-16").budget(Budget())) == ("F-16",)
    assert chains(check_entry_target("F-01").budget(Budget())) == ()


def test_the_setup_is_explore_words() -> None:
    assert check_entry_target("F-16").setup == "default --ranges deployment --faults clock_skew"
    assert check_entry_target("NG-identity").setup == "default --faults all"


@given(st.text(max_size=40).filter(lambda s: s not in entry_target_ids()))
def test_anything_else_is_one_line_naming_target(name: str) -> None:
    with pytest.raises(LeaselabError) as caught:
        check_entry_target(name)
    assert caught.value.field == "--target"
    line = caught.value.one_line()
    assert "\n" not in line and line.startswith("--target: unknown target")
    assert "cost:NAME" in str(caught.value)  # the hint, which one line drops when there is no room


def report_with(*met: str) -> ExploreReport:
    report = ExploreReport("guided", Target("default", "head"))
    report.extra["mechanisms"] = [
        {"mechanism": m, "invariant": "non_idempotent_at_most_once", "first_simulation": 10 * i, "first_s": 0.5 * i}
        for i, m in enumerate(met, 1)
    ]
    return report


def test_the_outcome_is_the_first_meeting_of_that_mechanism() -> None:
    report = report_with("F-01", "F-18")
    doc = outcome(report, check_entry_target("F-18"))
    assert report.extra["target"] is doc
    assert (doc["met"], doc["first_simulation"], doc["first_s"]) == (True, 20, 1.0)
    assert outcome_text(doc) == "target F-18 met after 20 simulations / 1.000 s"


def test_another_mechanism_of_the_same_invariant_is_not_the_target() -> None:
    doc = outcome(report_with("F-01", "unexplained: store ok T5"), check_entry_target("F-18"))
    assert doc["met"] is False and "first_simulation" not in doc
    assert outcome_text(doc).startswith("target F-18 not met (the register meets it on ")
    assert doc["register_setup"].endswith("--ranges deployment --faults store,slow")
