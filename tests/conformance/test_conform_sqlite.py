"""The conformance check on embedded SQLite: every check runs, and every divergence is explained."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from leaselab.cli import app
from model.statements import NAMES, RENEW_LEASE
from model.transitions import RenewLease
from sim.conform import runner
from sim.conform.checks import all_checks
from tests.conformance.conftest import leftovers, need

pytestmark = pytest.mark.slow


def test_every_check_runs_on_sqlite_and_nothing_is_unexplained(private_tmp: Path) -> None:
    src = need("sqlite")
    before = set(leftovers(private_tmp))
    results = runner.run(runner.Options(src, ("sqlite",), examples=40, seed=1))
    assert {r.check for r in results} == {c.name for c in all_checks()}
    assert all(r.cases >= 30 for r in results), [(r.check, r.cases) for r in results]
    unexplained = [(r.check, [d.keys for d in r.groups.values() if d.reason is None]) for r in results if r.unexplained]
    assert not unexplained
    assert set(leftovers(private_tmp)) <= before


def test_the_json_output_has_the_documented_shape() -> None:
    src = need("sqlite")
    result = CliRunner().invoke(
        app,
        [
            "conform",
            "--runtime-src",
            str(src),
            "--examples",
            "5",
            "--json",
            "--check",
            RENEW_LEASE,
            "--check",
            "reaper",
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"engines", "unexplained", "checks"}
    assert doc["engines"] == ["sqlite"] and doc["unexplained"] == 0
    assert [c["check"] for c in doc["checks"]] == [NAMES[RENEW_LEASE], "reaper"]
    for c in doc["checks"]:
        assert set(c) == {"check", "engine", "cases", "divergences", "unexplained", "explanations"}


def test_a_wrong_guarded_statement_planted_in_the_model_exits_1_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    src = need("sqlite")
    right = RenewLease.apply

    def no_owner_guard(self: RenewLease, row):  # type: ignore[no-untyped-def]
        return right(RenewLease(row.claimed_by, self.now), row)  # renews whoever holds the run

    monkeypatch.setattr(RenewLease, "apply", no_owner_guard)
    result = CliRunner().invoke(app, ["conform", "--runtime-src", str(src), "--examples", "60", "--check", RENEW_LEASE])
    assert result.exit_code == 1, result.output
    assert NAMES[RENEW_LEASE] in result.stdout and "UNEXPLAINED" in result.stdout
    assert "$repository->renewLease(" in result.stdout


def test_bad_input_is_one_line_and_exit_2(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(app, ["conform", "--runtime-src", str(tmp_path)])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and "not a checkout" in result.output
    src = need("sqlite")
    result = CliRunner().invoke(app, ["conform", "--runtime-src", str(src), "--engines", "oracle"])
    assert result.exit_code == 2 and "unknown engine" in result.output


def test_the_reports_runtime_checks_refuse_bad_input_before_the_sweep(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["report", "--out", str(out), "--runtime-src", str(tmp_path)])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and "not a checkout" in result.output
    src = need("sqlite")
    result = CliRunner().invoke(app, ["report", "--out", str(out), "--runtime-src", str(src), "--runtime-engines", "x"])
    assert result.exit_code == 2 and "unknown engine 'x'" in result.output
    assert not (out / "index.html").exists()
