"""``leaselab report``: bad input is one line and exit 2; a run prints the path of index.html."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from leaselab.cli import app


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


def test_a_small_report_prints_the_path_of_index_html(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(
        'name = "tiny"\nseeds = 2\nseeds_per_task = 2\n'
        '[[policy]]\nlabel = "adr-111"\npreset = "adr-111"\n[[policy]]\nlabel = "head"\npreset = "head"\n'
        '[[grid]]\nname = "main"\nscenarios = ["single_run"]\n'
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["report", str(config), "--out", str(out), "--workers", "1", "--bound", "0"])
    assert result.exit_code == 0, result.output
    printed = [line for line in result.stdout.splitlines() if line.endswith("index.html")]
    assert printed == [str((out / "index.html").resolve())]
    assert (out / "report.md").exists() and (out / "report.json").exists()
    assert "simulating: 4/4 simulations (100%)" in result.output
