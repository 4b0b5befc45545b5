"""Progress of a long command, shown to a person: counts, a rate and an ETA, on stderr.

Every command that can run longer than a few seconds reports through one :class:`Meter`:
``meter(phase, done, total, unit=...)``. On a terminal it draws a rich progress bar per phase
(rate, elapsed, ETA); otherwise (a log, CI, a pipe) it prints a plain line per phase at most
every ``every_s`` seconds (the first after ``every_s``: a short phase prints nothing), and the
last one of a phase that printed::

    verify level 2/2: 1,234/5,678 schedules, 22%, 41/s, ETA 1 min 48 s

The meter throttles itself, so a caller may report from its hot loop: a call that shows
nothing costs a clock read and a comparison. Stdout stays for the command's result (``--json``
documents are never interleaved with progress). Knows rich and the clock; nothing of what is
being counted.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

PLAIN_EVERY_S = 5.0
"""Seconds between two plain lines of one phase (``LEASELAB_PROGRESS_EVERY_S`` overrides it: 60 for a
quieter CI log, 0 for a line per step)."""
EVERY_S_VARIABLE = "LEASELAB_PROGRESS_EVERY_S"
FANCY_EVERY_S = 0.1
"""Seconds between two redraws of a bar (rich redraws on its own clock too)."""


def duration_text(seconds: float | None) -> str:
    """A duration for people: '40 s', '3 min 20 s', '2 h 05 min'; '?' while unknown."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "?"
    whole = int(seconds + 0.5)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def rate_text(per_s: float) -> str:
    return f"{per_s:,.0f}/s" if per_s >= 10 else f"{per_s:.1f}/s"


@dataclass
class _Phase:
    """One phase's clock: when it started, and the count and time of its last shown state."""

    started: float
    first_done: int
    shown_at: float
    shown_done: int = -1


@dataclass
class Reading:
    """What the meter knows about a phase at one moment: the basis of a line or a bar."""

    phase: str
    done: int
    total: int | None
    unit: str
    per_s: float
    eta_s: float | None
    detail: str = ""

    def line(self, command: str) -> str:
        """The plain line: ``command phase: done/total unit, pct%, rate, ETA``."""
        label = f"{command} {self.phase}".strip() if self.phase else command
        parts = [f"{self.done:,}/{self.total:,} {self.unit}".rstrip() if self.total else f"{self.done:,} {self.unit}"]
        if self.total:
            parts.append(f"{100 * self.done / self.total:.0f}%")
        parts.append(rate_text(self.per_s))
        if self.total or self.eta_s is not None:
            parts.append(f"ETA {duration_text(self.eta_s)}")
        if self.detail:
            parts.append(self.detail)
        return f"{label}: " + ", ".join(parts)


@dataclass
class Meter:
    """Reports progress; see the module docstring. Build it with :func:`meter`."""

    command: str
    write: Callable[[Reading], None]
    every_s: float
    first_after_s: float = 0.0
    """A phase's first line waits this long: a phase that ends sooner shows nothing."""
    clock: Callable[[], float] = time.perf_counter
    _phases: dict[str, _Phase] = field(default_factory=dict)

    def __call__(
        self,
        phase: str,
        done: int,
        total: int | None = None,
        *,
        unit: str = "",
        detail: str = "",
        eta_s: float | None = None,
    ) -> None:
        """``done`` of ``total`` (None while unknown) in ``phase``. The ETA comes from the rate
        since the phase's first report, unless the caller knows better (``eta_s``, e.g. the
        rest of a time budget)."""
        now = self.clock()
        state = self._phases.get(phase)
        if state is None:
            state = self._phases[phase] = _Phase(now, done, now - self.every_s + self.first_after_s)
        finished = total is not None and done >= total
        due = now - state.shown_at >= self.every_s
        if finished:
            # The last state once, when anything of the phase was shown (or it took a while).
            if state.shown_done == done or not (due or state.shown_done >= 0):
                return
        elif not due:
            return
        state.shown_at, state.shown_done = now, done
        elapsed = now - state.started
        counted = done - state.first_done
        per_s = counted / elapsed if elapsed > 0 else 0.0
        if eta_s is None and total is not None:
            eta_s = (total - done) / per_s if per_s > 0 else (0.0 if finished else None)
        self.write(Reading(phase, done, total, unit, per_s, eta_s, detail))


def _plain(command: str, stream: IO[str]) -> Callable[[Reading], None]:
    def write(reading: Reading) -> None:
        print(reading.line(command), file=stream, flush=True)

    return write


@contextmanager
def _fancy(command: str, stream: IO[str]) -> Iterator[Callable[[Reading], None]]:
    """A rich bar per phase; rich is imported here, not at start-up (it costs ~0.1 s of CPU)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

    columns = (
        TextColumn("{task.description}"),
        BarColumn(bar_width=20),
        MofNCompleteColumn(),
        TextColumn("{task.fields[unit]} · {task.fields[rate]} · ETA {task.fields[eta]}"),
        TextColumn("{task.fields[detail]}"),
    )
    bars: dict[str, TaskID] = {}
    with Progress(*columns, console=Console(file=stream), transient=False) as progress:

        def write(reading: Reading) -> None:
            fields: dict[str, Any] = {
                "unit": reading.unit,
                "rate": rate_text(reading.per_s),
                "eta": duration_text(reading.eta_s),
                "detail": reading.detail,
            }
            if reading.phase not in bars:
                label = f"{command} {reading.phase}".strip()
                bars[reading.phase] = progress.add_task(label, total=reading.total, completed=reading.done, **fields)
            progress.update(bars[reading.phase], completed=reading.done, total=reading.total, **fields)

        yield write


def _plain_period() -> float:
    text = os.environ.get(EVERY_S_VARIABLE, "")
    try:
        value = float(text) if text else PLAIN_EVERY_S
    except ValueError:
        return PLAIN_EVERY_S
    return value if math.isfinite(value) and value >= 0 else PLAIN_EVERY_S


@contextmanager
def meter(
    command: str, *, stream: IO[str] | None = None, fancy: bool | None = None, every_s: float | None = None
) -> Iterator[Meter]:
    """A meter for ``command`` on ``stream`` (stderr): rich bars when it is a terminal (or
    ``fancy``), plain periodic lines otherwise."""
    out = stream if stream is not None else sys.stderr
    if fancy if fancy is not None else out.isatty():
        with _fancy(command, out) as write:
            yield Meter(command, write, FANCY_EVERY_S if every_s is None else every_s)
        return
    period = _plain_period() if every_s is None else every_s
    yield Meter(command, _plain(command, out), period, first_after_s=period)
