"""The progress meter every long command reports through: plain periodic lines off a terminal (with
counts, percentage, rate and ETA), a rich bar on one, and nothing for a phase that ends quickly."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reports.progress import EVERY_S_VARIABLE, Meter, Reading, duration_text, meter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def plain(every_s: float = 5.0) -> tuple[Meter, list[Reading], Clock]:
    shown: list[Reading] = []
    clock = Clock()
    return Meter("verify", shown.append, every_s, first_after_s=every_s, clock=clock), shown, clock


def test_a_phase_that_ends_before_the_first_period_shows_nothing() -> None:
    show, shown, clock = plain()
    for done in range(11):
        clock.now += 0.3
        show("level 1/1", done, 10, unit="schedules")
    assert shown == []


def test_a_long_phase_shows_a_line_per_period_and_its_last_state_once() -> None:
    show, shown, clock = plain()
    for done in range(0, 101):
        show("level 2/2", done, 100, unit="schedules")
        clock.now += 0.25  # 4 per second: 25 s in all
    show("level 2/2", 100, 100, unit="schedules")  # a repeated final report is not shown again
    assert [r.done for r in shown] == [20, 40, 60, 80, 100]
    assert shown[0].per_s == pytest.approx(4.0)
    assert shown[0].eta_s == pytest.approx(20.0)
    assert shown[-1].eta_s == 0.0


def test_the_plain_line_has_counts_percentage_rate_and_eta() -> None:
    reading = Reading("level 2/2", 1234, 5678, "schedules", 41.0, 108.4)
    assert reading.line("verify") == "verify level 2/2: 1,234/5,678 schedules, 22%, 41/s, ETA 1 min 48 s"
    unknown_total = Reading("search", 700, None, "simulations", 3.5, 12.0, "2 violations")
    assert unknown_total.line("explore") == "explore search: 700 simulations, 3.5/s, ETA 12 s, 2 violations"
    assert Reading("", 3, 9, "mutants", 0.0, None).line("mutants") == "mutants: 3/9 mutants, 33%, 0.0/s, ETA ?"


def test_a_given_eta_wins_over_the_rate() -> None:
    show, shown, clock = plain(every_s=1.0)
    show("search", 0, None, unit="simulations", eta_s=30.0)
    clock.now += 1.0
    show("search", 10, None, unit="simulations", eta_s=29.0)
    assert shown[-1].eta_s == 29.0 and shown[-1].total is None


def test_phases_keep_their_own_clocks_and_rates() -> None:
    show, shown, clock = plain(every_s=1.0)
    show("checking", 0, 4, unit="shards")
    clock.now += 2.0
    show("checking", 4, 4, unit="shards")
    show("", 4000, 10_000, unit="simulations")  # resumed: 4,000 were already on disk
    clock.now += 2.0
    show("", 4100, 10_000, unit="simulations")
    assert [(r.phase, r.done) for r in shown] == [("checking", 4), ("", 4100)]
    assert shown[-1].per_s == pytest.approx(50.0)  # this run's own rate, not the shards found on disk


@given(st.floats(min_value=0, max_value=10 * 86400, allow_nan=False))
def test_durations_read_as_seconds_minutes_or_hours(seconds: float) -> None:
    text = duration_text(seconds)
    whole = int(seconds + 0.5)
    if whole < 60:
        assert text == f"{whole} s"
    elif whole < 3600:
        assert text == f"{whole // 60} min {whole % 60:02d} s"
    else:
        assert text == f"{whole // 3600} h {whole % 3600 // 60:02d} min"


@pytest.mark.parametrize("bad", [None, float("nan"), float("inf"), -1.0])
def test_an_unknown_duration_is_a_question_mark(bad: float | None) -> None:
    assert duration_text(bad) == "?"


def test_off_a_terminal_the_meter_prints_plain_lines_to_its_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EVERY_S_VARIABLE, "0")
    stream = io.StringIO()
    with meter("sweep tiny", stream=stream) as show:
        show("", 5, 10, unit="simulations", detail="1/2 shards")
        show("", 10, 10, unit="simulations", detail="2/2 shards")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("sweep tiny: 5/10 simulations, 50%, ") and lines[0].endswith(", 1/2 shards")
    assert lines[1].startswith("sweep tiny: 10/10 simulations, 100%, ")


@pytest.mark.parametrize("text", ["", "abc", "-3", "nan"])
def test_a_bad_period_variable_keeps_the_default(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv(EVERY_S_VARIABLE, text)
    with meter("x", stream=io.StringIO()) as show:
        assert show.every_s == 5.0


def test_on_a_terminal_the_meter_draws_a_rich_bar() -> None:
    stream = io.StringIO()
    with meter("report", stream=stream, fancy=True) as show:
        show("simulating", 7, 10, unit="simulations")
        show("simulating", 10, 10, unit="simulations")
    drawn = stream.getvalue()
    assert "report simulating" in drawn and "10/10" in drawn and "simulations" in drawn
