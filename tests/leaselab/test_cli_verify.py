"""``leaselab verify SCENARIO --bound K``: the JSON document, the sentence, the counterexample files and the
exit codes of the exhaustive explorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from leaselab.cli import app
from sim.explore.base import Target
from sim.explore.counterexample import read
from sim.explore.exhaustive import ExhaustiveExplorer

runner = CliRunner()
TOP_LEVEL = {"scenario", "policy", "flags", "schedules", "bound", "complete", "elapsed_s", "sentence", "violations"}
PER_VIOLATION = {
    "invariant",
    "mechanism",
    "explained",
    "found_after_s",
    "schedules_until_found",
    "simulations_until_found",
    "faults",
    "ties",
    "seed",
    "digest",
    "counterexample",
}


def verify(*args: str) -> Result:
    result = runner.invoke(app, ["verify", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_json_has_the_documented_shape_and_exits_1_on_a_violation(tmp_path: Path) -> None:
    result = verify("single_run", "--bound", "1", "--faults", "crash", "--out", str(tmp_path), "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert set(doc) >= TOP_LEVEL
    assert (doc["scenario"], doc["policy"], doc["flags"], doc["bound"], doc["complete"]) == (
        "single_run",
        "head",
        {},
        1,
        True,
    )
    assert doc["sentence"].startswith("violations up to bound 1: ")
    assert doc["violations"]
    for entry in doc["violations"]:
        assert set(entry) >= PER_VIOLATION
        assert entry["invariant"] in doc["sentence"]
        assert entry["seed"] == 0 and entry["ties"] == []
        assert len(entry["faults"]) == 1 and " crash " in entry["faults"][0]
        assert 1 < entry["simulations_until_found"] == entry["schedules_until_found"] <= doc["schedules"]
        assert 0 <= entry["found_after_s"] <= doc["elapsed_s"]
    assert len({v["mechanism"] for v in doc["violations"]}) == len(doc["violations"]), "each mechanism once"
    firsts = [v["simulations_until_found"] for v in doc["violations"]]
    assert firsts == sorted(firsts), "in the order first met"


def test_the_schedule_count_equals_the_library_call(tmp_path: Path) -> None:
    doc = json.loads(verify("single_run", "--bound", "1", "--faults", "crash", "--out", str(tmp_path), "--json").stdout)
    report = ExhaustiveExplorer().verify(Target("single_run", "head", families=("crash",)), 1)
    assert doc["schedules"] == report.schedules
    assert sorted({v["invariant"] for v in doc["violations"]}) == [name for name, _ in report.violations]
    by_mechanism = ExhaustiveExplorer(mechanisms=True).verify(Target("single_run", "head", families=("crash",)), 1)
    assert [v["digest"] for v in doc["violations"]] == [cx.digest for _, cx in by_mechanism.mechanisms]
    assert [v["mechanism"] for v in doc["violations"]] == [cx.mechanism for _, cx in by_mechanism.mechanisms]


def test_each_violation_is_written_as_a_file_that_replays(tmp_path: Path) -> None:
    doc = json.loads(verify("single_run", "--faults", "crash", "--out", str(tmp_path), "--json").stdout)
    assert sorted(Path(v["counterexample"]) for v in doc["violations"]) == sorted(tmp_path.iterdir())
    for entry in doc["violations"]:
        path = Path(entry["counterexample"])
        assert path.name.startswith(f"verify-single_run-head-{entry['invariant']}-")
        assert path.name.endswith(f"-{entry['mechanism']}.toml") is entry["explained"]
        cx = read(path)
        assert [f.text() for f in cx.faults] == entry["faults"]
        result = cx.run()
        assert result.digest == entry["digest"] == cx.digest
        assert entry["invariant"] in result.violations


def test_no_violation_exits_0_with_the_sentence(tmp_path: Path) -> None:
    # single_run's remote write is non-idempotent (as every MCP tool at head): a provider failure after
    # it would rerun it (F-01), so the clean search draws audit and dispatch failures.
    result = verify("single_run", "--bound", "1", "--faults", "audit,dispatch", "--out", str(tmp_path))
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].endswith(": no violation up to bound 1")
    assert list(tmp_path.iterdir()) == []


def test_text_output_has_the_count_the_sentence_and_one_line_per_violation(tmp_path: Path) -> None:
    result = verify("single_run", "--faults", "crash", "--out", str(tmp_path))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert " schedules in " in lines[0] and "violations up to bound 1: " in lines[0]
    files = sorted(tmp_path.iterdir())
    assert len(lines) == 1 + len(files)
    for path in files:
        assert any(line.endswith(str(path)) for line in lines[1:])
    assert all(": first met after " in line and " schedules: [" in line for line in lines[1:])


def test_bound_0_runs_one_schedule(tmp_path: Path) -> None:
    result = verify("single_run", "--bound", "0", "--out", str(tmp_path), "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert (doc["schedules"], doc["bound"], doc["sentence"], doc["violations"]) == (
        1,
        0,
        "no violation up to bound 0",
        [],
    )


def test_max_schedules_says_the_bound_was_not_exhausted(tmp_path: Path) -> None:
    result = verify(
        "single_run", "--faults", "audit,dispatch", "--max-schedules", "4", "--out", str(tmp_path), "--json"
    )
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert (doc["schedules"], doc["complete"]) == (4, False)
    assert doc["sentence"] == "no violation in the 4 schedules explored (bound 1 not exhausted)"


def test_a_flag_reaches_the_search(tmp_path: Path) -> None:
    result = verify("single_run", "--bound", "0", "--flag", "write_fence=off", "--out", str(tmp_path), "--json")
    doc = json.loads(result.stdout)
    assert doc["flags"] == {"write_fence": False}
    assert result.exit_code == 1
    assert [v["invariant"] for v in doc["violations"]] == ["writes_fenced_under_lease"]
    assert read(Path(doc["violations"][0]["counterexample"])).flags == {"write_fence": False}


BAD_INPUT = {
    "bound above 4": (["single_run", "--bound", "5"], "--bound"),
    "negative bound": (["single_run", "--bound", "-1"], "--bound"),
    "unknown family": (["single_run", "--faults", "meteor"], "unknown fault family 'meteor'"),
    "unknown policy": (["single_run", "--policy", "adr-999"], "unknown policy 'adr-999'"),
    "unknown flag": (["single_run", "--flag", "write_fences=off"], "unknown flag 'write_fences'"),
    "unknown scenario": (["no_such_scenario"], "unknown scenario 'no_such_scenario'"),
    "no scenario": ([], "Missing argument 'scenario'"),
    "zero max schedules": (["single_run", "--max-schedules", "0"], "--max-schedules"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_exits_2_with_one_line(case: str, tmp_path: Path) -> None:
    args, needle = BAD_INPUT[case]
    result = verify(*args, "--out", str(tmp_path / "cx"))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("leaselab: ") and needle in lines[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "cx").exists()


def test_counterexamples_go_to_their_own_default_directory_and_progress_counts_schedules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``out/verify`` of the working directory, not the report's; off a terminal, a plain line per
    level with the schedules run of the level's total (one per schedule with the period at 0)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LEASELAB_PROGRESS_EVERY_S", "0")
    result = verify("single_run", "--bound", "1", "--faults", "crash", "--json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    written = [Path(v["counterexample"]) for v in doc["violations"]]
    assert written and all(p.parent == Path("out/verify") and (tmp_path / p).exists() for p in written)
    assert not (tmp_path / "reports").exists()
    level = [line for line in result.stderr.splitlines() if line.startswith("verify level 1/1: ")]
    total = doc["schedules"] - 1  # the fault-free baseline is level 0
    assert len(level) == total
    assert level[-1].startswith(f"verify level 1/1: {total}/{total} schedules, 100%, ")


def test_verifying_a_second_scenario_keeps_the_first_ones_files(tmp_path: Path) -> None:
    """File names carry scenario, policy, invariant and mechanism: a second scenario adds its files."""
    first = json.loads(verify("single_run", "--faults", "crash", "--out", str(tmp_path), "--json").stdout)
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    second = json.loads(verify("happy_path", "--faults", "crash", "--out", str(tmp_path), "--json").stdout)
    assert first["violations"] and second["violations"]
    after = {p: p.read_bytes() for p in tmp_path.iterdir()}
    assert all(after.get(p) == content for p, content in before.items())
    assert len(after) == len(before) + len(second["violations"])


def test_text_names_what_the_register_explains(tmp_path: Path) -> None:
    result = verify("single_run", "--faults", "crash", "--out", str(tmp_path))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert "known to the register" in lines[0] and "exit 1: a known violation is still a violation" in lines[0]
    assert any(line.startswith(("  known: F-", "  non-guarantee: NG-")) for line in lines[1:])
