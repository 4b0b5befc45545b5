"""``leaselab replay FILE --causality``: after the replay, the counterexample's causality curve, as text or in
the JSON; the exit codes stay those of the replay, and a replay that diverged gets no curve."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from leaselab.cli import app
from reports import causality
from sim.explore.base import Target
from sim.explore.causality import curve
from sim.explore.counterexample import Counterexample, write
from sim.explore.exhaustive import ExhaustiveExplorer

runner = CliRunner()
INVARIANT = "every_write_accounted"


@cache
def counterexample() -> Counterexample:
    report = ExhaustiveExplorer().verify(Target("single_run", "head", families=("crash",)), 1)
    return dict(report.violations)[INVARIANT]


@cache
def measured() -> dict[str, Any]:
    return curve(counterexample()).document()


def replay(*args: str) -> Result:
    result = runner.invoke(app, ["replay", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture
def cx_file(tmp_path: Path) -> Path:
    return write(counterexample(), tmp_path / "cx.toml")


def test_causality_prints_every_point_after_the_verdicts(cx_file: Path) -> None:
    result = replay(str(cx_file), "--causality")
    assert result.exit_code == 1
    expected = causality.lines(measured(), counterexample().run().history)
    lines = result.stdout.splitlines()
    start = lines.index(expected[0])
    assert lines[start : start + len(expected) - 1] == expected[:-1]  # all but the CPU-time line
    assert lines[start + len(expected) - 1].endswith("CPU s)")
    assert lines[-1].startswith(f"reproduced: {INVARIANT} violated")
    assert len(expected) == 2 + len(measured()["points"]) + len(measured()["moments"]) + 2


def test_causality_in_json_is_the_curve_with_its_intervals(cx_file: Path) -> None:
    result = replay(str(cx_file), "--json", "--causality")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    shown = doc["causality"]
    assert [(p["cut"], p["same"], p["draws"]) for p in shown["points"]] == [
        (p["cut"], p["same"], p["draws"]) for p in measured()["points"]
    ]
    assert all(p["lower"] <= p["share"] <= p["upper"] for p in shown["points"])
    assert shown["sentence"]


def test_a_diverged_replay_gets_no_curve(cx_file: Path) -> None:
    text = re.sub(r"^digest = .*$", 'digest = "ffffffffffffffffffffffffffffffff"', cx_file.read_text(), flags=re.M)
    cx_file.write_text(text, encoding="utf-8")
    result = replay(str(cx_file), "--causality")
    assert result.exit_code == 3
    assert "causality" not in result.stdout
