"""``leaselab run SCENARIO``: the JSON document, the exit code, the timeline and the error contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checks import COVERAGE, INVARIANTS
from leaselab.cli import app
from model.policy import FLAG_NAMES, PRESET_ALIASES, PRESETS
from reports.timeline import LEGEND, render
from scenarios.families import FAMILIES
from scenarios.loader import library_names
from sim.world.simulate import simulate

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
POLICIES = [*PRESETS, *PRESET_ALIASES]
TOP_LEVEL = ["scenario", "policy", "flags", "seed", "digest", "verdicts", "coverage", "faults_fired", "stats"]


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["run", *args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, json.loads(result.stdout)


def bad_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "typo.toml"
    path.write_text('name = "typo"\n[[runs]]\n[faults.audit]\nprobabilty = 0.1\n', encoding="utf-8")
    return path


# ---- the JSON document and the exit code ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("scenario", library_names())
def test_run_json_has_the_documented_shape_and_exits_1_exactly_on_a_false_verdict(scenario: str, policy: str) -> None:
    code, doc = run_json(scenario, "--policy", policy, "--seed", "0")
    assert list(doc) == TOP_LEVEL
    assert (doc["scenario"], doc["policy"], doc["flags"], doc["seed"]) == (scenario, policy, {}, 0)
    assert isinstance(doc["digest"], str) and len(doc["digest"]) == 32
    assert list(doc["verdicts"]) == [inv.name for inv in INVARIANTS]
    for verdict in doc["verdicts"].values():
        assert {"valid", "witness"} <= set(verdict)
        assert verdict["valid"] in (True, False, "unknown")
        assert all(isinstance(i, int) for i in verdict["witness"])
    assert set(doc["coverage"]) == {c.name for c in COVERAGE}
    assert all(isinstance(reached, bool) for reached in doc["coverage"].values())
    assert list(doc["faults_fired"]) == list(FAMILIES)
    assert all(isinstance(count, int) and count >= 0 for count in doc["faults_fired"].values())
    assert isinstance(doc["stats"], dict) and doc["stats"]
    violated = any(v["valid"] is False for v in doc["verdicts"].values())
    assert code == (1 if violated else 0)


def test_run_json_digest_and_verdicts_equal_the_library_call() -> None:
    _, doc = run_json("default", "--policy", "adr-112", "--seed", "3")
    result = simulate("default", "adr-112", 3)
    assert doc["digest"] == result.digest
    assert {name: v["valid"] for name, v in doc["verdicts"].items()} == {
        name: v.valid.json for name, v in result.verdicts.items()
    }
    assert doc["faults_fired"] == result.faults_fired


def test_run_json_witnesses_name_history_records_of_a_violation() -> None:
    code, doc = run_json("tool_outlives_lease", "--policy", "adr-104")
    assert code == 1
    violated = [v for v in doc["verdicts"].values() if v["valid"] is False]
    assert violated
    assert all(v["witness"] for v in violated)


def test_run_json_echoes_the_flag_overrides_as_booleans() -> None:
    _, doc = run_json("happy_path", "--flag", "write_fence=off", "--flag", "fence_blocks_retry=on")
    assert doc["flags"] == {"write_fence": False, "fence_blocks_retry": True}


def test_a_flag_override_reaches_the_simulation() -> None:
    _, with_fence = run_json("worker_crash_mid_write")
    _, without = run_json("worker_crash_mid_write", "--flag", "write_fence=off")
    assert with_fence["digest"] != without["digest"]


def test_the_seed_option_changes_the_history() -> None:
    _, zero = run_json("default", "--seed", "0")
    _, one = run_json("default", "--seed", "1")
    assert (zero["seed"], one["seed"]) == (0, 1)
    assert zero["digest"] != one["digest"]


def test_run_json_with_timeline_adds_the_timeline_lines() -> None:
    _, doc = run_json("happy_path", "--timeline")
    assert doc["timeline"] == render(simulate("happy_path", "head", 0).history)


# ---- the text form and the timeline ------------------------------------------------------------


def test_run_text_exits_0_and_prints_the_digest_and_one_line_per_invariant() -> None:
    result = runner.invoke(app, ["run", "happy_path"])
    assert result.exit_code == 0
    assert simulate("happy_path", "head", 0).digest in result.stdout
    assert all(inv.name in result.stdout for inv in INVARIANTS)


def test_run_text_prints_a_reproduce_line_on_a_violation() -> None:
    result = runner.invoke(app, ["run", "tool_outlives_lease", "--policy", "adr-104", "--seed", "2"])
    assert result.exit_code == 1
    assert "reproduce with: leaselab run tool_outlives_lease --policy adr-104 --seed 2" in result.stdout


def test_run_timeline_prints_the_legend_then_one_line_per_shown_event() -> None:
    result = runner.invoke(app, ["run", "happy_path", "--timeline"])
    expected = render(simulate("happy_path", "head", 0).history)
    headline, *lines = result.stdout.splitlines()
    assert headline.startswith("head: ")
    assert lines[0] == LEGEND
    assert lines[: len(expected)] == expected
    assert lines[len(expected)].startswith("scenario happy_path")


def test_run_timeline_verbose_shows_more_lines() -> None:
    plain = runner.invoke(app, ["run", "happy_path", "--timeline"]).stdout.splitlines()
    verbose = runner.invoke(app, ["run", "happy_path", "--timeline", "--verbose"]).stdout.splitlines()
    assert len(verbose) > len(plain)


def test_run_without_timeline_prints_no_legend() -> None:
    assert LEGEND not in runner.invoke(app, ["run", "happy_path"]).stdout


# ---- bad input ---------------------------------------------------------------------------------


def test_a_malformed_scenario_file_exits_2_with_one_line_naming_file_and_field(tmp_path: Path) -> None:
    path = bad_scenario(tmp_path)
    result = runner.invoke(app, ["run", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("leaselab: ")
    assert str(path) in lines[0] and "faults.audit.probabilty" in lines[0]
    assert "Traceback" not in result.output
    assert result.stdout == ""


def test_a_missing_scenario_file_exits_2_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.toml"
    result = runner.invoke(app, ["run", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"leaselab: {path}: no such scenario file"]


def test_an_unknown_scenario_name_exits_2_naming_the_nearest_and_where_the_library_is_listed() -> None:
    result = runner.invoke(app, ["run", "happy_pat"])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    listed = f"({len(library_names())} in all: `leaselab scenarios`; or a .toml path)"
    assert f"did you mean 'happy_path'? {listed}" in result.stderr


def test_an_unknown_policy_exits_2_listing_the_valid_policies() -> None:
    result = runner.invoke(app, ["run", "happy_path", "--policy", "adr-999"])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert "unknown policy 'adr-999'" in result.stderr
    assert all(name in result.stderr for name in POLICIES)


def test_an_unknown_flag_exits_2_naming_the_nearest_flag() -> None:
    result = runner.invoke(app, ["run", "happy_path", "--flag", "write_fences=off"])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert "unknown flag 'write_fences'" in result.stderr
    assert f"did you mean 'write_fence'? ({len(FLAG_NAMES)} in all: `leaselab policies`)" in result.stderr


def test_a_bad_flag_value_exits_2_naming_the_valid_values() -> None:
    result = runner.invoke(app, ["run", "happy_path", "--flag", "write_fence=maybe"])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert "'maybe'" in result.stderr and "on/off" in result.stderr


def test_a_negative_seed_exits_2() -> None:
    result = runner.invoke(app, ["run", "happy_path", "--seed", "-1"])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1


def test_an_unknown_targeted_fault_kind_exits_2_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "kind.toml"
    path.write_text('name = "k"\n[[runs]]\n[[script]]\nfamily = "provider"\nkind = "timeout"\non = "provider"\n')
    result = runner.invoke(app, ["run", str(path)])
    assert result.exit_code == 2
    assert "script.0" in result.stderr


# ---- a real process ----------------------------------------------------------------------------


def run_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "leaselab", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.slow
def test_run_from_a_real_process_prints_the_same_document_as_in_process() -> None:
    done = run_process("run", "happy_path", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == run_json("happy_path")[1]


@pytest.mark.slow
def test_a_malformed_scenario_from_a_real_process_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    path = bad_scenario(tmp_path)
    done = run_process("run", str(path))
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1
    assert str(path) in done.stderr and "faults.audit.probabilty" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
