"""``leaselab sweep``: the verdict line first, what the register says of each failed invariant, the
exit contract (``--known-ok``, ``--exit-zero``), counts over the whole directory after a resume, and
Ctrl-C (finished shards kept, how to resume, exit 130)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from leaselab.cli import app
from leaselab.cmd_sweep import plural, sweep_exit_code

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

CONFIG = """
name = "verdict-tiny"
seeds = 4
seeds_per_task = 2

[[policy]]
label = "adr-111"
preset = "adr-111"

[[policy]]
label = "head"
preset = "head"

[[grid]]
name = "main"
scenarios = ["default"]
intensities = [1.0]
"""


def config_file(tmp_path: Path, text: str = CONFIG) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_first_line_is_the_judged_policys_verdict_and_each_failure_says_what_explains_it(tmp_path: Path) -> None:
    config, out = config_file(tmp_path), tmp_path / "out"
    result = runner.invoke(app, ["sweep", str(config), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 1
    first, written, *rest = result.stdout.splitlines()
    heading = next(i for i, line in enumerate(rest) if line.endswith(" of head, one counterexample each:"))
    register = next(i for i, line in enumerate(rest) if line.startswith("register: "))  # then what it met before
    failures, mechanisms = rest[:heading], rest[heading + 1 : register]
    assert first.startswith("head: ") and "exit 1 as for any violation" in first
    assert written.startswith(f"wrote {out}: 8 simulations in 4 shards (0 reused, 0 redone), ")
    assert failures and all(" simulations of head (" in line for line in failures)
    # then each distinct mechanism of head once, with its first meeting and its file
    assert rest[heading] == f"{len(mechanisms)} distinct mechanisms of head, one counterexample each:"
    for line in mechanisms:
        path = out / line.rsplit(" -> ", 1)[1]
        assert path.is_file() and path.parent.parent.name == "counterexamples" and path.name.startswith("head--")
        assert ": first met at simulation " in line and path.parent.name in line
    # every row of head says what explains each of its violations: the labels are its tallies
    rows = [
        row
        for shard in sorted((out / "shards").glob("*.parquet"))
        for row in pq.read_table(shard).to_pylist()
        if row["policy"] == "head"
    ]
    for line in failures:
        name = line.split(":")[0].strip()
        whys = [row[f"why.{name}"] for row in rows if row[f"inv.{name}"] is False]
        assert whys and all(why is not None for why in whys)
        assert f"violated in {len(whys)} of 4 simulations of head" in line
        for why in set(whys):
            assert (f"known: {why}" if why.startswith("F-") else f"non-guarantee: {why}") in line or not why


def test_shrink_shrinks_each_kept_counterexample_and_the_lines_say_how_far(tmp_path: Path) -> None:
    config, out = config_file(tmp_path), tmp_path / "out"
    plain = runner.invoke(app, ["sweep", str(config), "--out", str(tmp_path / "plain"), "--workers", "1"])
    assert all(", not shrunk -> " in line for line in plain.stdout.splitlines() if ": first met at simulation " in line)
    result = runner.invoke(app, ["sweep", str(config), "--out", str(out), "--workers", "1", "--shrink", "--json"])
    assert result.exit_code == 1
    mechanisms = json.loads(result.stdout)["mechanisms"]
    assert mechanisms and all(m["shrunk"] and m["faults"] <= m["faults_found"] for m in mechanisms)
    text = runner.invoke(app, ["sweep", str(config), "--out", str(out)]).stdout.splitlines()
    lines = [line for line in text if ": first met at simulation " in line]
    assert lines and all(", shrunk " in line and " fault" in line for line in lines)


def test_known_ok_exits_0_when_every_violation_is_on_record_and_says_so(tmp_path: Path) -> None:
    config, out = config_file(tmp_path), tmp_path / "out"
    result = runner.invoke(app, ["sweep", str(config), "--out", str(out), "--workers", "1", "--known-ok"])
    summary = json.loads(runner.invoke(app, ["sweep", str(config), "--out", str(out), "--json"]).stdout)
    tallies = summary["judged"]["explained_by"]
    on_record = all(why not in ("", "?") for tally in tallies.values() for why in tally)
    assert result.exit_code == (0 if on_record else 1)
    assert result.stdout.splitlines()[0].endswith("exit 0 (--known-ok)" if on_record else "; exit 1")


def test_the_exit_code_follows_the_contract() -> None:
    failed = {"policy": "head", "failed": {"a": 2}, "explained_by": {"a": {"F-01": 2}}}
    assert sweep_exit_code(failed, exit_zero=False, known_ok=False) == 1
    assert sweep_exit_code(failed, exit_zero=False, known_ok=True) == 0
    assert sweep_exit_code(failed, exit_zero=True, known_ok=False) == 0
    news = {**failed, "explained_by": {"a": {"F-01": 1, "": 1}}}
    assert sweep_exit_code(news, exit_zero=False, known_ok=True) == 1
    older = {**failed, "explained_by": {"a": {"?": 2}}}
    assert sweep_exit_code(older, exit_zero=False, known_ok=True) == 1
    assert sweep_exit_code({**failed, "failed": {}}, exit_zero=False, known_ok=False) == 0


def test_a_resumed_sweep_counts_every_counterexample_in_the_directory(tmp_path: Path) -> None:
    config, out = config_file(tmp_path), tmp_path / "out"
    first = json.loads(runner.invoke(app, ["sweep", str(config), "--out", str(out), "--json"]).stdout)
    again = json.loads(runner.invoke(app, ["sweep", str(config), "--out", str(out), "--json"]).stdout)
    assert first["counterexamples_written"] == first["counterexamples"] > 0
    assert again["counterexamples_written"] == 0
    assert again["counterexamples"] == first["counterexamples"] == len(list(out.glob("counterexamples/*/*.toml")))
    text = runner.invoke(app, ["sweep", str(config), "--out", str(out)]).stdout
    assert f"{first['counterexamples']} counterexamples (0 new this run), no simulation this run" in text


def test_counts_read_as_words() -> None:
    assert (plural(1, "shard"), plural(2000, "shard")) == ("1 shard", "2,000 shards")


@pytest.mark.slow
def test_ctrl_c_keeps_the_finished_shards_says_how_to_resume_and_exits_130(tmp_path: Path) -> None:
    config = config_file(tmp_path, CONFIG.replace("seeds = 4", "seeds = 400"))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "leaselab", "sweep", str(config), "--out", str(out), "--workers", "2"]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while not list(out.glob("shards/*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stdout == ""
    last = stderr.strip().splitlines()[-1]
    kept = len(list(out.glob("shards/*.parquet")))
    assert kept >= 1 and "Traceback" not in stderr
    assert last.startswith(f"leaselab: interrupted: {plural(kept, 'finished shard')} kept in {out / 'shards'}")
    assert last.endswith(f"resume with: leaselab sweep {config} --out {out} --workers 2")


def test_each_failed_invariants_rate_has_its_wilson_interval(tmp_path: Path) -> None:
    from reports.stats import percent, wilson

    config, out = config_file(tmp_path), tmp_path / "out"
    result = runner.invoke(app, ["sweep", str(config), "--out", str(out), "--workers", "1"])
    failures = [line for line in result.stdout.splitlines() if ": violated in " in line]
    assert failures
    for line in failures:
        k, n = (int(w) for w in line.split(": violated in ")[1].split(" simulations")[0].split(" of "))
        low, high = wilson(k, n)
        assert f"({percent(k / n)} [{percent(low)}\u2013{percent(high)}])" in line
