"""``leaselab mutants --auto --scheduler``: automatic mutants judged on a real Dask cluster
(``distributed.LocalCluster`` on 127.0.0.1, worker processes) through the sweep's executor code give the
same result as ``--workers`` for the same sample and seed; the mutants' processes really ran there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from distributed import Client, LocalCluster
from typer.testing import CliRunner

from leaselab.cli import app

pytestmark = pytest.mark.slow

runner = CliRunner()
AUTO = ["mutants", "--auto", "--sample", "3", "--seed", "0", "--sweep-simulations", "2", "--json"]
WHERE = ("elapsed_s", "workers", "scheduler")
"""Where and how long: the only fields that may differ between the two runs."""


def judged_part(document: dict[str, Any]) -> dict[str, Any]:
    """The document without where it ran and how long each part took."""
    kept = {key: value for key, value in document.items() if key not in WHERE}
    for key in ("mutants", "survivors", "unkilled"):
        kept[key] = [{k: v for k, v in item.items() if k != "cpu_s"} for item in kept[key]]
    return kept


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(
        host="127.0.0.1", n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as local:
        yield local


def test_mutants_judged_on_a_dask_cluster_equal_those_judged_by_local_workers(cluster: LocalCluster) -> None:
    local = runner.invoke(app, [*AUTO, "--workers", "2"])
    assert local.exit_code == 0, local.output
    address = cluster.scheduler_address
    on_dask = runner.invoke(app, [*AUTO, "--scheduler", address])
    assert on_dask.exit_code == 0, on_dask.output
    mine, theirs = json.loads(local.stdout), json.loads(on_dask.stdout)
    assert theirs["scheduler"] == address and mine["scheduler"] is None
    assert mine["judged"] + mine["equivalent"] + mine["crashing"] >= 3
    assert mine["mutants"], "the sample judged no mutant: nothing was compared"
    assert judged_part(theirs) == judged_part(mine)
    with Client(address) as client:  # the mutants' processes were started by the cluster's workers
        prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert "run" in prefixes  # auto_judge._run, as Dask names its tasks


def test_the_text_report_says_where_the_mutants_ran(cluster: LocalCluster) -> None:
    address = cluster.scheduler_address
    result = runner.invoke(app, [a for a in AUTO if a != "--json"] + ["--scheduler", address])
    assert result.exit_code == 0, result.output
    assert f"on the Dask scheduler at {address}" in result.stdout


def test_an_unreachable_scheduler_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    from sim.sweep import executors

    monkeypatch.setattr(executors, "CONNECT_TIMEOUT", "1s")
    result = runner.invoke(app, [*AUTO, "--scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "--scheduler" in result.stderr
