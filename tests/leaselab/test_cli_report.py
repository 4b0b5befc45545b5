"""``leaselab report``: bad input is one line and exit 2; a run prints the path of index.html, shows
progress, and exits 1 when an invariant of the judged policy failed (0 with --exit-zero)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checks import INVARIANTS
from leaselab.cli import app

TINY = (
    'name = "tiny"\nseeds = 2\nseeds_per_task = 2\n'
    '[[policy]]\nlabel = "adr-111"\npreset = "adr-111"\n[[policy]]\nlabel = "head"\npreset = "head"\n'
    '[[grid]]\nname = "main"\nscenarios = ["single_run"]\n'
)
"""single_run: adr-111 violates invariants on seeds 0 and 1, head holds (the configuration's last policy)."""


def test_a_bad_config_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nseeds = 0\n[[policy]]\nlabel = "h"\npreset = "head"\n')
    result = CliRunner().invoke(app, ["report", str(bad), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "bad.toml" in result.output and "seeds" in result.output
    assert "Traceback" not in result.output


def test_a_missing_config_names_the_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2 and "nope.toml" in result.output


@pytest.mark.slow
def test_a_small_report_prints_the_path_of_index_html(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEASELAB_PROGRESS_EVERY_S", "0")  # a progress line per step, even for a short run
    config = tmp_path / "tiny.toml"
    config.write_text(TINY)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["report", str(config), "--out", str(out), "--workers", "1", "--bound", "0"])
    assert result.exit_code == 0, result.output
    printed = [line for line in result.stdout.splitlines() if line.endswith("index.html")]
    assert printed == [str((out / "index.html").resolve())]
    assert (out / "report.md").exists() and (out / "report.json").exists()
    assert "report simulating: 4/4 simulations, 100%" in result.stderr
    assert "report evidence: " in result.stderr and " jobs, 100%" in result.stderr
    assert "report figures: " in result.stderr and " figures, 100%" in result.stderr
    verdict = result.stderr.splitlines()[-1]  # 2 simulations of a small scenario leave some with no case
    judged = json.loads((out / "report.json").read_text())["verdicts"]
    (head,) = [v for v in judged if v["policy"] == "head"]
    assert head["unjudged"] and head["held"] + len(head["unjudged"]) == len(INVARIANTS)
    assert verdict == (
        f"head: {head['held']} of {len(INVARIANTS)} invariants held in all 2 simulations "
        f"(each at most 100% at 95% confidence), {len(head['unjudged'])} judged no case. Exit 0."
    )


@pytest.mark.slow
def test_a_failed_invariant_of_the_judged_policy_exits_1_unless_exit_zero(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(TINY)
    args = ["report", str(config), "--out", str(tmp_path / "out"), "--workers", "1", "--bound", "0"]
    failed = CliRunner().invoke(app, [*args, "--policy", "adr-111"])
    assert failed.exit_code == 1, failed.output
    verdict = failed.stderr.splitlines()[-1]
    assert verdict.startswith("adr-111: ") and "invariants held in all 2 simulations, 20 judged no case; " in verdict
    assert verdict.endswith(" Exit 1 as for any violation (--exit-zero: 0).")
    assert failed.stdout.strip().endswith("index.html")  # the report is written all the same
    collected = CliRunner().invoke(app, [*args, "--policy", "adr-111", "--exit-zero"])
    assert collected.exit_code == 0, collected.output
    assert collected.stderr.splitlines()[-1].endswith(" Exit 0 (--exit-zero; 1 without it, as for any violation).")


def test_an_unknown_judged_policy_is_one_line_before_any_work(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(TINY)
    result = CliRunner().invoke(app, ["report", str(config), "--out", str(tmp_path / "out"), "--policy", "nope"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "leaselab: --policy: no policy labelled 'nope' in sweep 'tiny' (valid: adr-111, head)"
    ]
    assert not (tmp_path / "out").exists()


def test_a_report_into_a_sweeps_directory_is_one_line_and_keeps_the_sweep(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(TINY)
    out = tmp_path / "sweep"
    swept = CliRunner().invoke(app, ["sweep", str(config), "--out", str(out), "--workers", "1", "--exit-zero"])
    assert swept.exit_code == 0, swept.output
    shards = sorted((out / "shards").iterdir())
    result = CliRunner().invoke(app, ["report", "--out", str(out), "--seeds", "1"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"leaselab: {out}: holds a sweep ('tiny') (give the report its own --out)"]
    assert sorted((out / "shards").iterdir()) == shards and not (out / "index.html").exists()


HEAD_FIRST = (
    'name = "head-first"\nseeds = 2\nseeds_per_task = 2\n'
    '[[policy]]\nlabel = "head"\npreset = "head"\n[[policy]]\nlabel = "adr-111"\npreset = "adr-111"\n'
    '[[grid]]\nname = "main"\nscenarios = ["single_run"]\n'
)
"""head first, a failing adr-111 last: the verdict (and the exit code) are head's, not the last policy's."""


@pytest.mark.slow
def test_the_verdict_is_heads_headline_not_the_last_policys(tmp_path: Path) -> None:
    config = tmp_path / "head-first.toml"
    config.write_text(HEAD_FIRST)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["report", str(config), "--out", str(out), "--workers", "1", "--bound", "0"])
    assert result.exit_code == 0, result.output
    verdict = result.stderr.splitlines()[-1]
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (head,) = [v for v in doc["verdicts"] if v["policy"] == "head"]
    assert verdict.startswith(head["headline"]) and verdict.endswith("Exit 0.")


@pytest.mark.slow
def test_a_report_written_again_removes_and_names_the_earlier_runs_files(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(TINY)
    out = tmp_path / "out"
    args = ["report", str(config), "--out", str(out), "--workers", "1", "--bound", "0", "--exit-zero"]
    assert CliRunner().invoke(app, args).exit_code == 0
    written = sorted(p.relative_to(out) for p in out.glob("counterexamples/**/*") if p.is_file())
    assert written
    stale = [out / "counterexamples" / "adr-111--gone.toml", out / "figures" / "counterexample-99.png"]
    for path in stale:
        path.write_text("from an earlier run", encoding="utf-8")
        os.utime(path, ns=(1, 1))
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert not any(path.exists() for path in stale)
    assert sorted(p.relative_to(out) for p in out.glob("counterexamples/**/*") if p.is_file()) == written
    (line,) = [line for line in again.stderr.splitlines() if line.startswith("leaselab: removed ")]
    assert line == (
        "leaselab: removed 2 files of an earlier run that this one did not write: "
        "counterexamples/adr-111--gone.toml, figures/counterexample-99.png"
    )
