"""``leaselab explore --target F-18``: a register entry as the search's target.

The searches are bounded by --simulations, so what they meet is a function of the seed: F-18 on its own
Sync scenario at deployment ranges is met by the guided explorer at simulation 161 of seed 2 (a fresh
draw, shrunk) and 41 of seed 7 (a foothold branch, written with its cuts), the figures the mechanism
bench records for those seeds; F-15 on ``default`` by the swarm at simulation 8 of seed 5.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from leaselab.cli import app
from sim.explore.counterexample import read

runner = CliRunner()

SYNC = "register/entries/sync/tool_outlives_lease_sync.toml"
F18 = ["explore", SYNC, "--ranges", "deployment", "--faults", "store,slow", "--target", "F-18"]
TIMINGS = {"elapsed_s", "found_after_s", "first_s", "search_s", "search_cpu_s", "worker_cpu_s", "counterexample"}


def explore(*args: str) -> Result:
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def untimed(value: Any) -> Any:
    """A JSON document without what depends on the machine (seconds) or on --out (paths)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


@pytest.mark.parametrize("bad", ["F-99", "f-18", "NG-nothing", "every_write_accounted", ""])
def test_an_unknown_target_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, bad: str) -> None:
    out = tmp_path / "never"
    result = explore("explore", "--target", bad, "--out", str(out))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--target" in lines[0] and "Traceback" not in result.output
    assert result.stdout == "" and not out.exists()


def test_a_misspelt_id_is_told_the_close_one(tmp_path: Path) -> None:
    result = explore("explore", "--target", "f-18", "--out", str(tmp_path))
    assert result.exit_code == 2 and "did you mean 'F-18'" in result.stderr


@pytest.mark.parametrize(("seed", "met_at", "shrunk"), [(2, 161, True), (7, 41, False)])
def test_f18_is_met_written_and_replayed_with_its_mechanism(
    tmp_path: Path, seed: int, met_at: int, shrunk: bool
) -> None:
    result = explore(*F18, "--simulations", "300", "--seed", str(seed), "--out", str(tmp_path))
    assert result.exit_code == 1, result.output
    first = result.stdout.splitlines()[0]
    assert f"target F-18 met after {met_at} simulations" in first and first.endswith("(exit 1)")
    files = sorted(tmp_path.glob("*.toml"))
    assert [f.name for f in files] == [
        "tool_outlives_lease_sync@deployment-head-non_idempotent_at_most_once-F-18.toml"  # ranges in the name
    ]
    cx = read(files[0])
    assert cx.mechanism == "F-18" and cx.invariant == "non_idempotent_at_most_once"
    assert bool(cx.cuts) is not shrunk  # a branch find replays with its cuts and is not shrunk
    replayed = explore("replay", str(files[0]))
    assert replayed.exit_code == 1
    assert "reproduced: non_idempotent_at_most_once" in replayed.stdout
    assert "mechanism F-18 (as recorded)" in replayed.stdout


def test_the_json_says_when_the_target_was_first_met(tmp_path: Path) -> None:
    result = explore(*F18, "--simulations", "300", "--seed", "2", "--out", str(tmp_path), "--json")
    doc = json.loads(result.stdout)
    target = doc["target"]
    assert target["mechanism"] == "F-18" and target["met"] is True
    assert target["first_simulation"] == 161 == doc["simulations"]  # stopped at its first meeting
    assert target["invariants"] == ["non_idempotent_at_most_once"]
    assert [v["mechanism"] for v in doc["violations"]] == ["F-18"]  # the target alone is reported
    assert doc["violations"][0]["simulations_until_found"] == 161
    assert 0 <= target["first_s"] <= doc["elapsed_s"]


def test_the_same_seed_and_simulations_give_the_same_result(tmp_path: Path) -> None:
    runs = [
        json.loads(explore(*F18, "--simulations", "300", "--seed", "7", "--out", str(tmp_path / n), "--json").stdout)
        for n in ("a", "b")
    ]
    assert untimed(runs[0]) == untimed(runs[1])
    assert runs[0]["violations"][0]["minimal_script"] and runs[0]["target"]["first_simulation"] == 41
    texts = [
        (tmp_path / n).joinpath(Path(r["violations"][0]["counterexample"]).name).read_text()
        for n, r in zip(("a", "b"), runs, strict=True)
    ]
    assert texts[0] == texts[1]


def test_not_met_within_the_simulations_is_exit_0_and_says_where_the_register_met_it(tmp_path: Path) -> None:
    result = explore(*F18, "--simulations", "5", "--seed", "2", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith("guided: 5 simulations")
    assert "target F-18 not met" in first and "--ranges deployment --faults store,slow" in first
    assert first.endswith("(exit 0)") and not list(tmp_path.glob("*.toml"))


def test_the_swarm_takes_a_target_too_and_shrinks_its_find(tmp_path: Path) -> None:
    args = ["explore", "default", "--ranges", "deployment", "--faults", "store", "--target", "F-15"]
    result = explore(*args, "--explorer", "swarm", "--simulations", "20", "--seed", "5", "--out", str(tmp_path))
    assert result.exit_code == 1, result.output
    assert "swarm: 8 simulations" in result.stdout and "target F-15 met after 8 simulations" in result.stdout
    assert "in the minimal script" in result.stdout
    (path,) = tmp_path.glob("*.toml")
    assert read(path).mechanism == "F-15" and not read(path).cuts


@pytest.mark.slow
def test_workers_carry_the_target(tmp_path: Path) -> None:
    base = [*F18, "--simulations", "400", "--seed", "7", "--workers", "2", "--json"]
    docs = [json.loads(explore(*base, "--out", str(tmp_path / n)).stdout) for n in ("a", "b")]
    assert docs[0]["target"]["met"] is True and docs[0]["workers"] == 2
    assert [v["mechanism"] for v in docs[0]["violations"]] == ["F-18"]
    assert untimed(docs[0]) == untimed(docs[1])


def test_a_cost_target_still_works_beside_register_ids(tmp_path: Path) -> None:
    args = ["explore", "tool_outlives_lease", "--target", "cost:requeues", "--simulations", "20"]
    result = explore(*args, "--out", str(tmp_path))
    assert result.exit_code == 1 and "cost:requeues found" in result.stdout


def test_the_first_line_after_ctrl_c_says_whether_the_target_was_met() -> None:
    from leaselab.cmd_explore import first_line
    from sim.explore.base import ExploreReport, Target
    from sim.explore.entry_target import check_entry_target, outcome

    report = ExploreReport("guided", Target("default", "head"), simulations=40, elapsed_s=1.5)
    report.extra.update(interrupted=True, mechanisms=[])
    outcome(report, check_entry_target("F-16"))
    line = first_line(report)
    assert line.startswith("guided: 40 simulations in 1.5 s before Ctrl-C: target F-16 not met")
    assert line.endswith("(exit 130)")


def test_a_replayed_cost_instance_is_called_a_cost_not_unregistered_news(tmp_path: Path) -> None:
    args = ["explore", "tool_outlives_lease", "--target", "cost:requeues", "--simulations", "20"]
    assert explore(*args, "--out", str(tmp_path)).exit_code == 1
    (path,) = tmp_path.glob("*.toml")
    replayed = explore("replay", str(path))
    assert replayed.exit_code == 1
    assert "UNREGISTERED" not in replayed.stdout
    (line,) = [ln for ln in replayed.stdout.splitlines() if "cost:requeues" in ln and ln.startswith("  ")]
    assert line.startswith("  COST cost:requeues [a cost, not a violation: no register entry applies]: ")
    last = replayed.stdout.splitlines()[-1]
    assert last.startswith("reproduced: an instance of cost:requeues [a cost, not a violation")
