"""Kill -9 safety of sweeps: the coordinator, or a worker of its pool, killed with SIGKILL at random
moments and the sweep resumed each time yields exactly the rows of an uninterrupted sweep: the same
keys, the same digests, nothing lost and nothing twice."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from checks.columns import ROW_KEY
from sim.sweep.config import SweepConfig, loads_config
from sim.sweep.directory import SHARDS, load
from sim.sweep.job import run_job
from sim.sweep.ledger import LEDGER, file_checksum, read_ledger

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
KILLS = 10
CONFIG = """
name = "kill"
seeds = 300
seeds_per_task = 4

[[policy]]
label = "head"
preset = "head"

[[policy]]
label = "adr-111"
preset = "adr-111"

[[grid]]
name = "main"
scenarios = ["single_run"]
"""
TASKS = 2 * 300 // 4


def config() -> SweepConfig:
    return loads_config(CONFIG, source="kill.toml")


@cache
def reference() -> list[tuple[object, ...]]:
    """The rows of an uninterrupted sweep, computed in this process: (row key..., digest)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        run_job(config(), Path(tmp), workers=1)
        return rows_of(load(Path(tmp)))


SWEEP = (sys.executable, "-m", "leaselab", "sweep")
"""The sweep command; the kill tests add --exit-zero: they judge durability, not the invariants."""


def rows_of(frame: pd.DataFrame) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in frame[[*ROW_KEY, "digest"]].itertuples(index=False))


def start(config_path: Path, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*SWEEP, str(config_path), "--out", str(out), "--workers", "2", "--exit-zero"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@contextmanager
def running(config_path: Path, out: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A sweep subprocess that never outlives its test, even a failing one (its pool's workers
    follow their coordinator out)."""
    proc = start(config_path, out)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def shards(out: Path) -> int:
    return len(list((out / SHARDS).glob("*.parquet"))) if (out / SHARDS).is_dir() else 0


def wait_for_new_shard(proc: subprocess.Popen[bytes], out: Path, before: int, timeout_s: float = 30.0) -> bool:
    """Until a shard beyond ``before`` exists (the sweep is mid-stream); False if it ended first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if shards(out) > before:
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    raise AssertionError("the sweep made no progress")


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def pool_workers(coordinator: int) -> list[int]:
    """The pool's worker processes: the coordinator's children running Python (not a resource tracker)."""
    workers = []
    for child in children(coordinator):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"resource_tracker" not in cmdline and b"forkserver" not in cmdline:
            workers.append(child)
        elif b"forkserver" in cmdline:
            workers += children(child)
    return workers


def all_exit(pids: list[int], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


def finish(config_path: Path, out: Path) -> None:
    done = subprocess.run(
        [*SWEEP, str(config_path), "--out", str(out), "--workers", "2", "--exit-zero"],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()


def assert_same_rows_as_uninterrupted(out: Path) -> None:
    frame = load(out)
    assert not frame.duplicated(list(ROW_KEY)).any()
    assert rows_of(frame) == reference()
    assert shards(out) == TASKS
    assert not [p for p in (out / SHARDS).iterdir() if not p.name.endswith(".parquet") and p.name != LEDGER]
    recorded = read_ledger(out / SHARDS)  # every shard's content is the one its checksum vouches for
    assert all(recorded[p.name] == file_checksum(p) for p in (out / SHARDS).glob("*.parquet"))


def test_a_coordinator_killed_at_random_moments_and_resumed_gives_the_uninterrupted_rows(tmp_path: Path) -> None:
    config_path, out = tmp_path / "kill.toml", tmp_path / "out"
    config_path.write_text(CONFIG, encoding="utf-8")
    rng = random.Random(9)
    mid_stream = 0
    for _ in range(KILLS):
        before = shards(out)
        with running(config_path, out) as proc:
            # The moment is drawn in shards written, not seconds, so a fast machine cannot finish the
            # whole sweep inside the kill window: 1 to 5 new shards, then a few milliseconds more.
            if wait_for_new_shard(proc, out, before + rng.randint(0, 4)):
                time.sleep(rng.uniform(0.0, 0.02))
            workers = pool_workers(proc.pid)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                mid_stream += 0 < shards(out) < TASKS
            proc.wait(timeout=30)
        assert all_exit(workers), "pool workers outlived their killed coordinator"
    assert mid_stream >= KILLS // 2  # most kills landed while shards were being written
    assert shards(out) < TASKS
    finish(config_path, out)
    assert_same_rows_as_uninterrupted(out)


def test_pool_workers_killed_at_random_moments_lose_and_double_no_row(tmp_path: Path) -> None:
    config_path, out = tmp_path / "kill.toml", tmp_path / "out"
    config_path.write_text(CONFIG, encoding="utf-8")
    rng = random.Random(11)
    killed = 0
    with running(config_path, out) as proc:
        while killed < KILLS and proc.poll() is None:
            if not wait_for_new_shard(proc, out, shards(out)):
                break
            time.sleep(rng.uniform(0.0, 0.05))
            workers = pool_workers(proc.pid)
            if workers:
                try:
                    os.kill(rng.choice(workers), signal.SIGKILL)
                    killed += 1
                except ProcessLookupError:
                    pass
        proc.wait(timeout=120)
        stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert killed >= KILLS // 2, killed
    if proc.returncode != 0:  # gave up after repeated deaths: one clear line, and a resume finishes
        assert proc.returncode == 2 and len(stderr.strip().splitlines()) == 1, stderr
        finish(config_path, out)
    assert_same_rows_as_uninterrupted(out)
