"""MariaDB and PostgreSQL: private servers on unix sockets, nothing left behind, also on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sim.conform import runner
from tests.conformance.conftest import ROOT, leftovers, need, server_pids


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["mariadb", "postgres"])
def test_every_check_runs_and_nothing_is_unexplained(engine: str, private_tmp: Path) -> None:
    src = need(engine)
    before = set(leftovers(private_tmp))
    results = runner.run(runner.Options(src, (engine,), examples=30, seed=2))
    assert results and all(r.cases >= 20 for r in results)
    assert sum(r.unexplained for r in results) == 0, [(r.check, r.unexplained) for r in results if r.unexplained]
    assert set(leftovers(private_tmp)) <= before and not server_pids(private_tmp)


def _cmd(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.slow
def test_ctrl_c_stops_the_server_and_removes_its_data(private_tmp: Path) -> None:
    src = need("mariadb")
    before = set(leftovers(private_tmp))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "leaselab",
            "conform",
            "--runtime-src",
            str(src),
            "--engines",
            "mariadb",
            "--examples",
            "2000",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 60
    while not any("skip-networking" in _cmd(p) for p in server_pids(private_tmp)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert server_pids(private_tmp), "the server never started"
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert not server_pids(private_tmp)
    assert set(leftovers(private_tmp)) <= before, err.decode()
