"""Footholds (``sim.explore.footholds``): the guided explorer's cuts along a finding's chain.

A run that takes a step of a chain is a foothold at that level; its branches replay the prefix and draw
the rest afresh, and what they find must replay from a counterexample file (its ``cuts``) to the same
digest. The search stays a function of its seed and simulation count."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

import pytest

from scenarios.intensity import Tempo
from scenarios.loader import load_scenario
from sim.explore.base import Budget, Clock, Target
from sim.explore.counterexample import read, write
from sim.explore.discovery import Discovery
from sim.explore.footholds import (
    BRANCHES_PER_LEVEL,
    TIMED_BRANCHES,
    UNAIMED_SHARE,
    Drawn,
    Foothold,
    Footholds,
    branch,
)
from sim.explore.guided import GuidedExplorer, chains, guided_search

SCENARIO = "register/entries/sync/tool_outlives_lease_sync.toml"
F18 = Path("register/entries/F-18-stale-snapshot-requeue-reruns-write.toml")
UNLIMITED_S = 1e9


@cache
def f18_target() -> Target:
    scenario = load_scenario(SCENARIO).at_deployment_ranges()
    return Target(SCENARIO, "head", {}, ("store", "slow"), scenario)


def f18_budget(seed: int, simulations: int) -> Budget:
    return Budget(
        seconds=UNLIMITED_S,
        simulations=simulations,
        seed=seed,
        stop_at_first=True,
        invariants=frozenset({"non_idempotent_at_most_once"}),
        mechanisms=frozenset({"F-18"}),
    )


def test_a_run_at_the_end_of_a_chain_is_a_foothold_with_branches_until_exhausted() -> None:
    cx = read(F18)
    result = cx.run()
    holds = Footholds(("F-18",))
    assert holds.observe(result, Drawn(cx.seed, cx.profile, cx.tempo or Tempo()), []) == 1
    foothold = holds.pool["F-18"][0]
    assert (foothold.level, foothold.cut, foothold.cuts) == (4, 137, ())
    rng = random.Random(0)
    assert holds.pick(rng) is foothold
    scenario = cx.effective_scenario()
    for _ in range(BRANCHES_PER_LEVEL * foothold.level):
        branched, drawn = branch(foothold, scenario, f18_target().policy, rng)
        assert drawn.parent is foothold and drawn.cuts[0][0] == 137
        assert [op.value for op in branched.history[:137]] == [op.value for op in result.history[:137]]
    assert foothold.exhausted and holds.pick(rng) is None


def test_a_run_that_takes_no_step_is_no_foothold() -> None:
    cx = read(F18)
    result = cx.run()
    holds = Footholds(("F-16",))  # no clock ever lags in F-18's run
    assert holds.observe(result, Drawn(cx.seed, cx.profile, Tempo()), []) == 0
    assert holds.pick(random.Random(0)) is None


@pytest.mark.slow
def test_guided_meets_f18_on_a_branch_and_its_file_replays(tmp_path: Path) -> None:
    """Seed 7 met F-18 at simulation 41 when written (a branch; the swarm's median is 3,402)."""
    found = Discovery()
    guided_search(f18_target(), f18_budget(7, 400), Clock(), discovery=found)
    assert "F-18" in found.met and found.met["F-18"].simulations <= 400
    report = GuidedExplorer().explore(f18_target(), f18_budget(7, 400))
    v = report.violations[0]
    assert v.mechanism == "F-18"
    assert v.counterexample.cuts, "met on a branch, as written"
    shown = report.document()["violations"][0]
    assert shown["cuts"] == [list(c) for c in v.counterexample.cuts] and shown["mechanism"] == "F-18"
    path = write(v.counterexample, tmp_path / "f18.toml")
    again = read(path)
    assert again.cuts == v.counterexample.cuts
    replay = again.run()
    assert replay.digest == v.counterexample.digest
    assert "non_idempotent_at_most_once" in replay.violations


@pytest.mark.slow
def test_the_same_seed_and_simulations_give_the_same_counterexamples_with_footholds() -> None:
    target = Target(
        "default", "head", families=("store",), scenario_override=load_scenario("default").at_deployment_ranges()
    )
    budget = Budget(seconds=UNLIMITED_S, simulations=120, seed=2)
    first, second = GuidedExplorer().explore(target, budget), GuidedExplorer().explore(target, budget)
    assert first.simulations == second.simulations == 120
    assert first.extra["branched"] == second.extra["branched"] > 0
    shown = [
        (v.mechanism, v.simulations_until_found, v.counterexample.digest, v.counterexample.cuts)
        for v in first.violations
    ]
    assert shown == [
        (v.mechanism, v.simulations_until_found, v.counterexample.digest, v.counterexample.cuts)
        for v in second.violations
    ]
    for v in first.violations:
        assert v.counterexample.run().digest == v.counterexample.digest


def test_a_chain_whose_finding_was_met_is_closed() -> None:
    cx = read(F18)
    holds = Footholds(("F-16", "F-18"))
    holds.observe(cx.run(), Drawn(cx.seed, cx.profile, cx.tempo or Tempo()), [])
    assert holds.pick(random.Random(0)) is not None
    holds.close(["F-01", "F-18"])
    assert holds.findings == ("F-16",)
    assert holds.pick(random.Random(0)) is None  # F-18's foothold is no longer climbed


def timed_foothold(gaps: list[float], width: float, tempo: Tempo | None = None) -> Foothold:
    """An F-16 foothold at its last step, measured by hand (what its run and branches came to)."""
    cx = read(F18)
    return Foothold("F-16", 2, cx.seed, cx.profile, tempo or Tempo(), (), (), 10, (3, 9), gaps=list(gaps), width=width)


def test_a_timed_foothold_whose_branches_come_near_is_branched_before_one_whose_do_not() -> None:
    holds = Footholds(("F-16",))
    near, far = timed_foothold([0.05, 0.1, 0.2, 0.1], 0.1), timed_foothold([30.0, 31.0, 29.5, 30.2], 0.1)
    holds.pool["F-16"] = [far, near]
    holds.gaps["F-16"] = [*far.gaps, *near.gaps]
    rng = random.Random(0)
    picks = [holds.closest("F-16", [far, near], rng) for _ in range(50)]
    assert picks.count(near) >= 45  # Thompson sampling: mostly the near one, by chance the other
    # the same gaps with a window a hundred times narrower: a branch that comes near seldom meets it,
    # and the far one's wider window wins most picks
    narrow = timed_foothold(near.gaps, 0.001)
    picks = [holds.closest("F-16", [far, narrow], rng) for _ in range(50)]
    assert picks.count(far) >= 40


def test_a_timed_chain_without_an_aim_is_branched_at_its_share_of_picks() -> None:
    holds = Footholds(("F-16",))
    holds.pool["F-16"] = [timed_foothold([1.0], 0.1)]
    rng = random.Random(0)
    picked = sum(holds.pick(rng) is not None for _ in range(400))
    assert abs(picked / 400 - UNAIMED_SHARE) < 0.06  # the other picks go to fresh draws


def test_a_timed_foothold_gets_its_own_budget_of_branches() -> None:
    foothold = timed_foothold([1.0], 0.1)
    assert foothold.timed and not foothold.exhausted
    foothold.branches = TIMED_BRANCHES - 1
    assert not foothold.exhausted
    foothold.branches = TIMED_BRANCHES
    assert foothold.exhausted
    step = Foothold("F-16", 1, 0, foothold.profile, Tempo(), (), (), 5, (3,))
    assert not step.timed and step.last is False


def test_a_branch_of_a_timed_foothold_adds_its_gap() -> None:
    cx = read(Path("register/entries/F-16-lagging-clock-dead-letter.toml"))
    result = cx.run()
    holds = Footholds(("F-16",))
    assert holds.observe(result, Drawn(cx.seed, cx.profile, cx.tempo or Tempo()), []) == 1
    foothold = holds.pool["F-16"][0]
    assert foothold.timed and foothold.gaps == [0.0] and 0 < foothold.width < 1
    assert foothold.aim is None  # no tool spans given: nothing to aim with
    holds.observe(result, Drawn(cx.seed, cx.profile, cx.tempo or Tempo(), ((foothold.cut, 1),), foothold), [])
    assert foothold.gaps == [0.0, 0.0] and holds.gaps["F-16"] == [0.0, 0.0]


@pytest.mark.slow
def test_guided_meets_f16_the_same_way_twice() -> None:
    """Seed 5 met F-16 at simulation 3 when written, on an aimed branch (54 before aims; the swarm's median
    over seeds 0-9: 1,664)."""
    scenario = load_scenario("default").at_deployment_ranges()
    target = Target("default", "head", {}, ("clock_skew",), scenario)
    budget = Budget(
        seconds=UNLIMITED_S,
        simulations=600,
        seed=5,
        stop_at_first=True,
        invariants=frozenset({"dead_letter_reason_matches_cause"}),
        mechanisms=frozenset({"F-16"}),
    )
    first, second = Discovery(), Discovery()
    guided_search(target, budget, Clock(), discovery=first)
    guided_search(target, budget, Clock(), discovery=second)
    assert "F-16" in first.met and first.met["F-16"].simulations <= 30
    assert first.met["F-16"].simulations == second.met["F-16"].simulations


def test_guided_meets_f16_on_an_aimed_branch_and_its_file_replays(tmp_path: Path) -> None:
    """The counterexample of an aimed branch is an ordinary branch's: its cuts (the write's invoke, the
    screened suffix seed) replay it from the file to the same digest."""
    scenario = load_scenario("default").at_deployment_ranges()
    target = Target("default", "head", {}, ("clock_skew",), scenario)
    budget = Budget(
        seconds=UNLIMITED_S,
        simulations=60,
        seed=5,
        stop_at_first=True,
        invariants=frozenset({"dead_letter_reason_matches_cause"}),
        mechanisms=frozenset({"F-16"}),
    )
    report = GuidedExplorer().explore(target, budget)
    v = next(v for v in report.violations if v.mechanism == "F-16")
    assert v.counterexample.cuts, "met on a branch"
    again = read(write(v.counterexample, tmp_path / "f16.toml"))
    assert again.cuts == v.counterexample.cuts
    replayed = again.run()
    assert replayed.digest == v.counterexample.digest
    assert "dead_letter_reason_matches_cause" in replayed.violations
    invoke = replayed.history[v.counterexample.cuts[-1][0] - 1]
    assert (invoke.op, invoke.type.value) == ("tool", "invoke")  # cut at the stamped write's invoke: aimed


def test_an_open_search_leaves_f16_to_a_search_that_names_it() -> None:
    open_search = Budget(seconds=UNLIMITED_S, simulations=10, seed=0)
    assert chains(open_search) == ("F-15", "F-18")
    named = Budget(seconds=UNLIMITED_S, simulations=10, seed=0, stop_at_first=True, mechanisms=frozenset({"F-16"}))
    assert chains(named) == ("F-16",)
    assert chains(f18_budget(0, 10)) == ("F-18",)
