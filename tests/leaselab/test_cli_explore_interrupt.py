"""``leaselab explore`` under Ctrl-C: a real SIGINT to a real process.

The search stops at once, what it found so far is written (counterexample files, unshrunk, and
``summary.json``), the last line on stderr says where they are and the command that searches on, and
the exit code is 130.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sim.explore.counterexample import read

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigint_writes_what_was_found_says_how_to_search_on_and_exits_130(tmp_path: Path, workers: str) -> None:
    out = tmp_path / "found"
    env = {**os.environ, "LEASELAB_PROGRESS_EVERY_S": "0.1", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "leaselab", "explore", "default", "--faults", "crash,store"]
    command += ["--budget-s", "600", "--workers", workers, "--out", str(out)]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    started = time.monotonic()
    line = ""
    # one worker shows its progress per simulation: wait until it is searching; the parallel search
    # reports only at its end, so give its workers time to start and meet something
    while workers == "1" and (" simulations" not in line or line.startswith("explore search: 0 ")):
        line = process.stderr.readline()
        assert line or process.poll() is None, "explore ended before it was interrupted"
        assert time.monotonic() - started < 120
    time.sleep(1.0 if workers == "1" else 15.0)
    assert process.poll() is None, "explore ended before it was interrupted"
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("interrupted after ") and str(out) in last
    assert "search on" in last and "--seed 1" in last
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["interrupted"] is True and summary["simulations"] >= 1
    written = sorted(p for p in out.iterdir() if p.suffix == ".toml")
    assert written and len(written) == len(summary["violations"])
    assert stdout.splitlines()[0].endswith("(exit 130)")
    cx = read(written[0])
    assert cx.mechanism and "not shrunk" in cx.note
    assert cx.run().digest == cx.digest
