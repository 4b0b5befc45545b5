"""Prefix-conditioned runs: the first ``records`` records equal the given history's, the rest is drawn from
the suffix seed (faults from the profile, fresh tempo, fresh same-instant orders), and the same inputs give
the same digest in any process."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import simpy
from hypothesis import given
from hypothesis import strategies as st

from checks import history as H
from model.policy import resolve_policy
from model.requests import FindRun
from scenarios.intensity import scale_faults
from scenarios.loader import load_scenario
from scenarios.schema import Scenario
from sim.world.conditioned import _cut_after, decisions, records_before, simulate_from
from sim.world.faults import Fault, FaultPlan
from sim.world.kernel import Kernel, TieControl
from sim.world.simulate import SimulationResult, build_world, simulate

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = ("single_run", "worker_crash_mid_write", "cancel_mid_run", "default")


def original(name: str, seed: int) -> tuple[Scenario, SimulationResult]:
    scenario = load_scenario(name)
    return scenario, simulate(scenario, "head", seed)


@given(
    name=st.sampled_from(SCENARIOS),
    seed=st.integers(0, 10_000),
    where=st.floats(0.0, 1.0),
    suffix_seed=st.integers(0, 2**32),
)
def test_the_prefix_equals_the_given_history(name: str, seed: int, where: float, suffix_seed: int) -> None:
    scenario, given_run = original(name, seed)
    cut = round(where * len(given_run.history))
    rerun = simulate_from(
        scenario, "head", seed, script=given_run.fault_script, records=cut, suffix_seed=suffix_seed, judge=False
    )
    assert rerun.history[:cut] == given_run.history[:cut]


def test_the_same_prefix_and_suffix_seed_give_the_same_digest() -> None:
    scenario, given_run = original("default", 3)
    cut = len(given_run.history) // 2
    digests = {
        simulate_from(scenario, "head", 3, script=given_run.fault_script, records=cut, suffix_seed=11).digest
        for _ in range(3)
    }
    assert len(digests) == 1


CONDITIONED = """
from scenarios.loader import load_scenario
from sim.world.conditioned import simulate_from
from sim.world.simulate import simulate
scenario = load_scenario("default")
given_run = simulate(scenario, "head", 5)
for suffix in range(4):
    run = simulate_from(scenario, "head", 5, script=given_run.fault_script,
                        records=len(given_run.history) // 3, suffix_seed=suffix, judge=False)
    print(run.digest)
"""


@pytest.mark.slow
def test_a_conditioned_run_gives_the_same_digest_under_another_hash_seed() -> None:
    outputs = []
    for hash_seed in ("0", "4242"):
        done = subprocess.run(
            [sys.executable, "-c", CONDITIONED],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.split())
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) == 4


def test_the_suffix_is_drawn_afresh() -> None:
    scenario, given_run = original("default", 8)
    cut = len(given_run.history) // 3
    digests = {
        simulate_from(
            scenario, "head", 8, script=given_run.fault_script, records=cut, suffix_seed=s, judge=False
        ).digest
        for s in range(6)
    }
    assert len(digests) >= 5
    assert given_run.digest not in digests


def test_keeping_every_record_gives_the_given_history() -> None:
    scenario, given_run = original("default", 2)
    rerun = simulate_from(
        scenario, "head", 2, script=given_run.fault_script, records=len(given_run.history), suffix_seed=99
    )
    assert rerun.digest == given_run.digest


def test_keeping_nothing_draws_the_whole_run_from_the_suffix_seed() -> None:
    """With no record kept, the given seed and script do not matter: only the suffix seed does."""
    scenario, first = original("default", 1)
    _, second = original("default", 2)
    a = simulate_from(scenario, "head", 1, script=first.fault_script, records=0, suffix_seed=77, judge=False)
    b = simulate_from(scenario, "head", 2, script=second.fault_script, records=0, suffix_seed=77, judge=False)
    assert a.digest == b.digest
    assert a.digest not in (first.digest, second.digest)


def test_the_suffix_draws_faults_from_the_profile_and_the_prefix_only_from_the_script() -> None:
    """A script with no fault, then a profile that crashes often: faults appear, all after the cut."""
    scenario = scale_faults(load_scenario("default"), 3.0)
    given_run = simulate(scenario, "head", 4, script=[])
    assert not given_run.fault_script
    cut = len(given_run.history) // 4
    fired = 0
    for suffix in range(5):
        rerun = simulate_from(scenario, "head", 4, script=[], records=cut, suffix_seed=suffix, judge=False)
        faults = [op for op in rerun.history if op.op == H.FAULT]
        assert all(op.index >= cut for op in faults)
        fired += len(faults)
    assert fired > 0


def test_targeted_faults_stay_off_in_the_suffix() -> None:
    """As in script mode: ``cancel_mid_run`` cancels through a targeted fault, which a suffix never fires."""
    scenario = scale_faults(load_scenario("cancel_mid_run"), 0.0)
    assert scenario.script
    profile_run = simulate(scenario, "head", 0)
    assert profile_run.faults_fired["cancel"] == 1
    for suffix in range(3):
        rerun = simulate_from(scenario, "head", 0, script=[], records=0, suffix_seed=suffix, judge=False)
        assert rerun.faults_fired["cancel"] == 0


def test_decisions_say_when_each_fault_of_the_script_was_decided() -> None:
    """With a profile that draws nothing, the cut at a fault's decision leaves it out, the next cut keeps it."""
    scenario = scale_faults(load_scenario("worker_crash_mid_write"), 0.0)
    given_run = simulate(scenario, "head", 0)
    script = given_run.fault_script
    assert script  # the scenario's targeted crash
    replay, decided = decisions(scenario, "head", 0, script=script)
    assert replay.digest == given_run.digest
    assert [d.fault for d in decided] == list(script)
    for d in decided:
        before = simulate_from(scenario, "head", 0, script=script, records=d.records, suffix_seed=1)
        after = simulate_from(scenario, "head", 0, script=script, records=d.records + 1, suffix_seed=1)
        assert d.fault not in before.fault_script
        assert d.fault in after.fault_script


def test_a_script_plan_follows_the_profile_after_the_switch() -> None:
    scenario = scale_faults(load_scenario("default"), 1.0)
    faults = scenario.faults.model_copy(update={"store": scenario.faults.store.model_copy(update={"probability": 1.0})})
    plan = FaultPlan.build(faults, random.Random(0), [Fault(5, "crash", "before")])
    request = FindRun("run-001", "probe")
    assert plan.decide(0, request, "worker") is None
    plan.follow_profile()
    struck = plan.decide(1, request, "worker")
    assert struck is not None and struck.family == "store"


def order_of_a_tie(ties: TieControl, shuffle_seed: int | None) -> list[int]:
    env = Kernel(ties)
    if shuffle_seed is not None:
        env.shuffle_ties(random.Random(shuffle_seed))
    order: list[int] = []

    def proc(k: int) -> simpy.events.ProcessGenerator:
        yield env.timeout(1.0)
        order.append(k)

    for k in range(8):
        env.process(proc(k))
    env.run()
    return order


def test_shuffled_ties_run_a_same_instant_group_in_a_drawn_order() -> None:
    fifo = order_of_a_tie(TieControl(), None)
    assert fifo == list(range(8))
    drawn = [order_of_a_tie(TieControl(), seed) for seed in range(4)]
    assert all(sorted(order) == fifo for order in drawn)
    assert any(order != fifo for order in drawn)
    assert order_of_a_tie(TieControl(), 3) == order_of_a_tie(TieControl(), 3)


def test_shuffling_needs_a_tie_control() -> None:
    with pytest.raises(ValueError, match="TieControl"):
        Kernel(None).shuffle_ties(random.Random(0))


def test_a_cut_at_an_instant_keeps_the_records_before_it() -> None:
    scenario, given_run = original("default", 6)
    middle = given_run.history[len(given_run.history) // 2].time_s
    cut = records_before(given_run.history, middle)
    assert all(op.time_s < middle for op in given_run.history[:cut])
    assert all(op.time_s >= middle for op in given_run.history[cut:])
    rerun = simulate_from(scenario, "head", 6, script=given_run.fault_script, records=cut, suffix_seed=3)
    assert [op for op in rerun.history if op.time_s < middle][:cut] == given_run.history[:cut]


def test_a_cut_reached_by_appending_a_held_reaper_tick_still_switches_to_the_suffix() -> None:
    """A record added while a reaper tick's invoke is held appends both at once (the invoke first): a cut
    between them is reached by that one ``add`` and must still switch, or the run would never leave its
    prefix and every continuation would be the given history again."""
    world = build_world(load_scenario("default"), resolve_policy("head", None), 0, [], TieControl())
    inner = world.recorder.add
    _cut_after(world, 1, suffix_seed=5)
    world.recorder.open_tick("reaper#1", "reaper:h1:1")
    world.recorder.add("worker1#1", H.DELIVER, "run-001", H.OpType.OK, {"duplicate": False})
    assert [op.op for op in world.recorder.history] == [H.SEGMENT, H.DELIVER]
    assert world.recorder.add is inner, "the first record was appended, so the world is in its suffix"
