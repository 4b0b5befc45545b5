"""``leaselab explore --workers N``: one swarm search over N processes, deterministic given --simulations,
the same as the serial search with one worker, and refused for explorers it does not apply to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from leaselab.cli import app
from sim.explore.parallel import share, worker_seed

pytestmark = pytest.mark.slow

runner = CliRunner()
SEARCH = ["explore", "default", "--policy", "adr-104", "--faults", "audit,provider", "--seed", "11"]


def run(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = runner.invoke(app, [*SEARCH, "--simulations", "60", "--out", str(tmp_path / "cx"), "--json", *args])
    assert result.exit_code == 1, result.output  # adr-104 violates its invariants within 60 simulations
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def findings(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(v["invariant"], v["simulations_until_found"], tuple(v["minimal_script"])) for v in document["violations"]]


def test_two_workers_give_the_same_report_twice_given_the_simulations(tmp_path: Path) -> None:
    first, second = run(tmp_path, "--workers", "2"), run(tmp_path, "--workers", "2")
    assert first["workers"] == 2 and first["simulations"] == 60
    assert findings(first) == findings(second) and findings(first)


def test_one_worker_is_the_serial_search(tmp_path: Path) -> None:
    assert findings(run(tmp_path, "--workers", "1")) == findings(run(tmp_path))


def test_worker_streams_are_distinct_and_the_simulations_are_dealt_round_robin() -> None:
    assert worker_seed(11, 0) == 11
    assert len({worker_seed(11, w) for w in range(8)}) == 8
    assert [share(61, 3, w) for w in range(3)] == [21, 20, 20]
    assert share(None, 3, 1) is None


def test_workers_with_the_hypothesis_explorer_are_one_line_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, [*SEARCH, "--explorer", "hypothesis", "--workers", "2", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "--workers" in result.stderr
