"""``leaselab explore``: the JSON document, the counterexample files under --out, the exit codes and the
one-line error contract.

The command's budget is wall-clock only (--budget-s), so the runs here use scenarios where the answer
does not depend on how many simulations fit: adr-104 violates writes_fenced_under_lease on single_run
without any fault (found by the first simulation), and audit faults cannot break head on single_run
(checked exhaustively below, so exit 0 is not luck).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from leaselab.cli import app
from scenarios.families import FAMILIES
from sim.explore.base import Target
from sim.explore.counterexample import read
from sim.explore.exhaustive import ExhaustiveExplorer

runner = CliRunner()

TOP_LEVEL = {"scenario", "policy", "flags", "faults", "explorer", "simulations", "elapsed_s", "violations"}
PER_VIOLATION = {
    "invariant",
    "mechanism",
    "explained",
    "found_after_s",
    "simulations_until_found",
    "counterexample",
    "faults_in_minimal",
}


def explore(*args: str) -> Result:
    result = runner.invoke(app, ["explore", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@cache
def found(out: str) -> tuple[int, dict[str, Any]]:
    result = explore(
        "single_run", "--policy", "adr-104", "--faults", "audit", "--budget-s", "0.3", "--out", out, "--json"
    )
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cx")


def test_json_has_the_documented_shape(out_dir: Path) -> None:
    _, doc = found(str(out_dir))
    assert set(doc) >= TOP_LEVEL
    assert (doc["scenario"], doc["policy"], doc["flags"], doc["faults"], doc["explorer"]) == (
        "single_run",
        "adr-104",
        {},
        ["audit"],
        "guided",
    )
    assert isinstance(doc["simulations"], int) and doc["simulations"] >= 1
    assert isinstance(doc["elapsed_s"], float) and doc["elapsed_s"] >= 0
    assert isinstance(doc["violations"], list) and doc["violations"]
    for entry in doc["violations"]:
        assert set(entry) >= PER_VIOLATION
        assert isinstance(entry["invariant"], str)
        assert isinstance(entry["found_after_s"], float) and entry["found_after_s"] >= 0
        assert isinstance(entry["simulations_until_found"], int)
        assert 1 <= entry["simulations_until_found"] <= doc["simulations"]
        assert isinstance(entry["counterexample"], str)
        assert isinstance(entry["faults_in_minimal"], int) and entry["faults_in_minimal"] >= 0
        assert isinstance(entry["mechanism"], str) and entry["mechanism"]
        assert entry["explained"] is not entry["mechanism"].startswith("unexplained: ")
    mechanisms = [(v["invariant"], v["mechanism"]) for v in doc["violations"]]
    assert len(mechanisms) == len(set(mechanisms)), "each mechanism is reported once"


def test_violations_exit_1(out_dir: Path) -> None:
    code, doc = found(str(out_dir))
    assert code == 1
    assert "writes_fenced_under_lease" in {v["invariant"] for v in doc["violations"]}


def test_each_violation_is_written_under_out_and_replays(out_dir: Path) -> None:
    _, doc = found(str(out_dir))
    written = sorted(out_dir.glob("*.toml"))
    assert sorted(Path(v["counterexample"]) for v in doc["violations"]) == written
    assert json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))["violations"] == doc["violations"]
    for entry in doc["violations"]:
        path = Path(entry["counterexample"])
        assert path.parent == out_dir and path.suffix == ".toml"
        cx = read(path)
        assert cx.invariant == entry["invariant"]
        assert len(cx.faults) == entry["faults_in_minimal"]
        result = cx.run()
        assert result.digest == cx.digest and cx.invariant in result.violations


def test_text_output_lists_each_violation_and_its_file(tmp_path: Path) -> None:
    result = explore(
        "single_run", "--policy", "adr-104", "--faults", "audit", "--budget-s", "0.2", "--out", str(tmp_path)
    )
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("guided: ") and "distinct mechanisms" in lines[0]
    assert "exit 1: a known violation is still a violation" in lines[0]
    files = sorted(tmp_path.glob("*.toml"))
    assert len(lines) == 1 + len(files) and (tmp_path / "summary.json").exists()
    for path in files:
        assert any(str(path) in line for line in lines[1:])


@cache
def audit_cannot_break_single_run() -> bool:
    report = ExhaustiveExplorer().verify(Target("single_run", "head", families=("audit",)), 1)
    return report.complete and not report.violations


@pytest.mark.slow
def test_no_violation_exits_0_and_writes_no_file(tmp_path: Path) -> None:
    assert audit_cannot_break_single_run(), "precondition: audit faults cannot break head on single_run"
    out = tmp_path / "cx"
    result = explore("single_run", "--faults", "audit", "--budget-s", "1", "--out", str(out), "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["violations"] == []
    assert doc["simulations"] >= 1
    assert not out.exists() or list(out.iterdir()) == []


def test_faults_all_means_every_family(tmp_path: Path) -> None:
    result = explore(
        "single_run", "--policy", "adr-104", "--faults", "all", "--budget-s", "0.1", "--out", str(tmp_path), "--json"
    )
    assert json.loads(result.stdout)["faults"] == list(FAMILIES)


def test_flags_are_echoed_and_reach_the_counterexample(tmp_path: Path) -> None:
    result = explore(
        "single_run",
        "--flag",
        "write_fence=off",
        "--faults",
        "audit",
        "--budget-s",
        "0.2",
        "--out",
        str(tmp_path),
        "--json",
    )
    doc = json.loads(result.stdout)
    assert doc["flags"] == {"write_fence": False}
    assert doc["violations"], "head without the write fence is unfenced on single_run without faults"
    for entry in doc["violations"]:
        assert dict(read(Path(entry["counterexample"])).flags) == {"write_fence": False}


@pytest.mark.slow
def test_the_hypothesis_explorer_runs_and_reports_a_minimal_script(tmp_path: Path) -> None:
    result = explore(
        "single_run",
        "--explorer",
        "hypothesis",
        "--faults",
        "crash",
        "--budget-s",
        "1.0",
        "--out",
        str(tmp_path),
        "--json",
    )
    doc = json.loads(result.stdout)
    assert doc["explorer"] == "hypothesis"
    assert set(doc) >= TOP_LEVEL
    assert result.exit_code == (1 if doc["violations"] else 0)
    assert doc["violations"], "a crash after the first request of single_run is found within 5 examples (~0.1 s)"
    for entry in doc["violations"]:
        assert set(entry) >= PER_VIOLATION
        assert 1 <= entry["faults_in_minimal"] <= 3
        cx = read(Path(entry["counterexample"]))
        assert cx.explorer == "hypothesis"
        assert {f.family for f in cx.faults} == {"crash"}


BAD_INPUT = {
    "unknown family": (["--faults", "slow,meteor"], "unknown fault family 'meteor'"),
    "empty family list": (["--faults", ","], "--faults"),
    "unknown explorer": (["--explorer", "dfs"], "unknown explorer 'dfs'"),
    "unknown policy": (["--policy", "adr-999"], "unknown policy 'adr-999'"),
    "unknown flag": (["--flag", "write_fences=off"], "unknown flag 'write_fences'"),
    "bad flag value": (["--flag", "write_fence=maybe"], "'maybe'"),
    "flag without value": (["--flag", "write_fence"], "NAME=VALUE"),
    "budget below minimum": (["--budget-s", "0"], "--budget-s"),
    "negative seed": (["--seed", "-1"], "--seed"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_exits_2_with_one_line_and_no_traceback(case: str, tmp_path: Path) -> None:
    args, needle = BAD_INPUT[case]
    out = tmp_path / "cx"
    result = explore("single_run", "--budget-s", "0.1", "--out", str(out), *args)  # a repeated option: the last wins
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("leaselab: ")
    assert needle in lines[0]
    assert "Traceback" not in result.output
    assert result.stdout == ""
    assert not out.exists()


def test_an_unknown_scenario_exits_2_with_one_line(tmp_path: Path) -> None:
    result = explore("no_such_scenario", "--budget-s", "0.1", "--out", str(tmp_path / "cx"))
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert "unknown scenario 'no_such_scenario'" in result.stderr


def test_counterexamples_go_to_their_own_default_directory_and_progress_is_plain_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not into the report's ``reports/out/counterexamples``: into ``out/explore`` of the working
    directory. Off a terminal, progress is plain lines on stderr (one per step with the period at 0)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LEASELAB_PROGRESS_EVERY_S", "0")
    result = explore("single_run", "--policy", "adr-104", "--faults", "audit", "--simulations", "20", "--json")
    assert result.exit_code == 1, result.output
    written = [Path(v["counterexample"]) for v in json.loads(result.stdout)["violations"]]
    assert written and all(p.parent == Path("out/explore") and (tmp_path / p).exists() for p in written)
    assert not (tmp_path / "reports").exists()
    searched = [line for line in result.stderr.splitlines() if line.startswith("explore search: ")]
    assert searched[-1].startswith("explore search: 20/20 simulations, 100%, ") and "mechanisms" in searched[-1]
