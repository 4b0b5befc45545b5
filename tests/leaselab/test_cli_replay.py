"""``leaselab replay FILE``: exit 1 when the violation reproduces, 3 when the history diverges (with the
usual causes), 0 when the same history no longer violates, 2 on a bad file; --timeline and --json."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from leaselab.cli import app
from leaselab.results import explained_by, verdict_lines
from register.mechanism import mechanism_of
from reports.timeline import render
from sim.explore.base import Target
from sim.explore.counterexample import NONDETERMINISM_CAUSES, Counterexample, to_toml, write
from sim.explore.exhaustive import ExhaustiveExplorer
from sim.world.simulate import SimulationResult

runner = CliRunner()
INVARIANT = "every_write_accounted"


@cache
def counterexample() -> Counterexample:
    report = ExhaustiveExplorer().verify(Target("single_run", "head", families=("crash",)), 1)
    return dict(report.violations)[INVARIANT]


@cache
def its_run() -> SimulationResult:
    return counterexample().run()


def replay(*args: str) -> Result:
    result = runner.invoke(app, ["replay", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture
def cx_file(tmp_path: Path) -> Path:
    return write(counterexample(), tmp_path / "cx.toml")


def edited(path: Path, key: str, value: str) -> Path:
    text, count = re.subn(rf"^{key} = .*$", f"{key} = {value}", path.read_text(encoding="utf-8"), count=1, flags=re.M)
    assert count == 1
    copy = path.with_name(f"edited-{key}.toml")
    copy.write_text(text, encoding="utf-8")
    return copy


def test_a_reproduced_violation_exits_1(cx_file: Path) -> None:
    result = replay(str(cx_file))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[-1].startswith(f"reproduced: {INVARIANT} violated [")
    assert lines[-1].endswith(f"], digest {counterexample().digest}")
    assert lines[:-1] == verdict_lines(its_run(), explained_by(its_run()))
    assert result.stderr == ""


def test_a_changed_digest_exits_3_naming_the_usual_causes(cx_file: Path) -> None:
    copy = edited(cx_file, "digest", '"00000000000000000000000000000000"')
    result = replay(str(copy))
    assert result.exit_code == 3
    assert "replay diverged" in result.stderr
    assert str(copy) in result.stderr
    assert its_run().digest in result.stderr and "00000000000000000000000000000000" in result.stderr
    assert NONDETERMINISM_CAUSES in result.stderr
    for cause in ("scenario", "wall clock", "random", "simpy"):
        assert cause in result.stderr
    assert "reproduced:" not in result.stdout


def test_a_changed_seed_diverges_and_exits_3(cx_file: Path) -> None:
    result = replay(str(edited(cx_file, "seed", "1")))
    assert result.exit_code == 3
    assert "replay diverged" in result.stderr


def test_the_same_history_without_the_violation_exits_0(cx_file: Path) -> None:
    holds = next(name for name, v in its_run().verdicts.items() if name not in its_run().violations)
    result = replay(str(edited(cx_file, "invariant", f'"{holds}"')))
    assert result.exit_code == 0
    assert f"{holds} now holds" in result.stdout


@pytest.mark.parametrize(
    ("case", "text"),
    [
        ("bad TOML", "scenario = = 1\n"),
        ("missing digest", lambda t: re.sub(r"^digest = .*\n", "", t, flags=re.M)),
        ("bad fault", lambda t: re.sub(r'"\d+ crash after 0.0"', '"crash after"', t)),
        ("unknown policy", lambda t: t.replace('policy = "head"', 'policy = "adr-999"')),
    ],
    ids=["bad-toml", "missing-digest", "bad-fault", "unknown-policy"],
)
def test_a_malformed_file_exits_2_with_one_line_naming_the_file(case: str, text: object, tmp_path: Path) -> None:
    good = to_toml(counterexample())
    content = text if isinstance(text, str) else text(good)  # type: ignore[operator]
    assert content != good
    path = tmp_path / "bad.toml"
    path.write_text(content, encoding="utf-8")
    result = replay(str(path))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"leaselab: {path}: ")
    assert "Traceback" not in result.output
    assert result.stdout == ""


def test_a_missing_file_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "absent.toml"
    result = replay(str(path))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"leaselab: {path}: no such counterexample file"]


def test_timeline_prints_the_events_then_the_verdicts(cx_file: Path) -> None:
    result = replay(str(cx_file), "--timeline")
    assert result.exit_code == 1
    timeline = render(its_run().history)
    verdicts = verdict_lines(its_run(), explained_by(its_run()))
    lines = result.stdout.splitlines()
    assert timeline and lines[: len(timeline)] == timeline
    assert lines[len(timeline) : len(timeline) + len(verdicts)] == verdicts
    assert len(lines) == len(timeline) + len(verdicts) + 1


def test_json_reports_the_replay(cx_file: Path) -> None:
    result = replay(str(cx_file), "--json")
    assert result.exit_code == 1
    assert result.stderr.startswith("reproduced: ")
    doc = json.loads(result.stdout)  # stdout is the document alone
    cx = counterexample()
    assert doc["counterexample"] == str(cx_file)
    assert (doc["invariant"], doc["expected_digest"], doc["digest"], doc["reproduced"]) == (
        INVARIANT,
        cx.digest,
        cx.digest,
        True,
    )
    assert doc["faults"] == [f.text() for f in cx.faults]
    assert doc["verdicts"][INVARIANT]["valid"] is False
    assert (doc["scenario"], doc["seed"]) == ("single_run", 0)
    assert "timeline" not in doc


def test_json_with_timeline_adds_the_timeline(cx_file: Path) -> None:
    result = replay(str(cx_file), "--json", "--timeline")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["timeline"] == render(its_run().history)


def test_json_of_a_diverged_replay_says_not_reproduced(cx_file: Path) -> None:
    result = replay(str(edited(cx_file, "digest", '"ffffffffffffffffffffffffffffffff"')), "--json")
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["reproduced"] is False
    assert doc["expected_digest"] == "ffffffffffffffffffffffffffffffff"
    assert doc["digest"] == its_run().digest


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "stored",
    [
        "register/entries/F-18-stale-snapshot-requeue-reruns-write.toml",
        "tests/properties/data/ng-sync-outer-requeued.toml",
    ],
)
def test_a_file_naming_its_scenario_by_a_root_relative_path_replays_from_any_directory(
    stored: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repository's Sync counterexamples name scenario files from the root; replayed from elsewhere
    (another working directory, or a copy of the file) they still find them."""
    copy = tmp_path / "elsewhere" / Path(stored).name
    copy.parent.mkdir()
    copy.write_text((ROOT / stored).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for path in (ROOT / stored, copy):
        result = replay(str(path))
        assert result.exit_code == 1 and "reproduced:" in result.stdout, result.stdout + result.stderr


def test_a_scenario_file_found_nowhere_is_still_a_one_line_error_naming_the_field(tmp_path: Path) -> None:
    text = (ROOT / "tests/properties/data/ng-sync-outer-requeued.toml").read_text(encoding="utf-8")
    bad = tmp_path / "cx.toml"
    bad.write_text(text.replace("single_run_sync.toml", "no_such_scenario.toml"), encoding="utf-8")
    result = replay(str(bad))
    assert result.exit_code == 2
    assert "scenario" in result.stderr and str(bad) in result.stderr and "Traceback" not in result.stderr


def test_a_reproduced_file_names_its_recorded_mechanism_and_says_when_the_register_now_differs(
    tmp_path: Path,
) -> None:
    source = write(replace(counterexample(), mechanism=""), tmp_path / "plain.toml")
    plain = replay(str(source)).stdout.splitlines()[-1]
    assert "mechanism" not in plain  # a file that records none
    now = mechanism_of(INVARIANT, its_run().indexed(), its_run().verdicts[INVARIANT]).label()
    recorded = write(replace(counterexample(), mechanism=now), tmp_path / "recorded.toml")
    line = replay(str(recorded)).stdout.splitlines()[-1]
    assert line == f"{plain}; mechanism {now[:160]} (as recorded)"
    other = write(replace(counterexample(), mechanism="F-99"), tmp_path / "other.toml")  # a near miss
    line = replay(str(other)).stdout.splitlines()[-1]
    assert line == f"{plain}; mechanism now {now[:160]}, recorded F-99"
