"""Sweeps on a real Dask cluster (``distributed.LocalCluster`` on 127.0.0.1, worker processes): the
rows equal the local pool's, through ``leaselab sweep --scheduler`` and through the library with a
Client; and a worker killed mid-sweep loses and doubles no row."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from distributed import Client, LocalCluster
from typer.testing import CliRunner

from checks.columns import ROW_KEY
from leaselab.cli import app
from sim.sweep import executors
from sim.sweep.config import loads_config
from sim.sweep.directory import COUNTEREXAMPLES, SHARDS, load
from sim.sweep.job import read_mechanisms, run_job

pytestmark = pytest.mark.slow

runner = CliRunner()
CONFIG = """
name = "dask"
seeds = 40
seeds_per_task = 4

[[policy]]
label = "head"
preset = "head"

[[policy]]
label = "adr-111"
preset = "adr-111"

[[grid]]
name = "main"
scenarios = ["single_run", "worker_crash_mid_write"]
intensities = [1.0, 2.0]
"""
TASKS = 2 * 2 * 10 * 2


def rows_of(frame: pd.DataFrame) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in frame[[*ROW_KEY, "digest"]].itertuples(index=False))


def counterexamples_of(out: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The kept counterexamples (one per policy and mechanism) without the seconds: their index and files."""
    root = out / COUNTEREXAMPLES
    index = [{k: v for k, v in e.items() if k != "first_s"} for e in read_mechanisms(root)]
    return index, {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.toml"))}


@cache
def local_sweep() -> tuple[list[tuple[object, ...]], tuple[list[dict[str, Any]], dict[str, str]]]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        run_job(loads_config(CONFIG, source="dask.toml"), Path(tmp), workers=2)
        return rows_of(load(Path(tmp))), counterexamples_of(Path(tmp))


def local_rows() -> list[tuple[object, ...]]:
    return local_sweep()[0]


def test_one_process_keeps_the_counterexamples_of_the_local_pool(tmp_path: Path) -> None:
    run_job(loads_config(CONFIG, source="dask.toml"), tmp_path, workers=1)
    assert counterexamples_of(tmp_path) == local_sweep()[1]
    assert local_sweep()[1][0], "the sweep meets mechanisms (adr-111 loses writes in worker_crash_mid_write)"


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(
        host="127.0.0.1", n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as local:
        yield local


def test_a_sweep_through_the_scheduler_address_gives_the_local_pools_rows(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    config, out = tmp_path / "dask.toml", tmp_path / "out"
    config.write_text(CONFIG, encoding="utf-8")
    address = cluster.scheduler_address
    assert address.startswith("tcp://127.0.0.1:")
    result = runner.invoke(
        app, ["sweep", str(config), "--out", str(out), "--scheduler", address, "--json", "--exit-zero"]
    )
    assert result.exit_code == 0, result.output
    frame = load(out)
    assert not frame.duplicated(list(ROW_KEY)).any()
    assert rows_of(frame) == local_rows()
    assert counterexamples_of(out) == local_sweep()[1], "a resubmitted task keeps what the plan met first"
    assert counterexamples_of(out) == local_sweep()[1], "one per mechanism, the plan's first: as locally"
    with Client(address) as client:  # the work really ran on the cluster's worker processes
        prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert "run_output" in prefixes


def test_an_unreachable_scheduler_is_one_line_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executors, "CONNECT_TIMEOUT", "1s")
    config = tmp_path / "dask.toml"
    config.write_text(CONFIG, encoding="utf-8")
    result = runner.invoke(
        app, ["sweep", str(config), "--out", str(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:9"]
    )
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "--scheduler" in result.stderr


def test_a_worker_killed_mid_sweep_loses_and_doubles_no_row(cluster: LocalCluster, tmp_path: Path) -> None:
    out = tmp_path / "out"
    killed: list[int] = []
    with Client(cluster.scheduler_address) as client:
        pids: dict[str, Any] = client.run(os.getpid)

        def kill_one_when_work_started() -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if (out / SHARDS).is_dir() and len(list((out / SHARDS).glob("*.parquet"))) >= 3:
                    pid = sorted(pids.values())[0]
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
                time.sleep(0.005)

        killer = threading.Thread(target=kill_one_when_work_started)
        killer.start()
        result = run_job(loads_config(CONFIG, source="dask.toml"), out, executor=client, window=8)
        killer.join()
        assert killed
        assert result.progress.done == TASKS
        # the nanny restarts the killed worker; the cluster is whole again for the next test
        client.wait_for_workers(2, timeout=60)
    frame = load(out)
    assert not frame.duplicated(list(ROW_KEY)).any()
    assert rows_of(frame) == local_rows()
    assert counterexamples_of(out) == local_sweep()[1], "a resubmitted task keeps what the plan met first"
