"""Needs after a cut (``sim.explore.profiles.for_need``, ``register.precursors.NEEDS``): the request right
after a foothold's cut is decided by what the chain's next step needs.

F-15's footholds are the case: from its claim, the claimed segment's position read must stall past the
lease; from its last step, the stalled segment's next read must fail. A branch must put that fault on
the chain's own segment (not on whatever request comes next), of the kind the step needs, and a file of
what it found must replay it."""

from __future__ import annotations

import dataclasses
import random
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checks.history import Op
from model.constants import LEASE_S
from register.precursors import COMMON, STEPS, progress
from register.precursors import NEEDS as CHAIN_NEEDS
from scenarios.intensity import Tempo
from scenarios.loader import load_scenario
from scenarios.schema import FaultsModel
from sim.explore.base import Budget, Target
from sim.explore.counterexample import read, write
from sim.explore.discovery import Discovery
from sim.explore.footholds import (
    BRANCHES_PER_LEVEL,
    COMMON_BRANCHES,
    FRUITLESS,
    Drawn,
    Foothold,
    Footholds,
    branch,
)
from sim.explore.guided import GuidedExplorer
from sim.explore.profiles import BURST, NEEDS, RAISE_CAP, can_strike, for_need, need_of, raised, seed_with_need
from sim.world.conditioned import simulate_cuts
from sim.world.simulate import SimulationResult

F15 = Path("register/entries/F-15-stalled-position-read-settle.toml")
BRANCHES = 8


@cache
def f15_run() -> SimulationResult:
    return read(F15).run()


def f15_foothold(level: int, profile: FaultsModel | None = None) -> Foothold:
    """F-15's own counterexample cut right after its chain's ``level``-th step."""
    cx = read(F15)
    result = f15_run()
    (reached,) = progress(result.history, ["F-15"])
    marks = reached.marks[:level]
    return Foothold(
        "F-15",
        level,
        cx.seed,
        profile or cx.profile,
        cx.tempo or Tempo(),
        tuple(result.fault_script),
        (),
        marks[-1] + 1,
        marks,
    )


def first_after_cut(foothold: Foothold, rng: random.Random) -> tuple[SimulationResult, Op]:
    scenario = read(F15).effective_scenario()
    result, drawn = branch(foothold, scenario, "head", rng)
    assert drawn.cuts[-1][0] == foothold.cut
    return result, result.history[foothold.cut]


def meets_f15(result: SimulationResult) -> bool:
    wants = Budget(seconds=1.0, mechanisms=frozenset({"F-15"}), stop_at_first=True).wants
    return any(met.key.endswith("F-15") for _, met, _ in Discovery().see(result, 1, 0.0, wants))


def test_the_chains_needs_are_known_needs_at_levels_of_the_chain() -> None:
    for finding, levels in CHAIN_NEEDS.items():
        assert set(levels.values()) <= set(NEEDS)
        assert all(1 <= level <= STEPS[finding] for level in levels)
    assert CHAIN_NEEDS["F-15"][1] == "slow" and CHAIN_NEEDS["F-15"][STEPS["F-15"]] == "fail"


def test_from_the_claim_the_claimed_segments_position_read_stalls_past_the_lease() -> None:
    foothold = f15_foothold(1)
    claim = f15_run().history[foothold.marks[0]]
    assert foothold.need == "slow"
    rng = random.Random(3)
    stalled = 0
    for _ in range(BRANCHES):
        result, first = first_after_cut(foothold, rng)
        if first.op != "fault":
            continue  # the draw missed (the needed fault's rate is RAISE_CAP): the read went through
        # the raised request is the claimed segment's own next one, and a stall at least a lease long
        assert first.value["target"] == claim.process and first.run == claim.run
        assert first.value["kind"] == "slow" and first.value["slow_s"] >= LEASE_S
        stalled += 1
        assert len(progress(result.history, ["F-15"])[0].marks) >= 2
    assert stalled >= BRANCHES // 2


def test_from_the_last_step_the_stalled_segments_next_read_fails_and_meets_f15() -> None:
    foothold = f15_foothold(STEPS["F-15"])
    stalled = f15_run().history[foothold.marks[-1]]
    assert foothold.need == "fail" and foothold.last
    rng = random.Random(5)
    failed = met = 0
    for _ in range(BRANCHES):
        result, first = first_after_cut(foothold, rng)
        if first.op == "fault":
            assert first.value["target"] == stalled.process and first.run == stalled.run
            assert first.value["kind"] == "fail"
            failed += 1
        met += meets_f15(result)
    assert failed >= BRANCHES // 2 and met >= BRANCHES // 2


def test_a_timing_step_draws_its_suffix_at_the_drawn_rates() -> None:
    foothold = f15_foothold(3)  # the reaper's requeue: what is left is another claim, timing alone
    assert foothold.need == ""
    bits = random.Random(7).getrandbits(32)
    result, drawn = branch(foothold, read(F15).effective_scenario(), "head", random.Random(7))
    assert drawn.cuts == ((foothold.cut, seed_with_need(bits, "")),)
    plain = simulate_cuts(
        read(F15).effective_scenario(),
        "head",
        foothold.seed,
        script=foothold.script,
        cuts=drawn.cuts,
        suffix_faults=foothold.profile,
        burst=BURST,
    )
    assert result.digest == plain.digest


def test_a_chain_without_needs_is_raised_as_before() -> None:
    foothold = Foothold("F-18", 2, 1, FaultsModel(), Tempo(), (), (), 10, (3, 9))
    assert foothold.need == "raise"
    assert for_need(foothold.profile, foothold.need) == raised(foothold.profile)


def test_a_timing_only_foothold_is_given_up_after_fruitless_branches() -> None:
    foothold = f15_foothold(3)
    foothold.branches = FRUITLESS - 1
    assert not foothold.exhausted
    foothold.branches = FRUITLESS
    assert foothold.exhausted
    foothold.deeper = 1  # one branch went deeper: the state can go on, its whole budget is kept
    assert not foothold.exhausted
    budget = BRANCHES_PER_LEVEL * (foothold.level - COMMON["F-15"])  # the claim, a common step, not counted
    foothold.branches = budget - 1
    assert not foothold.exhausted
    foothold.branches = budget
    assert foothold.exhausted
    raised_step = Foothold("F-18", 2, 1, FaultsModel(), Tempo(), (), (), 10, (3, 9), branches=FRUITLESS)
    assert not raised_step.exhausted  # a chain without needs keeps its budget


def test_a_claim_foothold_gets_the_common_branches() -> None:
    foothold = f15_foothold(COMMON["F-15"])
    foothold.branches = COMMON_BRANCHES - 1
    assert not foothold.exhausted
    foothold.branches = COMMON_BRANCHES
    assert foothold.exhausted
    assert not f15_foothold(2, None).exhausted


def test_a_foothold_whose_needed_fault_cannot_strike_is_none() -> None:
    cx = read(F15)
    data = cx.profile.model_dump()
    data["store"].update(probability=0.0, slow_probability=0.0)
    off = FaultsModel.model_validate(data)
    assert not can_strike(off, "fail") and can_strike(off, "") and can_strike(off, "raise")
    assert Footholds(("F-15",)).observe(f15_run(), Drawn(cx.seed, off, Tempo()), []) == 0
    holds = Footholds(("F-15",))
    assert holds.observe(f15_run(), Drawn(cx.seed, cx.profile, Tempo()), []) == 1
    assert holds.pool["F-15"][0].level == STEPS["F-15"]


def test_profiles_for_each_need() -> None:
    profile = read(F15).profile
    assert for_need(profile, "") == profile
    assert for_need(profile, "raise") == raised(profile)
    fail, slow = for_need(profile, "fail").store, for_need(profile, "slow").store
    total = min(RAISE_CAP, raised(profile).store.probability + raised(profile).store.slow_probability)
    assert (fail.probability, fail.slow_probability) == (total, 0.0)
    assert (slow.probability, slow.slow_probability) == (0.0, total)
    assert slow.slow_s == (LEASE_S, profile.store.slow_s[1])
    for need in ("fail", "slow"):
        others = for_need(profile, need).model_dump()
        expected = raised(profile).model_dump()
        assert {k: v for k, v in others.items() if k != "store"} == {k: v for k, v in expected.items() if k != "store"}


@given(st.integers(min_value=0, max_value=2**32 - 1), st.sampled_from(NEEDS))
def test_a_cuts_seed_carries_its_need(bits: int, need: str) -> None:
    seed = seed_with_need(bits, need)
    assert need_of(seed) == need and seed & 0xFFFFFFFF == bits
    assert need_of(bits) == "raise"  # a seed of 32 bits, as every cut had before needs


@pytest.mark.slow
def test_a_find_on_a_branch_decided_by_needs_replays_from_its_file(tmp_path: Path) -> None:
    target = Target("default", "head", {}, ("store",), load_scenario("default").at_deployment_ranges())
    budget = Budget(
        seconds=1e9,
        simulations=200,
        seed=0,
        stop_at_first=True,
        invariants=frozenset({"settles_by_owner", "every_write_accounted"}),
        mechanisms=frozenset({"F-15"}),
    )
    report = GuidedExplorer().explore(target, budget)
    (v,) = [v for v in report.violations if v.mechanism == "F-15"]
    assert v.counterexample.cuts and any(need_of(seed) != "raise" for _, seed in v.counterexample.cuts)
    again = read(write(v.counterexample, tmp_path / "f15.toml"))
    assert again.cuts == v.counterexample.cuts
    assert again.run().digest == v.counterexample.digest


def test_a_common_step_is_a_foothold_only_for_a_search_that_names_its_finding() -> None:
    cx = read(F15)
    result = f15_run()
    claim = progress(result.history, ["F-15"])[0].marks[0]
    # the run as it stood right after the claim: at F-15's first step (the claim), no further
    at_claim = dataclasses.replace(result, history=result.history[: claim + 1])
    assert progress(at_claim.history, ["F-15"])[0].level == COMMON["F-15"]
    drawn = Drawn(cx.seed, cx.profile, Tempo())
    assert Footholds(("F-15",)).observe(at_claim, drawn, []) == 0  # an open search: not worth a branch
    named = Footholds(("F-15",), named=("F-15",))
    assert named.observe(at_claim, drawn, []) == 1
    (foothold,) = named.pool["F-15"]
    assert foothold.level == COMMON["F-15"] and foothold.need == "slow"
    assert at_claim.history[foothold.marks[0]].value["transition"].startswith(("T3", "T10"))
    assert Footholds(("F-15",)).observe(result, drawn, []) == 1  # a deeper step is a foothold in any search
