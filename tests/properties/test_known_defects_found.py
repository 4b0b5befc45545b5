"""Every catalogued defect (scenarios/known_defects.py) is found by the swarm in its defective policy,
never on the same draws in its fixed one, and its minimal counterexample is small and replays.

Budgets are simulations, not seconds, so each run is the same run: the swarm's draws depend only on
its seed. ``BUDGET`` is about three times the mean number of draws until the defect's invariant
first failed, measured over seeds 0-3 (KB-1: 355, 53, 296, 23; KB-2: 80, 69, 39, 25; KB-3: >400, 67,
5, 106; KB-5: 3, 2, 2, 6; KB-6: 1 each; KB-7: 46, 45, 13, 72; KB-8: 103, 102, 3, 11; KB-9: 58, 25, 51,
20; KB-10: 1 each; KB-11: 1, 3, 1, 2; KB-12: 3, 8, 109, 28; KB-13: 38, 13, 35, 49), so a change of the
world that reshuffles the draws still finds each defect with high probability. The fixed policy is
run on the very draws that found the defect (paired); the nightly run repeats both on more seeds with
the fixed policy over the whole budget.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from scenarios.known_defects import KNOWN_DEFECTS, KnownDefect
from sim.explore.base import Budget, Target, shrink
from sim.explore.counterexample import read, to_toml, write
from sim.explore.mutants import Draw, swarm_batch
from sim.explore.swarm import SwarmExplorer

SEED = 1
BUDGET = {
    "KB-1": 550,
    "KB-2": 160,
    "KB-3": 450,
    "KB-5": 20,
    "KB-6": 5,
    "KB-7": 150,
    "KB-8": 200,
    "KB-9": 120,
    "KB-10": 5,
    "KB-11": 10,
    "KB-12": 120,
    "KB-13": 110,
}
NIGHTLY_SEEDS = range(2, 10)
MAX_FAULTS = 3


def defective(kb: KnownDefect) -> Target:
    return Target(kb.scenario, kb.defective_policy, dict(kb.defective_flags), kb.families)


def fixed(kb: KnownDefect) -> Target:
    return Target(kb.scenario, kb.fixed_policy, dict(kb.fixed_flags), kb.families)


def first_violation(target: Target, invariant: str, simulations: int, seed: int) -> Draw | None:
    return next((d for d in swarm_batch(target, simulations, seed) if invariant in d.result.violations), None)


@cache
def found(defect_id: str, seed: int = SEED) -> Draw:
    kb = next(k for k in KNOWN_DEFECTS if k.id == defect_id)
    draw = first_violation(defective(kb), kb.invariant, BUDGET[kb.id], seed)
    assert draw is not None, (
        f"{kb.id}: the swarm (seed {seed}) did not violate {kb.invariant} within {BUDGET[kb.id]} simulations "
        f"of {kb.scenario} under {kb.defective_policy} {dict(kb.defective_flags)} with faults {kb.families}"
    )
    return draw


def paired_fixed_violations(kb: KnownDefect, simulations: int, seed: int) -> list[int]:
    """The draw numbers among the first ``simulations`` where the fixed policy violates the invariant."""
    return [d.number for d in swarm_batch(fixed(kb), simulations, seed) if kb.invariant in d.result.violations]


def test_every_catalogued_defect_has_a_budget() -> None:
    assert set(BUDGET) == {kb.id for kb in KNOWN_DEFECTS}


@pytest.mark.parametrize("kb", KNOWN_DEFECTS, ids=lambda kb: kb.id)
def test_the_swarm_finds_the_defect_within_its_budget(kb: KnownDefect) -> None:
    assert found(kb.id).number <= BUDGET[kb.id]


@pytest.mark.parametrize("kb", KNOWN_DEFECTS, ids=lambda kb: kb.id)
def test_the_fixed_policy_never_violates_on_the_draws_that_found_the_defect(kb: KnownDefect) -> None:
    assert paired_fixed_violations(kb, found(kb.id).number, SEED) == []


@pytest.mark.parametrize("kb", KNOWN_DEFECTS, ids=lambda kb: kb.id)
def test_the_minimal_counterexample_has_at_most_three_faults_and_replays(kb: KnownDefect, tmp_path: Path) -> None:
    draw = found(kb.id)
    target = defective(kb)
    cx, _ = shrink(
        target,
        draw.profile,
        draw.seed,
        kb.invariant,
        draw.result.fault_script,
        expected_digest=draw.result.digest,
        max_tests=300,
        explorer="swarm",
    )
    assert len(cx.faults) <= MAX_FAULTS, to_toml(cx)
    replay = read(write(cx, tmp_path / f"{kb.id}.toml")).run()
    assert replay.digest == cx.digest, to_toml(cx)
    assert kb.invariant in replay.violations, to_toml(cx)


def test_the_batch_draws_what_the_swarm_explorer_draws() -> None:
    """The batches above are the swarm explorer's own draws: on a target where only the defect fails,
    the explorer stops at the same simulation as the batch."""
    kb = next(k for k in KNOWN_DEFECTS if k.id == "KB-12")
    report = SwarmExplorer().explore(
        defective(kb), Budget(seconds=1e9, simulations=BUDGET[kb.id], seed=SEED, stop_at_first=True)
    )
    assert [v.invariant for v in report.violations] == [kb.invariant]
    assert report.violations[0].simulations_until_found == found(kb.id).number


@pytest.mark.nightly
@pytest.mark.parametrize("seed", NIGHTLY_SEEDS)
@pytest.mark.parametrize("kb", KNOWN_DEFECTS, ids=lambda kb: kb.id)
def test_on_more_seeds_the_defect_is_found_and_the_fix_holds_over_the_whole_budget(kb: KnownDefect, seed: int) -> None:
    draw = first_violation(defective(kb), kb.invariant, 4 * BUDGET[kb.id], seed)
    assert draw is not None, f"{kb.id} not found within {4 * BUDGET[kb.id]} simulations (seed {seed})"
    assert paired_fixed_violations(kb, BUDGET[kb.id], seed) == []
