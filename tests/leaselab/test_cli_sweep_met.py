"""``leaselab sweep`` against the register's record of where each entry was met (register/met_rates.py):
end to end, a flag mutant of head that removes a mechanism (``idempotency_keys``: a completed write is
replayed from the dedup store, never rerun, so F-01 cannot happen) is swept as if it were head, and the
summary says F-01 is no longer met where the record met it in 41 of 100 simulations; with too few
simulations it says there are not enough to say; unmutated head meets it again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from leaselab.cli import app
from model.policy import Policy, resolve_policy
from sim.sweep import rows

pytestmark = pytest.mark.slow

runner = CliRunner()


def config(tmp_path: Path, seeds: int) -> Path:
    path = tmp_path / "head.toml"
    path.write_text(
        f"""name = "head-default"
seeds = {seeds}
seeds_per_task = 10

[[policy]]
label = "head"
preset = "head"

[[grid]]
name = "mine"
scenarios = ["default"]
intensities = [1.0]
""",
        encoding="utf-8",
    )
    return path


def without_reruns(name: str, flags: dict[str, bool]) -> Policy:
    """Head with the idempotency keys of the proposal switched on: the runtime a change removed F-01 from."""
    return resolve_policy(name, {**flags, "idempotency_keys": True})


def test_a_mutant_of_head_that_removes_a_mechanism_is_news(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows, "resolve_policy", without_reruns)  # the pool's workers are forked: they see it
    out = runner.invoke(
        app, ["sweep", str(config(tmp_path, 20)), "--out", str(tmp_path / "out"), "--workers", "1", "--exit-zero"]
    )
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    [gone] = [line for line in lines if line.startswith("  no longer met: F-01")]
    assert "met before in adr-review grid main: 41 of 100 simulations; this sweep ran 20 there" in gone
    assert "replay: leaselab run default --policy head --seed" in gone
    assert any(line.startswith("register: No longer met where the register met it: F-01") for line in lines)
    doc = runner.invoke(
        app, ["sweep", str(config(tmp_path, 20)), "--out", str(tmp_path / "out"), "--json", "--exit-zero"]
    )
    met = json.loads(doc.stdout)["register_met"]
    assert [item["entry"] for item in met["no_longer_met"]] == ["F-01"]
    assert met["no_longer_met"][0]["simulations"] == 20 and met["no_longer_met"][0]["p_none"] < 0.01


def test_too_few_simulations_of_the_mutant_are_not_enough_to_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rows, "resolve_policy", without_reruns)
    out = runner.invoke(
        app,
        ["sweep", str(config(tmp_path, 5)), "--out", str(tmp_path / "out"), "--workers", "1", "--json", "--exit-zero"],
    )
    met = json.loads(out.stdout)["register_met"]
    assert not any(item["entry"] == "F-01" for item in met["no_longer_met"])
    assert any(item["entry"] == "F-01" for item in met["not_enough_simulations"])


def test_head_meets_again_what_the_record_met_there(tmp_path: Path) -> None:
    out = runner.invoke(
        app,
        [
            "sweep",
            str(config(tmp_path, 100)),
            "--out",
            str(tmp_path / "out"),
            "--workers",
            "2",
            "--json",
            "--exit-zero",
        ],
    )
    met = json.loads(out.stdout)["register_met"]
    assert met["cells"] == 1 and met["simulations"] == 100
    assert not met["no_longer_met"] and not met["not_enough_simulations"]
    assert met["line"].startswith("Every entry the register records as met on these grids was met again")
    assert {"entry": "F-01", "grid": "adr-review grid main"} in met["met_again"]
