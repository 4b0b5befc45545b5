"""The chains of F-13, F-19, F-20 and F-21 (``register.chains_stalls``, ``register.chains_clocks``) in a
guided search that names the finding, as the mechanism bench runs it: met on a branch, within a budget the
search without the chain did not meet it in (seeds 0-9 at 2,000 simulations: F-21 at one seed), and the
find written, read and replayed to the same digest."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.bench.mechanisms import entries, entry_target_of, target_of
from sim.explore.base import Budget, Clock
from sim.explore.counterexample import read, write
from sim.explore.discovery import Discovery
from sim.explore.guided import GuidedExplorer, guided_search

MET = {"F-21": (2, 18), "F-13": (3, 23), "F-19": (1, 57), "F-20": (0, 73)}
"""Seed and simulations at which a named guided search met each, when written."""


def budget_for(finding: str, seed: int, simulations: int) -> Budget:
    entry = entries([finding])[0]
    return entry_target_of(entry).budget(Budget(seconds=1e9, simulations=simulations, seed=seed))


@pytest.mark.parametrize("finding", sorted(MET))
def test_a_named_search_meets_the_finding_where_it_was_measured(finding: str) -> None:
    seed, simulations = MET[finding]
    found = Discovery()
    target = target_of(entries([finding])[0], "own")
    guided_search(target, budget_for(finding, seed, simulations + 50), Clock(), discovery=found)
    assert finding in found.met
    assert found.met[finding].simulations == simulations
    assert found.branched > 0


def test_f21_met_on_a_branch_is_written_read_and_replayed(tmp_path: Path) -> None:
    seed, simulations = MET["F-21"]
    target = target_of(entries(["F-21"])[0], "own")
    report = GuidedExplorer().explore(target, budget_for("F-21", seed, simulations + 50))
    v = next(v for v in report.violations if v.mechanism == "F-21")
    assert v.counterexample.cuts, "met on a branch"
    again = read(write(v.counterexample, tmp_path / "f21.toml"))
    assert again.cuts == v.counterexample.cuts
    replayed = again.run()
    assert replayed.digest == v.counterexample.digest
    assert "dead_letter_reason_matches_cause" in replayed.violations
