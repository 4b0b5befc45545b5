"""An interrupt whose KeyboardInterrupt Python dropped still stops ``leaselab conform``.

Python runs a signal's handler between any two bytecodes, also inside a finalizer (``__del__``, a
weakref callback), where a raised exception is printed and dropped: the run went on, servers and
all. The handler also sets :data:`sim.conform.php_process.STOP`; every PHP request then raises again,
and a run that returns with it set exits 130 all the same.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer

from leaselab import cmd_conform
from sim.conform import runner
from sim.conform.php_process import STOP, PhpProcess


@pytest.fixture(autouse=True)
def _clear_stop() -> Iterator[None]:
    yield
    STOP.clear()


def test_a_request_after_a_dropped_interrupt_raises_it_again() -> None:
    php = PhpProcess.__new__(PhpProcess)  # no PHP started: the check comes before any I/O
    STOP.set()
    with pytest.raises(KeyboardInterrupt):
        php.ask({"op": "ping"})


def test_a_run_that_returns_after_a_dropped_interrupt_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted_but_returns(opts: runner.Options, progress: object = None) -> list[runner.CheckResult]:
        with pytest.raises(KeyboardInterrupt):  # the handler ran; its exception is lost, as in a finalizer
            signal.raise_signal(signal.SIGTERM)
        return []

    monkeypatch.setattr(runner, "run", interrupted_but_returns)
    with pytest.raises(typer.Exit) as stopped:
        cmd_conform.run_interruptible(runner.Options(Path(".")), progress=None)
    assert stopped.value.exit_code == 130
    assert signal.getsignal(signal.SIGTERM) is not cmd_conform._interrupt


def test_a_run_without_an_interrupt_returns_its_results(monkeypatch: pytest.MonkeyPatch) -> None:
    done = [runner.CheckResult("T4 renewLease", "sqlite", cases=3)]
    monkeypatch.setattr(runner, "run", lambda opts, progress=None: done)
    assert cmd_conform.run_interruptible(runner.Options(Path(".")), progress=None) is done
    assert not STOP.is_set()
