"""``sim.world.faults.FaultPlan``: profile, script and anchored modes replay the same history.

Profile mode records each fault that fired with its index and anchor; feeding that record back in
script mode (by index) or anchored mode (by anchor) must reproduce the digest, which is only possible
if every mode consumes the world's random stream identically. Anchored mode is what the shrinker
relies on: removing an early fault shifts the request indexes of everything after it, but a later
fault still fires at its anchor.
"""

from __future__ import annotations

import random
from functools import cache

import pytest

from model.requests import Dispatch, FindRun, MaxSequence, Request
from scenarios.schema import FaultsModel
from scenarios.script import Fault
from sim.world.faults import FaultPlan
from sim.world.simulate import SimulationResult, simulate

SEEDS = range(5)


@cache
def profile_run(seed: int) -> SimulationResult:
    return simulate("default", "head", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_profile_mode_records_every_fired_fault_with_its_index_and_anchor(seed: int) -> None:
    result = profile_run(seed)
    assert result.fault_script, "the default profile fires faults on every seed used here"
    indexes = [f.at for f in result.fault_script]
    assert indexes == sorted(set(indexes))
    for fault in result.fault_script:
        run, rtype, nth = fault.anchor_key()
        assert rtype == result.request_types[fault.at].__name__
        assert nth >= 1
        assert run == "" or run.startswith("run-")
    assert len({f.anchor for f in result.fault_script}) == len(result.fault_script)


@pytest.mark.parametrize("seed", SEEDS)
def test_replaying_the_fault_script_in_script_mode_gives_the_same_digest(seed: int) -> None:
    original = profile_run(seed)
    replay = simulate("default", "head", seed, script=original.fault_script)
    assert replay.digest == original.digest
    assert replay.fault_script == original.fault_script
    assert replay.violations == original.violations


@pytest.mark.parametrize("seed", SEEDS)
def test_replaying_the_fault_script_in_anchored_mode_gives_the_same_digest(seed: int) -> None:
    original = profile_run(seed)
    replay = simulate("default", "head", seed, anchored=original.fault_script)
    assert replay.digest == original.digest
    assert replay.fault_script == original.fault_script


def test_script_mode_fires_nothing_but_the_script() -> None:
    original = profile_run(0)
    kept = original.fault_script[:3]
    replay = simulate("default", "head", 0, script=kept)
    assert [(f.at, f.family, f.kind, f.value) for f in replay.fault_script] == [
        (f.at, f.family, f.kind, f.value) for f in kept
    ]


def test_removing_an_early_crash_in_anchored_mode_still_fires_a_later_fault_at_its_anchor() -> None:
    original = profile_run(0)
    script = original.fault_script
    first_crash = next(i for i, f in enumerate(script) if f.family == "crash")
    crashed_run = script[first_crash].anchor_key()[0]
    later = next(f for f in script[first_crash + 1 :] if f.anchor_key()[0] not in ("", crashed_run))
    replay = simulate("default", "head", 0, anchored=[later])
    assert len(replay.fault_script) == 1
    fired = replay.fault_script[0]
    assert (fired.anchor, fired.family, fired.kind, fired.value) == (
        later.anchor,
        later.family,
        later.kind,
        later.value,
    )
    # The removal did move it: the same fault now strikes another request index (which is why
    # the shrinker uses anchors and not indexes).
    assert fired.at != later.at


def test_a_healed_plan_fires_nothing_and_draws_nothing() -> None:
    always = FaultsModel.model_validate({"crash": {"probability": 1.0}, "cancel": {"probability": 1.0}})
    rng = random.Random(7)
    plan = FaultPlan.build(always, rng, None)
    assert plan.decide(0, FindRun(uuid="run-001"), "worker") is not None  # it would fire
    plan.healed = True
    state = rng.getstate()
    requests: list[Request] = [
        FindRun(uuid="run-001"),
        MaxSequence(uuid="run-001"),
        Dispatch(uuid="run-001", delay_ms=0),
    ]
    assert all(plan.decide(i, r, "worker") is None for i, r in enumerate(requests, 1))
    assert len(plan.fired) == 1
    assert rng.getstate() == state


@pytest.mark.parametrize("mode", ["script", "anchored"])
def test_a_healed_plan_in_script_modes_fires_nothing(mode: str) -> None:
    fault = Fault(0, "crash", "after", 0.0, "run-001/FindRun/1")
    plan = FaultPlan.build(
        FaultsModel(),
        random.Random(0),
        [fault] if mode == "script" else None,
        anchored=[fault] if mode == "anchored" else None,
    )
    plan.healed = True
    assert plan.decide(0, FindRun(uuid="run-001"), "worker") is None
    assert plan.fired == []


def test_profile_script_and_anchored_plans_consume_the_same_random_draws() -> None:
    """Drive three plans directly over one request sequence: same faults, same rng state after."""
    profile = FaultsModel.model_validate(
        {
            "crash": {"probability": 0.2},
            "store": {"probability": 0.2, "slow_probability": 0.1},
            "duplicate": {"probability": 0.5},
        }
    )
    requests: list[Request] = []
    for i in range(60):
        uuid = f"run-00{i % 3 + 1}"
        requests.append((FindRun(uuid=uuid), MaxSequence(uuid=uuid), Dispatch(uuid=uuid, delay_ms=0))[i % 3])

    def drive(plan: FaultPlan, rng: random.Random) -> tuple[list[Fault], object]:
        fired = [plan.decide(i, r, "worker") for i, r in enumerate(requests)]
        return [f for f in fired if f is not None], rng.getstate()

    rng = random.Random(11)
    fired, state = drive(FaultPlan.build(profile, rng, None), rng)
    assert fired and len(fired) < len(requests)
    for mode in ("script", "anchored"):
        rng = random.Random(11)
        plan = FaultPlan.build(
            profile, rng, fired if mode == "script" else None, anchored=fired if mode == "anchored" else None
        )
        assert drive(plan, rng) == (fired, state), mode
