"""``leaselab bench --sweep``: a small smoke of the sweep benchmark (the full run, 200,000 simulations
for the memory figure, is run by hand): every section present, figures consistent with each other."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest
from typer.testing import CliRunner

from leaselab.cli import app
from sim.bench import sweep as sweep_bench
from sim.bench.sweep import _slope, bench_config, table

pytestmark = pytest.mark.slow

runner = CliRunner()


def test_bench_sweep_json_reports_scaling_dask_and_memory() -> None:
    result = runner.invoke(app, ["bench", "--sweep", "--json", "--simulations", "40", "--memory-simulations", "200"])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    scaling, dask, memory = doc["scaling"], doc["dask"], doc["memory"]
    assert scaling["simulations"] == dask["simulations"] == 40
    assert scaling["sims_per_s_1_worker"] > 0 and scaling["sims_per_s_2_workers"] > 0
    expected = scaling["sims_per_s_2_workers"] / (2 * scaling["sims_per_s_1_worker"])
    assert abs(scaling["scaling_efficiency"] - expected) < 0.01
    assert dask["sims_per_s_dask"] > 0 and dask["sims_per_s_local_pool"] > 0
    # CPU per simulation, which a shared machine's scheduling does not distort
    assert scaling["cpu_s_per_1000_sims_1_worker"] > 0 and scaling["cpu_s_per_1000_sims_2_workers"] > 0
    ratio = scaling["cpu_s_per_1000_sims_1_worker"] / scaling["cpu_s_per_1000_sims_2_workers"]
    assert abs(scaling["cpu_efficiency"] - ratio) < 0.02
    assert 0 <= scaling["coordinator_cpu_share_2_workers"] < 1
    assert dask["cpu_s_per_1000_sims_dask"] > 0 and dask["cpu_s_per_1000_sims_local_pool"] > 0
    assert memory["simulations"] == 200 and memory["tasks"] == 200 // memory["seeds_per_task"]
    assert memory["rss_peak_mib"] >= memory["rss_end_mib"] > 0
    assert memory["extrapolated_1m_simulations_mib"] >= memory["rss_end_mib"]
    assert isinstance(memory["meets_target"], bool)
    assert any(line.startswith("memory:") for line in table(doc))


def test_the_growth_slope_is_least_squares() -> None:
    assert _slope([(0, 10), (1, 12), (2, 14)]) == 2.0
    assert _slope([(5, 7)]) == 0.0
    assert bench_config(10, 4).tasks()[-1].seed_count == 2


def test_bench_sweep_without_dask_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = importlib.import_module

    def no_distributed(name: str, package: str | None = None) -> object:
        if name == "distributed":
            raise ImportError(name)
        return real_import(name, package)

    monkeypatch.setattr(sweep_bench.importlib, "import_module", no_distributed)
    result = runner.invoke(app, ["bench", "--sweep", "--simulations", "20", "--memory-simulations", "20"])
    assert result.exit_code == 2
    assert "leaselab: --sweep: dask.distributed is not installed" in result.stderr
    assert "Traceback" not in result.stderr
