"""TOML writing: what the sweep writes beside a counterexample and what the report records reads back
as the same data."""

from __future__ import annotations

import tomllib

from scenarios.loader import load_scenario
from scenarios.schema import Scenario
from sim.review.builtin import builtin_review
from sim.review.provenance import config_toml
from sim.sweep.config import loads_config
from sim.sweep.toml_out import dumps


def test_none_is_left_out_and_empty_lists_only_when_asked() -> None:
    data = {"a": 1, "b": None, "c": [], "t": {"x": None, "y": "s"}}
    assert tomllib.loads(dumps(data)) == {"a": 1, "c": [], "t": {"y": "s"}}
    assert tomllib.loads(dumps(data, drop_empty=True)) == {"a": 1, "t": {"y": "s"}}


def test_a_scenario_dump_reads_back_as_the_same_scenario() -> None:
    scenario = load_scenario("default")
    again = Scenario.model_validate(tomllib.loads(dumps(scenario.model_dump(mode="json"))))
    assert again == scenario


def test_the_reported_configuration_reads_back_as_the_same_configuration() -> None:
    config = builtin_review()
    again = loads_config(config_toml(config), source="report.toml")
    assert again.model_dump() == config.model_dump()
