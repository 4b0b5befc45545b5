"""``leaselab bench``: the world benchmark unchanged, and ``--search`` (swarm vs plain Hypothesis) on easy defects.

The full search benchmark (every defect, 5 seeds, 60 s) is not a test; these run one seed of the
defects every searcher finds on its first simulations, with a 2 s budget.
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

import pytest
from typer.testing import CliRunner

from leaselab.cli import app
from sim.bench.search import Median, Speedup, censored_median
from sim.bench.world import WorldBench

pytestmark = pytest.mark.slow

runner = CliRunner()
EASY = ["KB-10", "KB-6"]
SIDE_KEYS = {"median_s", "median_simulations", "median_censored", "found", "fixed_also_fails", "seeds", "runs"}
DEFECT_KEYS = {
    "id",
    "invariant",
    "families",
    "swarm",
    "hypothesis",
    "speedup",
    "speedup_bound",
    "speedup_simulations",
    "speedup_simulations_bound",
    "meets_5x",
    "meets_3_faults",
    "policy",
    "flags",
    "origin",
    "scenario",
    "exhaustive",
    "from_default",
}


def search_args(*defects: str, budget_s: str = "2") -> list[str]:
    defect_args = (a for d in defects for a in ("--defect", d))
    return ["bench", "--search", "--seeds", "1", "--budget-s", budget_s, "--parallel-simulations", "40", *defect_args]


@pytest.fixture(scope="module")
def easy_document() -> dict[str, Any]:
    result = runner.invoke(app, [*search_args(*EASY), "--json"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


# ---- bench --search --json ------------------------------------------------------------------------


def test_search_json_has_one_entry_per_requested_defect_in_catalogue_order(easy_document: dict[str, Any]) -> None:
    assert set(easy_document) == {"defects", "summary", "parallel"}
    assert [d["id"] for d in easy_document["defects"]] == ["KB-6", "KB-10"]
    assert all(set(d) == DEFECT_KEYS for d in easy_document["defects"])


def test_search_json_sides_carry_medians_found_counts_and_runs(easy_document: dict[str, Any]) -> None:
    for entry in easy_document["defects"]:
        assert set(entry["swarm"]) == SIDE_KEYS | {"max_faults_in_minimal"}
        assert set(entry["hypothesis"]) == SIDE_KEYS | {"budget_s"}
        assert entry["swarm"]["seeds"] == entry["hypothesis"]["seeds"] == 1
        assert len(entry["swarm"]["runs"]) == len(entry["hypothesis"]["runs"]) == 1
        assert isinstance(entry["meets_5x"], bool) and isinstance(entry["meets_3_faults"], bool)


def test_swarm_finds_the_easy_defects_on_its_first_simulations(easy_document: dict[str, Any]) -> None:
    for entry in easy_document["defects"]:
        swarm = entry["swarm"]
        assert swarm["found"] == 1, entry["id"]
        assert swarm["median_simulations"] <= 3 and not swarm["median_censored"]
        assert swarm["median_s"] < 2
        assert swarm["max_faults_in_minimal"] is not None and swarm["max_faults_in_minimal"] <= 3
        assert entry["meets_3_faults"]


def test_the_swarm_finds_of_the_easy_defects_are_gone_under_their_fixes(easy_document: dict[str, Any]) -> None:
    for entry in easy_document["defects"]:
        assert entry["swarm"]["fixed_also_fails"] == 0, entry["id"]
        assert entry["swarm"]["runs"][0]["fixed_also_fails"] is False


def test_search_summary_counts_the_targets_over_the_requested_defects(easy_document: dict[str, Any]) -> None:
    summary, defects = easy_document["summary"], easy_document["defects"]
    assert summary["defects"] == 2 and summary["seeds"] == 1 and summary["budget_s"] == 2.0
    assert summary["meets_5x"] == sum(d["meets_5x"] for d in defects)
    assert summary["meets_3_faults"] == sum(d["meets_3_faults"] for d in defects)
    assert summary["missing_5x"] == [d["id"] for d in defects if not d["meets_5x"]]
    within = {
        d["id"]: all(r["found"] and r["elapsed_s"] <= 30 for r in d["from_default"]["swarm"]["runs"]) for d in defects
    }
    assert summary["from_default_missing_30s"] == [name for name, ok in within.items() if not ok]
    assert "censoring" in summary


def test_search_json_measures_each_defect_from_default_with_its_families_too(easy_document: dict[str, Any]) -> None:
    for entry in easy_document["defects"]:
        from_default = entry["from_default"]
        assert from_default["origin"] == "default" and from_default["scenario"] == "default"
        assert from_default["swarm"]["seeds"] == 1 and from_default["hypothesis"]["seeds"] == 1
        assert from_default["exhaustive"]["bound"] == 2
        assert isinstance(from_default["found_within_30s"], bool)
    kb6 = next(d for d in easy_document["defects"] if d["id"] == "KB-6")
    assert kb6["scenario"] == "same_second_renewals" and kb6["families"] == []
    assert kb6["from_default"]["swarm"]["found"] == 1, "the swarm's tempo draws reach same-second renewals"


def test_search_json_shows_the_parallel_swarm_speedup(easy_document: dict[str, Any]) -> None:
    parallel = easy_document["parallel"]
    assert parallel["workers"] == 2 and parallel["simulations"] > 0
    # the document rounds the times to the millisecond after computing the speed-up from the exact ones
    assert parallel["speedup"] == pytest.approx(parallel["serial_s"] / parallel["parallel_s"], abs=0.02)
    assert parallel["serial_invariants"] and parallel["parallel_invariants"]


# ---- bench --search as a table, and bad input -----------------------------------------------------


def test_search_table_has_a_row_per_defect_and_names_the_censoring() -> None:
    result = runner.invoke(app, search_args("KB-6", budget_s="1"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["defect", "origin", "invariant"]
    assert lines[1].split()[:3] == ["KB-6", "catalogue:same_second_renewals", "non_idempotent_at_most_once"]
    assert lines[2].split()[:3] == ["KB-6", "default:default", "non_idempotent_at_most_once"]
    assert any(line.startswith("censored: ") for line in lines)


def test_an_unknown_defect_is_one_line_naming_the_option_and_the_valid_ids() -> None:
    result = runner.invoke(app, search_args("KB-99"))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "--defect" in result.stderr and "KB-99" in result.stderr and "KB-13" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_search_options_without_search_are_refused() -> None:
    result = runner.invoke(app, ["bench", "--defect", "KB-6"])
    assert result.exit_code == 2
    assert "--search" in result.stderr


# ---- bench without --search ------------------------------------------------------------------------


def test_bench_of_one_workload_prints_its_world_benchmark() -> None:
    result = runner.invoke(app, ["bench", "--json", "--simulations", "10", "--workload", "single_run"])
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.stdout)) == {f.name for f in fields(WorldBench)}


def test_bench_without_search_reports_both_workloads_and_the_targets_as_ratios_of_one_run() -> None:
    args = ["bench", "--json", "--simulations", "20", "--memory-simulations", "20"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["default"]["workload"] == "default" and document["single_run"]["simulations"] == 20
    raw, ratios = document["raw_simpy_events_per_s"], document["ratios"]
    assert document["default"]["raw_simpy_events_per_s"] == raw == document["single_run"]["raw_simpy_events_per_s"]
    assert ratios["default_events_per_s_over_raw_simpy"] == document["default"]["ratio_to_raw_simpy"]
    assert ratios["single_run_simulations_per_s_per_core"] == document["single_run"]["simulations_per_s"]
    assert set(document["met"]) == {"default_5x", "single_run_2500_per_core", "events_one_fifth_of_raw", "memory_flat"}
    for workload in ("default", "single_run"):
        layers = document["layers"][workload]
        assert layers["workload"] == workload and sum(layers["shares"].values()) == pytest.approx(1.0, abs=0.01)


# ---- censored medians and speed-ups ---------------------------------------------------------------


def test_median_of_found_runs_is_exact() -> None:
    assert censored_median([(3.0, True), (1.0, True), (2.0, True)]) == Median(2.0, False)


def test_median_sorts_runs_not_found_last_and_is_then_a_lower_bound() -> None:
    assert censored_median([(60.0, False), (60.0, False), (1.0, True)]) == Median(60.0, True)
    assert censored_median([(60.0, False), (2.0, True), (1.0, True)]) == Median(2.0, False)


def test_median_of_an_even_count_averages_the_middle_two() -> None:
    assert censored_median([(1.0, True), (3.0, True), (60.0, False), (5.0, True)]) == Median(4.0, False)


def test_a_censored_hypothesis_median_makes_the_speedup_a_lower_bound_that_meets_only_past_the_target() -> None:
    assert Speedup.of(Median(60.0, True), Median(6.0, False)).at_least(5)
    assert not Speedup.of(Median(20.0, True), Median(6.0, False)).at_least(5)


def test_a_censored_swarm_median_never_meets_the_speedup_target() -> None:
    assert Speedup.of(Median(60.0, False), Median(60.0, True)).bound == "upper"
    assert not Speedup.of(Median(60.0, True), Median(60.0, True)).at_least(1)
