"""MariaDB and PostgreSQL: private servers on unix sockets, nothing left behind, also on Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sim.conform import engines, runner
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


def _interrupt_once_the_server_runs(
    args: list[str], root: Path, sig: signal.Signals, *, ignored: bool = False
) -> tuple[int, str]:
    """Start ``leaselab ARGS``, send ``sig`` (to it alone) once its MariaDB runs; its exit code and stderr.
    ``ignored``: start it with SIGINT ignored, as a non-interactive shell starts a background job
    (``cmd &``). It runs in a session of its own, so that a run that ignored the signal is stopped with
    everything it started (a report's pool workers hold its stderr open)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "leaselab", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignored else None,
        start_new_session=True,
    )
    err = b""
    try:
        deadline = time.monotonic() + 120
        while not any("skip-networking" in _cmd(p) for p in server_pids(root)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server_pids(root), "the server never started"
        time.sleep(1.0)
        proc.send_signal(sig)
        sent = time.monotonic()
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {time.monotonic() - sent:.0f} s after {sig.name}")
    finally:
        if proc.poll() is None or proc.returncode != 130:  # stop it and all it started: nothing left behind
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=30)
            for pid in server_pids(root):  # the servers run in sessions of their own
                engines.stop_pid(pid)
    return proc.returncode, err.decode()


TINY_REVIEW = """
name = "tiny"
seeds = 1

[[policy]]
label = "head"
preset = "head"

[[grid]]
name = "main"
scenarios = ["single_run"]
intensities = [0.5]
"""

CONFORM = ["conform", "--engines", "mariadb", "--examples", "2000"]


@pytest.mark.slow
@pytest.mark.parametrize("ignored", [False, True], ids=["sigint-default", "sigint-ignored-by-the-parent"])
def test_ctrl_c_stops_the_server_and_removes_its_data(ignored: bool, private_tmp: Path) -> None:
    src = need("mariadb")
    before = set(leftovers(private_tmp))
    code, err = _interrupt_once_the_server_runs(
        [*CONFORM, "--runtime-src", str(src)], private_tmp, signal.SIGINT, ignored=ignored
    )
    assert code == 130, err
    assert "interrupted; servers stopped" in err
    assert not server_pids(private_tmp)
    assert set(leftovers(private_tmp)) <= before, err


@pytest.mark.slow
def test_sigterm_during_the_reports_conformance_stops_the_server(private_tmp: Path, tmp_path: Path) -> None:
    src = need("mariadb")
    before = set(leftovers(private_tmp))
    config = tmp_path / "tiny.toml"  # were the signal lost, the review after the checks stays small
    config.write_text(TINY_REVIEW, encoding="utf-8")
    args = ["report", str(config), "--out", str(tmp_path / "out"), "--runtime-src", str(src)]
    args += ["--runtime-engines", "mariadb"]
    code, err = _interrupt_once_the_server_runs(args, private_tmp, signal.SIGTERM)
    assert code == 130, err
    assert not server_pids(private_tmp)
    assert set(leftovers(private_tmp)) <= before, err
    assert not (tmp_path / "out" / "index.html").exists()
