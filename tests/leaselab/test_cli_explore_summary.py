"""`explore`'s ``summary.json``: written beside what a run found, so an interrupted run's summary never
outlives a complete run into the same directory (that a run that found nothing writes nothing is held
by the target and cost-target tests)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from leaselab.cli import app

runner = CliRunner()


def test_a_complete_run_that_found_something_replaces_an_interrupted_runs_summary(tmp_path: Path) -> None:
    out = tmp_path / "found"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps({"interrupted": True, "simulations": 3}), encoding="utf-8")
    result = runner.invoke(app, ["explore", "tool_outlives_lease", "--simulations", "5", "--out", str(out)])
    assert result.exit_code == 1, result.output
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["interrupted"] is False and summary["simulations"] == 5
    written = sorted(p.name for p in out.glob("*.toml"))
    assert written == sorted(Path(v["counterexample"]).name for v in summary["violations"])
