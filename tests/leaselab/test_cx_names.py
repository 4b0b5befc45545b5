"""Counterexample file names of ``explore`` and ``verify``: a flag variant or another fault range never
overwrites the plain search's file, and an unshrunk find never replaces a minimal one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

from leaselab.cli import app
from leaselab.cx_names import policy_tag, scenario_tag, write_keeping_minimal
from sim.explore.counterexample import read, write

runner = CliRunner()


def test_policy_tag_names_only_the_overrides_that_change_the_preset() -> None:
    assert policy_tag("head", {}) == "head"
    assert policy_tag("head", {"write_fence": True}) == "head"  # head's own value: the same policy
    assert policy_tag("head", {"write_fence": False, "idempotency_keys": True}) == (
        "head+idempotency_keys+write_fence=off"
    )
    assert policy_tag("adr-104", {"write_fence": True}) == "adr-104+write_fence"


def test_scenario_tag_marks_deployment_ranges_only() -> None:
    assert scenario_tag("default") == "default"
    assert scenario_tag("default", "deployment") == "default@deployment"


def test_verify_with_a_flag_keeps_the_plain_policys_files(tmp_path: Path) -> None:
    plain = runner.invoke(app, ["verify", "single_run", "--bound", "1", "--faults", "crash", "--out", str(tmp_path)])
    assert plain.exit_code == 1
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert any("-head-" in name for name in before)
    flag = ["--flag", "idempotency_keys=on"]
    flagged = runner.invoke(
        app, ["verify", "single_run", "--bound", "1", "--faults", "crash", *flag, "--out", str(tmp_path)]
    )
    assert flagged.exit_code == 1
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert {k: after[k] for k in before} == before  # nothing the plain run wrote changed
    new = set(after) - set(before)
    assert new and all("-head+idempotency_keys-" in name for name in new)
    for name in new:
        assert read(tmp_path / name).flags == {"idempotency_keys": True}


def test_explore_at_deployment_ranges_and_with_flags_names_its_files_apart(tmp_path: Path) -> None:
    args = ["explore", "single_run", "--faults", "crash", "--simulations", "30", "--budget-s", "60"]
    for extra in ([], ["--ranges", "deployment"], ["--flag", "idempotency_keys=on"]):
        result = runner.invoke(app, [*args, *extra, "--out", str(tmp_path)])
        assert result.exit_code == 1, result.output
    names = sorted(p.name for p in tmp_path.iterdir())
    assert any(n.startswith("single_run-head-") for n in names)
    assert any(n.startswith("single_run@deployment-head-") for n in names)
    assert any(n.startswith("single_run-head+idempotency_keys-") for n in names)


def _one_counterexample(tmp_path: Path) -> Path:
    result = runner.invoke(
        app, ["verify", "single_run", "--bound", "1", "--faults", "crash", "--out", str(tmp_path / "v")]
    )
    assert result.exit_code == 1
    return sorted((tmp_path / "v").iterdir())[0]


def test_an_unshrunk_find_goes_beside_a_minimal_file(tmp_path: Path) -> None:
    minimal_path = _one_counterexample(tmp_path)
    minimal = minimal_path.read_bytes()
    unshrunk = replace(read(minimal_path), note="not shrunk: the search was interrupted")
    went = write_keeping_minimal(unshrunk, minimal_path)
    assert went == minimal_path.with_name(minimal_path.stem + ".unshrunk.toml")
    assert minimal_path.read_bytes() == minimal  # the minimal file is untouched
    assert "not shrunk" in read(went).note


def test_a_shrunk_or_unreadable_file_is_replaced_as_a_rerun(tmp_path: Path) -> None:
    path = _one_counterexample(tmp_path)
    cx = read(path)
    rerun = replace(cx, note="rerun")
    assert write_keeping_minimal(rerun, path) == path and read(path).note == "rerun"
    earlier_unshrunk = replace(cx, note="not shrunk: the search was interrupted")
    write(earlier_unshrunk, path)
    again = replace(cx, note="not shrunk: the search was interrupted again")
    assert write_keeping_minimal(again, path) == path  # unshrunk over unshrunk: the newer one
    path.write_text("not toml [", encoding="utf-8")
    assert write_keeping_minimal(again, path) == path


def test_the_violation_line_counts_one_fault_in_the_singular(tmp_path: Path) -> None:
    args = ["explore", "single_run", "--faults", "crash", "--simulations", "30", "--out", str(tmp_path)]
    lines = runner.invoke(app, args).stdout.splitlines()[1:]
    assert lines and all(" 1 faults " not in line for line in lines)
    assert any(" 1 fault in the minimal script -> " in line for line in lines)
