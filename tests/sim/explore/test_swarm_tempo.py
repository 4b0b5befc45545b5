"""The swarm's tempo draws: timing-only defects are found from ``default``, and a counterexample found
under a drawn tempo records it and replays exactly."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from register.known_defects import defect
from scenarios.intensity import Tempo, with_tempo
from scenarios.loader import load_scenario
from sim.explore.base import Budget, Target
from sim.explore.counterexample import read, write
from sim.explore.profiles import draw_tempo
from sim.explore.swarm import SwarmExplorer

KB6 = defect("KB-6")
KB6_FROM_DEFAULT = Target("default", KB6.defective_policy, dict(KB6.defective_flags), KB6.families)


def test_a_tempo_scales_call_latencies_and_replaces_the_statement_latency() -> None:
    base = load_scenario("default")
    fast = with_tempo(base, Tempo(0.5, 0.25))
    assert fast.provider.latency_s == (base.provider.latency_s[0] * 0.5, base.provider.latency_s[1] * 0.5)
    assert [t.latency_s[1] for t in fast.tools] == [t.latency_s[1] * 0.5 for t in base.tools]
    assert fast.world.store_latency_s == 0.25
    assert with_tempo(base, Tempo()) is base and with_tempo(base, None) is base


def test_half_the_tempo_draws_keep_the_scenario_timing_and_the_rest_stay_in_range() -> None:
    rng = random.Random(3)
    tempos = [draw_tempo(rng) for _ in range(400)]
    kept = sum(t == Tempo() for t in tempos)
    assert 150 < kept < 250
    changed = [t for t in tempos if t != Tempo()]
    assert all(1 / 30 <= t.latency_factor <= 3 for t in changed)
    assert all(t.store_latency_s is not None and 0.002 <= t.store_latency_s <= 0.5 for t in changed)


def test_the_swarm_finds_a_timing_only_defect_from_default_with_no_fault_family() -> None:
    """KB-6 needs renewals that share a wall-clock second, which default's own timing never gives."""
    budget = Budget(seconds=1e9, simulations=300, seed=0, stop_at_first=True, invariants=frozenset({KB6.invariant}))
    report = SwarmExplorer().explore(KB6_FROM_DEFAULT, budget)
    assert [v.invariant for v in report.violations] == [KB6.invariant]
    cx = report.violations[0].counterexample
    assert cx.tempo is not None and cx.tempo != Tempo()
    assert cx.run().digest == cx.digest


def test_a_counterexample_with_a_tempo_round_trips_through_its_file(tmp_path: Path) -> None:
    budget = Budget(seconds=1e9, simulations=300, seed=0, stop_at_first=True, invariants=frozenset({KB6.invariant}))
    cx = SwarmExplorer().explore(KB6_FROM_DEFAULT, budget).violations[0].counterexample
    again = read(write(cx, tmp_path / "cx.toml"))
    assert again == cx
    assert again.run().digest == cx.digest


@pytest.mark.slow
def test_a_first_find_that_shrinks_large_is_replaced_by_a_simpler_one_found_after_it() -> None:
    """KB-7 over twelve seeds: every reported counterexample has at most 3 faults, and where the first
    violation's draw shrank larger (some seeds do: refine_simulations > 0), the explorer keeps the time
    of that first find but reports a smaller counterexample found after it."""
    kb7 = defect("KB-7")
    target = Target(kb7.scenario, kb7.defective_policy, dict(kb7.defective_flags), kb7.families)
    refined = 0
    for seed in range(12):
        budget = Budget(
            seconds=1e9, simulations=200, seed=seed, stop_at_first=True, invariants=frozenset({kb7.invariant})
        )
        report = SwarmExplorer().explore(target, budget)
        violation = report.violations[0]
        assert violation.faults_in_minimal <= 3
        if report.extra["refine_simulations"] > 0:
            refined += 1
            assert violation.simulations_until_found == report.simulations
            replay = violation.counterexample.run()
            assert replay.digest == violation.counterexample.digest and kb7.invariant in replay.violations
    assert refined >= 1
