"""Costs as search targets (``sim.explore.costs``, ``explore --target cost:NAME``).

Every count of the report's cost table is a valid target; a found instance is shrunk while it still
shows the cost, written, and replays with the cost's pseudo-verdict; a history without the cost gets a
valid pseudo-verdict, so the target is not met by construction.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checks.metrics import run_metrics
from leaselab.cli import app
from model.errors import LeaselabError
from reports.tables import cost as cost_table
from sim.explore.base import Budget, Target
from sim.explore.costs import COLUMNS, check_cost, cost_names, count, first_record, with_cost
from sim.explore.counterexample import read
from sim.explore.guided import GuidedExplorer
from sim.world.simulate import simulate

runner = CliRunner()


def test_every_count_of_the_report_cost_table_is_a_target() -> None:
    import pandas as pd

    frame = pd.DataFrame([{"policy": "head", "stat.runs": 1, "stat.completed": 1, "stat.settle_latencies_s": [1.0]}])
    counted = {c for c in cost_table(frame, ["head"]).columns if c.removeprefix("dl.") != c or c in COLUMNS}
    assert counted <= set(COLUMNS)
    for name in cost_names():
        assert check_cost(name) == name
    assert check_cost("cost:dl.lease_expired") == "cost:dl.lease_expired"


def test_an_unknown_cost_is_one_line_naming_the_valid_ones() -> None:
    with pytest.raises(LeaselabError) as caught:
        check_cost("cost:progress_reaped")
    assert "cost:progressing_reaped" in caught.value.one_line()


def test_a_history_without_the_cost_holds_and_one_with_it_fails() -> None:
    result = simulate("tool_outlives_lease", "head", 0)
    metrics = run_metrics(result.history, result.request_types).columns()
    for name, column in COLUMNS.items():
        judged = with_cost(result, "cost:" + name).verdicts["cost:" + name]
        assert (not judged.valid.json) is (metrics[column] > 0)
        assert judged.judged == metrics[column]


def test_the_witness_is_the_record_at_which_a_prefix_first_counts_it() -> None:
    result = simulate("tool_outlives_lease", "head", 0)
    name = next(n for n in cost_names() if count(n, result.history) > 0)
    at = first_record(name, result.history)
    assert at is not None
    assert count(name, result.history[: at + 1]) > 0 and count(name, result.history[:at]) == 0


def test_the_explorer_finds_shrinks_and_replays_a_cost(tmp_path: Path) -> None:
    target = Target("tool_outlives_lease", "head", families=("store", "clock_skew", "slow"), cost="cost:requeues")
    report = GuidedExplorer().explore(
        target, Budget(seconds=1e9, simulations=40, seed=0, invariants=frozenset({"cost:requeues"}))
    )
    assert [v.invariant for v in report.violations] == ["cost:requeues"]
    cx = report.violations[0].counterexample
    assert cx.mechanism == "cost:requeues"
    replay = cx.run()
    assert replay.digest == cx.digest and "cost:requeues" in replay.violations
    assert replay.verdicts["cost:requeues"].witness


def test_cli_target_writes_a_file_replay_reproduces(tmp_path: Path) -> None:
    args = ["explore", "tool_outlives_lease", "--target", "cost:requeues", "--simulations", "20", "--json"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert [v["mechanism"] for v in doc["violations"]] == ["cost:requeues"]
    # one instance is what was asked for: the search stops at the simulation that met it
    assert doc["simulations"] == doc["violations"][0]["simulations_until_found"] < 20
    path = Path(doc["violations"][0]["counterexample"])
    assert ":" not in path.name and read(path).invariant == "cost:requeues"
    replayed = runner.invoke(app, ["replay", str(path)])
    assert replayed.exit_code == 1 and "reproduced: an instance of cost:requeues" in replayed.stdout


def test_cli_refuses_a_target_that_is_neither_a_cost_nor_a_register_id(tmp_path: Path) -> None:
    result = runner.invoke(app, ["explore", "--target", "progressing_reaped", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "--target" in result.stderr


def test_cli_refuses_a_cost_target_for_the_hypothesis_explorer(tmp_path: Path) -> None:
    args = ["explore", "--target", "cost:requeues", "--explorer", "hypothesis", "--out", str(tmp_path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "--explorer guided" in result.stderr
