"""``sim.explore.exhaustive.ExhaustiveExplorer``: every schedule up to a bound, counted exactly, with the
sentence it ends on and counterexamples that replay (tie reversals included)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from scenarios.families import FAMILIES
from sim.explore.base import Target
from sim.explore.counterexample import Counterexample, read, write
from sim.explore.exhaustive import ExhaustiveExplorer, VerifyReport, fault_menu
from sim.explore.profiles import without_probabilities
from sim.world.kernel import TieControl
from sim.world.simulate import SimulationResult, simulate

SINGLE = Target("single_run", "head")
DOCUMENT_KEYS = {"scenario", "policy", "flags", "schedules", "bound", "complete", "elapsed_s", "sentence", "violations"}
QUIET = ("audit", "dispatch")  # families that cannot break head on single_run at bound 1
# (single_run's remote write is non-idempotent, as every MCP tool at head: one provider failure
# after it reruns it from round 1, which is F-01)


@cache
def baseline() -> tuple[SimulationResult, TieControl]:
    scenario = SINGLE.scenario.with_faults(without_probabilities(SINGLE.scenario.faults))
    control = TieControl()
    return simulate(scenario, SINGLE.policy, 0, script=[], ties=control), control


@cache
def verify(families: tuple[str, ...] = FAMILIES, bound: int = 1, max_schedules: int | None = None) -> VerifyReport:
    target = Target("single_run", "head", families=families)
    return ExhaustiveExplorer(max_schedules=max_schedules).verify(target, bound)


def test_bound_0_runs_exactly_the_fault_free_schedule() -> None:
    report = verify(bound=0)
    assert report.schedules == 1
    assert report.violations == []
    assert report.complete
    assert report.sentence() == "no violation up to bound 0"


def test_bound_1_counts_the_baseline_its_tie_groups_and_its_fault_menu() -> None:
    result, control = baseline()
    expected = 1 + len(control.ties()) + len(fault_menu(result.request_types, 0, FAMILIES))
    assert control.ties(), "single_run has same-instant groups"
    assert verify().schedules == expected


@pytest.mark.parametrize("families", [QUIET, ("crash",), ("slow",)])
def test_a_families_restriction_shrinks_the_menu_and_the_count(families: tuple[str, ...]) -> None:
    result, control = baseline()
    menu = fault_menu(result.request_types, 0, families)
    assert {f.family for f in menu} <= set(families)
    assert verify(families).schedules == 1 + len(control.ties()) + len(menu)


def test_the_fault_menu_places_faults_at_or_after_start_in_index_order() -> None:
    result, _ = baseline()
    menu = fault_menu(result.request_types, 10, FAMILIES)
    assert menu and min(f.at for f in menu) == 10
    assert [f.at for f in menu] == sorted(f.at for f in menu)
    assert len(set(menu)) == len(menu)
    assert fault_menu(result.request_types, len(result.request_types), FAMILIES) == []


def test_audit_and_dispatch_faults_cannot_break_single_run_up_to_bound_1() -> None:
    report = verify(QUIET)
    assert report.violations == []
    assert report.complete
    assert report.sentence() == "no violation up to bound 1"


def test_a_single_crash_after_a_write_breaks_every_write_accounted() -> None:
    report = verify(("crash",))
    found = dict(report.violations)
    assert "every_write_accounted" in found
    cx = found["every_write_accounted"]
    assert len(cx.faults) == 1
    assert (cx.faults[0].family, cx.faults[0].kind) == ("crash", "after")
    assert cx.ties == ()
    assert report.sentence().startswith("violations up to bound 1: ")
    assert "every_write_accounted" in report.sentence()


def test_violations_are_sorted_by_invariant_and_each_replays() -> None:
    report = verify()
    names = [name for name, _ in report.violations]
    assert names == sorted(names) and names
    for name, cx in report.violations:
        result = cx.run()
        assert result.digest == cx.digest, name
        assert name in result.violations
        assert (cx.seed, cx.explorer, cx.invariant) == (0, "exhaustive", name)


def test_the_document_matches_the_report() -> None:
    report = verify(("crash",))
    doc = report.document()
    assert set(doc) >= DOCUMENT_KEYS
    assert (doc["schedules"], doc["bound"], doc["complete"], doc["sentence"]) == (
        report.schedules,
        1,
        True,
        report.sentence(),
    )
    assert [v["invariant"] for v in doc["violations"]] == [name for name, _ in report.violations]


def test_a_counterexample_with_a_reversed_tie_replays_from_its_file(tmp_path: Path) -> None:
    """Reverse the first same-instant group (which changes the history), then find a crash that breaks
    every_write_accounted in that order; the file must replay to the same digest, and the same
    faults without the reversal must give another history."""
    result, control = baseline()
    scenario = SINGLE.scenario.with_faults(without_probabilities(SINGLE.scenario.faults))

    def reversed_digest(key: tuple[float, int]) -> str:
        return simulate(scenario, SINGLE.policy, 0, script=[], ties=TieControl(reverse=frozenset({key}))).digest

    key = next(k for k in control.ties() if reversed_digest(k) != result.digest)
    reversed_run = simulate(scenario, SINGLE.policy, 0, script=[], ties=TieControl(reverse=frozenset({key})))
    for fault in fault_menu(reversed_run.request_types, 0, ("crash",)):
        run = simulate(scenario, SINGLE.policy, 0, script=[fault], ties=TieControl(reverse=frozenset({key})))
        if "every_write_accounted" in run.violations:
            break
    else:
        pytest.fail("no crash breaks every_write_accounted after the reversal")
    cx = Counterexample(
        scenario="single_run",
        policy="head",
        seed=0,
        invariant="every_write_accounted",
        digest=run.digest,
        faults=(fault,),
        profile=scenario.faults,
        explorer="exhaustive",
        ties=(key,),
    )
    back = read(write(cx, tmp_path / "ties.toml"))
    assert back.ties == (key,)
    replay = back.run()
    assert replay.digest == cx.digest
    assert "every_write_accounted" in replay.violations
    assert simulate(scenario, SINGLE.policy, 0, script=[fault]).digest != cx.digest


def test_tie_reversals_are_explored_and_counted_as_schedules() -> None:
    with_ties = verify(QUIET)
    without = ExhaustiveExplorer(ties=False).verify(Target("single_run", "head", families=QUIET), 1)
    assert with_ties.schedules - without.schedules == len(baseline()[1].ties())


def test_max_schedules_stops_early_and_the_sentence_says_so() -> None:
    report = verify(QUIET, 1, 5)
    assert report.schedules == 5
    assert not report.complete
    assert report.sentence() == "no violation in the 5 schedules explored (bound 1 not exhausted)"
    assert report.document()["complete"] is False


def test_max_schedules_at_least_the_total_leaves_the_search_complete() -> None:
    total = verify(QUIET).schedules
    report = verify(QUIET, 1, total)
    assert report.schedules == total
    assert report.complete
    assert report.sentence() == "no violation up to bound 1"


def test_an_incomplete_search_with_violations_says_it_is_incomplete() -> None:
    report = verify(("crash",), 1, 10)
    assert report.violations and not report.complete
    assert "not exhausted" in report.sentence()


def test_bound_2_extends_each_schedule_with_one_later_fault_from_its_own_run() -> None:
    """Without ties: 1 + the menu of the baseline + for each level-1 fault, the menu after it of the
    requests that schedule's own run issued."""
    scenario = SINGLE.scenario.with_faults(without_probabilities(SINGLE.scenario.faults))
    result, _ = baseline()
    level1 = fault_menu(result.request_types, 0, QUIET)
    level2 = 0
    for fault in level1:
        own = simulate(scenario, SINGLE.policy, 0, script=[fault], judge=False)
        level2 += len(fault_menu(own.request_types, fault.at + 1, QUIET))
    report = ExhaustiveExplorer(ties=False).verify(Target("single_run", "head", families=QUIET), 2)
    assert level2 > 0
    assert report.schedules == 1 + len(level1) + level2


def test_a_fault_with_an_explicit_index_is_exactly_what_the_schedule_replays() -> None:
    result, _ = baseline()
    fault = next(f for f in fault_menu(result.request_types, 0, ("crash",)) if f.kind == "after" and f.at > 20)
    run = simulate(
        SINGLE.scenario.with_faults(without_probabilities(SINGLE.scenario.faults)), "head", 0, script=[fault]
    )
    assert [(f.at, f.family, f.kind) for f in run.fault_script] == [(fault.at, "crash", "after")]


def test_progress_counts_every_schedule_of_each_level_against_the_level_total() -> None:
    """Level k's total is its parents' children, counted when the level starts; every schedule run is
    reported once, and the search with progress is the search without it."""
    calls: list[tuple[int, int, int, int]] = []
    target = Target("single_run", "head", families=QUIET)
    report = ExhaustiveExplorer(ties=False).verify(target, 2, lambda *call: calls.append(call))
    assert calls[0] == (0, 2, 1, 1)
    for level in (1, 2):
        mine = [c for c in calls if c[0] == level]
        (total,) = {c[3] for c in mine}
        assert [c[2] for c in mine] == list(range(1, total + 1))
        assert all(c[1] == 2 for c in mine)
    assert 1 + sum(c[3] for c in calls if c[0] > 0 and c[2] == 1) == report.schedules
    plain = ExhaustiveExplorer(ties=False).verify(target, 2)
    assert (plain.schedules, plain.violations) == (report.schedules, report.violations)


def test_progress_totals_are_capped_by_max_schedules() -> None:
    calls: list[tuple[int, int, int, int]] = []
    report = ExhaustiveExplorer(max_schedules=6).verify(
        Target("single_run", "head", families=QUIET), 1, lambda *call: calls.append(call)
    )
    assert report.schedules == 6 and not report.complete
    assert calls[-1] == (1, 1, 5, 5)  # the baseline, then 5 of level 1: the cap, not the menu's size
