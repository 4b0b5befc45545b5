"""``leaselab bench --search --findings``: simulations and seconds to the first meeting of a register
entry, swarm vs guided (``sim.bench.mechanisms``)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from leaselab.cli import app

runner = CliRunner()


def test_one_entry_from_its_own_scenario_gives_both_explorers_and_their_ratio() -> None:
    args = ["bench", "--search", "--findings", "--entry", "F-04", "--origin", "own", "--seeds", "2"]
    result = runner.invoke(app, [*args, "--max-simulations", "300", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (cell,) = doc["cells"]
    assert (cell["entry"], cell["origin"], cell["scenario"]) == ("F-04", "own", "happy_path")
    for explorer in ("swarm", "guided"):
        side = cell[explorer]
        assert side["seeds"] == 2 and len(side["runs"]) == 2
        for seed, found, simulations, _ in side["runs"]:
            assert seed in (0, 1) and 1 <= simulations <= 300
            assert found  # F-04 (a cancel after the fence stamp) is met within a few dozen draws
    assert cell["ratio_simulations_bound"] == "exact"


def test_findings_options_need_search_findings_and_known_entries() -> None:
    assert runner.invoke(app, ["bench", "--origin", "own"]).exit_code == 2
    bad = runner.invoke(app, ["bench", "--search", "--findings", "--entry", "F-99"])
    assert bad.exit_code == 2 and "F-99" in bad.stderr
