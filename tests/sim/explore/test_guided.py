"""The guided explorer (``sim.explore.guided``) and the fault plan's kept faults it branches with.

A branch keeps a milestone's faults at their anchors on a fresh world seed: the kept fault must fire
where its anchor falls, the run's fired faults must replay it exactly in script mode (else nothing a
branch finds could be shrunk or written), and the search must be a function of its seed and simulation
count.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from scenarios.loader import load_scenario
from scenarios.script import Fault
from sim.explore.base import Budget, Clock, ExploreReport, Target
from sim.explore.counterexample import read
from sim.explore.discovery import Discovery
from sim.explore.guided import GuidedExplorer, Pool, features, guided_search
from sim.explore.parallel import ParallelSwarmExplorer
from sim.world.simulate import simulate

F18 = Path("register/entries/F-18-stale-snapshot-requeue-reruns-write.toml")
UNLIMITED_S = 1e9


@cache
def f18_target() -> Target:
    scenario = load_scenario("register/entries/sync/tool_outlives_lease_sync.toml").at_deployment_ranges()
    return Target("register/entries/sync/tool_outlives_lease_sync.toml", "head", {}, ("store", "slow"), scenario)


def test_a_kept_fault_fires_at_its_anchor_and_the_fired_faults_replay_in_script_mode() -> None:
    cx = read(F18)
    stall = cx.run().fault_script[0]  # the worker's fence stamp, stalled past its lease (with its anchor)
    scenario = cx.effective_scenario()
    fired = 0
    for seed in range(1, 12):
        branch = simulate(scenario, "head", seed, keep=[stall])
        kept = [f for f in branch.fault_script if f.anchor == stall.anchor]
        # the anchor comes unless an earlier fault of the profile ended or rerouted run-002 first
        if kept and (kept[0].family, kept[0].kind, kept[0].value) == (stall.family, stall.kind, stall.value):
            fired += 1
        replay = simulate(scenario, "head", seed, script=branch.fault_script)
        assert replay.digest == branch.digest
    assert fired >= 3  # seeds 1, 2 and 6 when written


def test_keeping_nothing_is_the_profile_run() -> None:
    scenario = read(F18).effective_scenario()
    assert simulate(scenario, "head", 5, keep=()).digest == simulate(scenario, "head", 5).digest


def test_a_kept_fault_whose_anchor_never_comes_does_not_fire() -> None:
    scenario = read(F18).effective_scenario()
    ghost = Fault(0, "store", "slow", 100.0, "run-999/Update/1")
    branch = simulate(scenario, "head", 5, keep=[ghost])
    assert all(f.anchor != ghost.anchor for f in branch.fault_script)


def test_features_name_the_stalled_fence_stamp_against_the_lease() -> None:
    result = read(F18).run()
    found, faults = features(result.history)
    assert "F store/slow @ T5 executor.fence worker <2L" in found
    assert "F store/slow @ T13 reaper.requeue reaper <2L" in found
    assert "P F store/slow @ T5 executor.fence worker <2L -> F store/slow @ T13 reaper.requeue reaper <2L" in found
    assert [index for _, index in faults] == [op.index for op in result.history if op.op == "fault"]


def test_a_history_with_a_new_feature_is_a_milestone_and_one_without_is_not() -> None:
    cx = read(F18)
    result = cx.run()
    pool = Pool()
    drawn = (cx.seed, cx.profile, cx.tempo)
    assert pool.observe(result, drawn, ["F-18"]) > 0  # type: ignore[arg-type]
    assert len(pool.milestones) == 1
    milestone = pool.milestones[0]
    assert "M F-18" in milestone.new
    assert set(milestone.decisive) <= set(range(len(milestone.faults)))
    assert pool.observe(result, drawn, ["F-18"]) == 0  # type: ignore[arg-type]
    assert len(pool.milestones) == 1


def run_guided(seed: int, simulations: int) -> ExploreReport:
    return GuidedExplorer().explore(
        Target("default", "head", families=("crash", "store", "slow")),
        Budget(seconds=UNLIMITED_S, simulations=simulations, seed=seed),
    )


@pytest.mark.slow
def test_the_same_seed_and_simulations_give_the_same_counterexamples() -> None:
    first, second = run_guided(3, 150), run_guided(3, 150)
    assert first.simulations == second.simulations == 150
    assert first.extra["branched"] == second.extra["branched"] > 0
    assert [(v.mechanism, v.simulations_until_found, v.counterexample.digest) for v in first.violations] == [
        (v.mechanism, v.simulations_until_found, v.counterexample.digest) for v in second.violations
    ]
    assert first.extra["mechanisms"] == [
        {**m, "first_s": n["first_s"]}
        for m, n in zip(second.extra["mechanisms"], first.extra["mechanisms"], strict=True)
    ]


@pytest.mark.slow
def test_every_counterexample_replays_and_shows_its_mechanism() -> None:
    report = run_guided(4, 150)
    assert report.violations
    for v in report.violations:
        replay = v.counterexample.run()
        assert replay.digest == v.counterexample.digest
        assert v.invariant in replay.violations
        assert v.mechanism


@pytest.mark.slow
def test_two_workers_are_deterministic_with_simulations() -> None:
    target = Target("default", "head", families=("crash", "store", "slow"))
    budget = Budget(seconds=UNLIMITED_S, simulations=60, seed=1)
    runs = [ParallelSwarmExplorer(2, "guided").explore(target, budget) for _ in range(2)]
    assert runs[0].simulations == runs[1].simulations == 60
    assert [v.counterexample.digest for v in runs[0].violations] == [
        v.counterexample.digest for v in runs[1].violations
    ]
    assert runs[0].explorer == "guided"


@pytest.mark.slow
def test_guided_meets_f18_on_the_sync_transport_at_deployment_ranges() -> None:
    """The issue's case: F-18 is met once in about 33,000 plain swarm draws; seed 1 of the guided search
    meets it at simulation 1,331 (measured; see benchmarks/PROFILE.md for the medians)."""
    found = Discovery()
    guided_search(f18_target(), Budget(seconds=UNLIMITED_S, simulations=1400, seed=1), Clock(), discovery=found)
    assert "F-18" in found.met
    assert found.met["F-18"].invariants == ["non_idempotent_at_most_once"]
