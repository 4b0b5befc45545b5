"""Messages a first hour meets: a scenario given as a sweep configuration, a grid with no scenario, and
the wait for an unreachable Dask scheduler (a status line on a terminal, erased after, so bad input
still leaves one line)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

import sim.sweep.executors
from leaselab.cli import app
from leaselab.cmd_sweep import connecting_line, enter_executor
from model.errors import LeaselabError

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_a_scenario_given_as_a_sweep_configuration_says_so(tmp_path: Path) -> None:
    scenario = ROOT / "scenarios" / "library" / "default.toml"
    result = runner.invoke(app, ["sweep", str(scenario), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("leaselab: ") and "default.toml: is a scenario file, not a sweep configuration" in line
    assert "`leaselab run FILE`" in line


def test_a_grid_with_no_scenario_says_what_it_needs(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        'name = "x"\nseeds = 2\n[[policy]]\nlabel = "h"\npreset = "head"\n[[grid]]\nname = "main"\nscenarios = []\n'
    )
    result = runner.invoke(app, ["sweep", str(config), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()  # the path may be cut to keep the line under 200 characters
    assert 'c.toml: grid.0.scenarios: needs at least one scenario, or "library"' in line


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_sees_where_it_connects_while_it_waits_and_the_line_is_erased(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stream = _Terminal()

    @contextmanager
    def unreachable(scheduler: str | None, workers: int | None) -> Iterator[None]:
        assert stream.getvalue() == connecting_line("tcp://nowhere:1")  # shown while it waits
        raise LeaselabError("cannot reach", field="--scheduler")
        yield

    monkeypatch.setattr(sim.sweep.executors, "executor_for", unreachable)
    with pytest.raises(LeaselabError), ExitStack() as stack:
        enter_executor(stack, "tcp://nowhere:1", None, stream)
    assert stream.getvalue() == connecting_line("tcp://nowhere:1") + "\r\033[K"
    assert "(gives up after 15s)" in connecting_line("x")


def test_a_log_gets_no_status_line(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()

    @contextmanager
    def local(scheduler: str | None, workers: int | None) -> Iterator[str]:
        yield "pool"

    monkeypatch.setattr(sim.sweep.executors, "executor_for", local)
    with ExitStack() as stack:
        assert enter_executor(stack, "tcp://somewhere:1", None, stream) == "pool"
    assert stream.getvalue() == ""
