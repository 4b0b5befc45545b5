"""The layer attribution behind the bench's time budgets (sim/bench/layers.py)."""

from __future__ import annotations

import cProfile
import pstats
from pathlib import Path

import pytest

from sim.bench import layers as bench_layers
from sim.bench.layers import LAYERS, layer_of, layer_shares, profile_layers


@pytest.mark.parametrize(
    ("filename", "layer"),
    [
        ("/repo/checks/index.py", "judge"),
        ("/repo/model/transitions.py", "runtime"),
        ("/venv/site-packages/simpy/core.py", "simpy"),
        ("/repo/sim/world.py", "world"),
        ("/repo/tests/sim/test_world_basics.py", "other"),
        ("/usr/lib/python3.11/dataclasses.py", "other"),
    ],
)
def test_each_file_belongs_to_its_layer(filename: str, layer: str) -> None:
    assert layer_of(filename, Path("/repo"), Path("/venv/site-packages/simpy")) == layer


def test_a_builtins_time_is_charged_to_the_layer_of_its_caller() -> None:
    """A profile of one function of this test file (layer 'other') calling a builtin: every share
    lands in 'other'; the builtin is not a layer of its own."""

    def busy() -> int:
        return sum(len(str(i)) for i in range(20_000))

    profiler = cProfile.Profile()
    profiler.runcall(busy)
    shares = layer_shares(pstats.Stats(profiler))
    assert set(shares) == set(LAYERS)
    assert shares["other"] == pytest.approx(1.0)


def test_a_simulation_spends_time_in_every_layer_and_the_shares_add_up() -> None:
    shares = profile_layers("single_run", 5)
    assert sum(shares.values()) == pytest.approx(1.0, abs=0.01)
    for layer in ("runtime", "world", "simpy", "judge"):
        assert shares[layer] > 0.01, (layer, shares)


def test_a_budget_turns_shares_into_microseconds_of_one_simulation() -> None:
    budget = bench_layers.layer_budget("single_run", 5, us_per_simulation=1000.0, budget_us=400.0)
    per_layer = budget["us_per_layer"]
    assert sum(per_layer.values()) == pytest.approx(1000.0, abs=10)
    assert budget["runtime_plus_simpy_us"] == pytest.approx(per_layer["runtime"] + per_layer["simpy"], abs=0.2)
    share = budget["runtime_plus_simpy_share_of_budget"]
    assert share == pytest.approx(budget["runtime_plus_simpy_us"] / 400, abs=0.01)


def test_the_budget_sets_world_and_judge_against_runtime_and_simpy() -> None:
    budget = bench_layers.layer_budget("single_run", 5, us_per_simulation=1000.0, budget_us=400.0)
    per_layer = budget["us_per_layer"]
    assert budget["world_plus_judge_us"] == pytest.approx(per_layer["world"] + per_layer["judge"], abs=0.2)
    assert budget["world_plus_judge_over_runtime_plus_simpy"] == pytest.approx(
        budget["world_plus_judge_us"] / budget["runtime_plus_simpy_us"], abs=0.01
    )


@pytest.mark.parametrize(
    ("ratio", "rate", "growth", "met"),
    [
        (0.9, 3600.0, 0.0, (True, True, True)),
        (1.2, 3600.0, 0.0, (False, True, True)),
        (1.0, 3499.0, 100.0, (True, False, False)),
    ],
)
def test_the_layer_targets_are_read_from_the_same_run(
    ratio: float, rate: float, growth: float, met: tuple[bool, bool, bool]
) -> None:
    from sim.bench.world import layer_targets

    layers = {"default": {"world_plus_judge_over_runtime_plus_simpy": ratio, "world_plus_judge_us": 1.0,
                          "runtime_plus_simpy_us": 1.0}}  # fmt: skip
    shown = layer_targets(layers, rate, growth)
    assert tuple(shown["met"].values()) == met
    assert shown["default_world_plus_judge_over_runtime_plus_simpy"] == ratio
