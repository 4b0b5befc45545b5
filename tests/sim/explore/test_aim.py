"""Aimed branches (``sim.explore.aim``): a timed foothold's suffix seed chosen so the stamped write returns
in the window of F-16's coincidence.

The aim is read off F-16's own counterexample (its write returned inside the window, so the aim must
hold that moment) and off near misses made from it by changing one record: a run with no stored
request, a reaper whose clock reads the lease as current, a tool too quick to reach the tick. An aimed
branch from the counterexample's stamp must return its write inside the window, meet F-16 and replay."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checks import history as H
from checks.history import Op, OpType
from checks.index import epoch_in
from model.policy import resolve_policy
from register.precursors import lagging_clock_fence, reaper_ticks
from scenarios.intensity import Tempo
from scenarios.loader import load_scenario
from sim.explore.aim import AIMED_BRANCHES, Aim, aim_at, first_stale_tick, seed_for
from sim.explore.counterexample import Counterexample, read
from sim.explore.footholds import Drawn, Footholds, branch, replay

F16 = Path("register/entries/F-16-lagging-clock-dead-letter.toml")


@cache
def counterexample() -> Counterexample:
    return read(F16)


@cache
def history() -> tuple[Op, ...]:
    return tuple(counterexample().run().history)


def spans() -> dict[str, tuple[float, float]]:
    """The tools' latency spans at the counterexample's tempo."""
    return {tool.name: tool.latency_s for tool in counterexample().effective_scenario().tools}


def written() -> dict[str, tuple[float, float]]:
    """The tools' latency spans as the scenario writes them (what the explorer gives its footholds)."""
    return {tool.name: tool.latency_s for tool in load_scenario(counterexample().scenario).tools}


def stamp() -> Op:
    return history()[lagging_clock_fence(history())[-1]]


def write_return(records: tuple[Op, ...] | list[Op], after: int, process: str) -> Op:
    return next(op for op in records[after:] if op.process == process and op.op == H.TOOL and op.type is OpType.OK)


def test_the_counterexample_is_aimed_at_the_window_its_write_returned_in() -> None:
    aim = aim_at(history(), 0, spans())
    assert aim is not None
    assert aim.stamp == stamp().index
    invoke = history()[aim.cut - 1]
    assert (invoke.op, invoke.type, invoke.process) == (H.TOOL, OpType.INVOKE, stamp().process)
    returned = write_return(history(), aim.cut, stamp().process).time_s
    (start, end), *rest = aim.windows
    assert not rest and start < returned < end
    assert end - start == pytest.approx(stamp().time_s - history()[stamp().index - 1].time_s)  # one statement


def test_no_aim_before_the_record_it_starts_from_or_without_the_tool_span() -> None:
    assert aim_at(history(), stamp().index + 1, spans()) is None
    assert aim_at(history(), 0, {}) is None
    quick = {name: (0.01, 0.02) for name in spans()}  # the write returns long before the tick
    assert aim_at(history(), 0, quick) is None


def test_a_run_with_no_stored_request_is_not_aimed_at() -> None:
    """An interactive run has no stored request: the reaper is right to dead-letter it not_retryable."""
    records = list(history())
    row = {**stamp().value["row"], "has_request": False}
    records[stamp().index] = stamp()._replace(value={**stamp().value, "row": row})
    assert aim_at(records, 0, spans()) is None


def reaper_lag(records: list[Op], offset_s: float) -> list[Op]:
    """``records`` with an early record replaced by a clock fault that sets the reaper's offset."""
    fault = {"family": "clock_skew", "kind": "lag", "target": "reaper#1", "offset_s": offset_s}
    first = next(op for op in records if op.op == H.PLAN)
    records[first.index] = first._replace(op=H.FAULT, process=H.NEMESIS, type=OpType.INFO, value=fault)
    return records


def test_a_reaper_whose_clock_reads_the_lease_as_current_moves_the_window_to_a_later_tick() -> None:
    lease = int(stamp().value["row"]["lease_expires"])
    epoch = epoch_in(history())
    first, second = reaper_ticks(history(), stamp().time_s)[:2]
    between = lease - epoch - (first + second) / 2  # stale at the second tick, not the first
    lagging = reaper_lag(list(history()), between)
    assert first_stale_tick(history(), stamp(), stamp().index + 2) == first
    assert first_stale_tick(lagging, stamp(), stamp().index + 2) == second
    assert aim_at(lagging, 0, spans()) is None  # the write cannot last until the second tick
    hours = reaper_lag(list(history()), -10_000.0)  # lagging past the history's end (before its quiet phase)
    assert first_stale_tick(hours, stamp(), stamp().index + 2) is None


def test_a_screened_seed_returns_the_write_inside_the_window() -> None:
    aim = aim_at(history(), 0, spans())
    assert aim is not None
    (low, high), *_ = aim.bands()
    for start in range(5):
        seed = seed_for(aim, random.Random(start))
        assert low < random.Random(seed).random() < high


@given(
    span=st.tuples(st.floats(0.0, 10.0), st.floats(0.5, 100.0)).map(lambda t: (t[0], t[0] + t[1])),
    where=st.floats(0.0, 1.0),
    width=st.floats(1e-3, 0.5),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_seed_is_screened_into_a_band_or_is_the_plain_start(
    span: tuple[float, float], where: float, width: float, seed: int
) -> None:
    lo, hi = span
    start_s = lo + where * (hi - lo)
    aim = Aim(0, 1, 2, 0.0, span, ((start_s, start_s + width),))
    chosen = seed_for(aim, random.Random(seed))
    u = random.Random(chosen).random()
    returned = lo + (hi - lo) * u
    plain = random.Random(seed).getrandbits(32)
    assert start_s < returned < start_s + width or chosen == plain
    if where < 0.9 and width / (hi - lo) > 1e-3:
        assert chosen != plain or start_s < returned < start_s + width  # a band this wide is always found


def test_a_window_outside_the_span_leaves_the_branch_plain() -> None:
    aim = Aim(0, 1, 2, 0.0, (1.0, 2.0), ((5.0, 6.0),))
    rng = random.Random(3)
    assert seed_for(aim, rng) == random.Random(3).getrandbits(32)


def test_aimed_branches_return_the_write_in_the_window_meet_f16_and_replay() -> None:
    """The counterexample's profile has every family on, so the request after the write draws a raised
    fault that may end the lag (a clock set ahead, a cancellation): many aimed branches meet F-16, not
    all (7 of 20 below when written; 1 of 100 plain branches from the stamp)."""
    cx = counterexample()
    scenario, policy = cx.effective_scenario(), resolve_policy(cx.policy, dict(cx.flags))
    met = 0
    for start in range(20):
        holds = Footholds(("F-16",), spans=written())
        assert holds.observe(cx.run(), Drawn(cx.seed, cx.profile, cx.tempo or Tempo()), []) == 1
        foothold = holds.pool["F-16"][0]
        assert foothold.aim is not None and foothold.aim.stamp == foothold.marks[-1]
        rng = random.Random(start)
        assert holds.pick(rng) is foothold
        branched, drawn = branch(foothold, scenario, policy, rng)
        assert drawn.aimed and drawn.cuts == ((foothold.aim.cut, drawn.cuts[0][1]),)
        returned = write_return(branched.history, foothold.aim.cut, stamp().process).time_s
        start_s, end_s = foothold.aim.windows[0]
        assert start_s < returned < end_s
        met += "dead_letter_reason_matches_cause" in branched.violations
        gaps = list(foothold.gaps)
        holds.observe(branched, drawn, [])
        assert foothold.gaps == gaps  # an aimed branch is no measure of how near plain ones come
        again = replay(scenario, policy, cx.seed, foothold.script, drawn.cuts, foothold.profile)
        assert again.digest == branched.digest
    assert met >= 4


def test_a_foothold_is_aimed_a_few_times_then_branched_plainly() -> None:
    cx = counterexample()
    holds = Footholds(("F-16",), spans=written())
    holds.observe(cx.run(), Drawn(cx.seed, cx.profile, cx.tempo or Tempo()), [])
    foothold = holds.pool["F-16"][0]
    assert foothold.aim is not None
    rng = random.Random(1)
    scenario, policy = cx.effective_scenario(), resolve_policy(cx.policy, dict(cx.flags))
    kinds = [branch(foothold, scenario, policy, rng)[1] for _ in range(AIMED_BRANCHES + 1)]
    assert [d.aimed for d in kinds] == [True] * AIMED_BRANCHES + [False]
    assert kinds[-1].cuts[-1][0] == foothold.cut < foothold.aim.cut
    assert not foothold.aim.open


def test_a_branch_that_stamps_again_within_reach_of_a_tick_is_an_aimed_foothold() -> None:
    """A branch of a timed foothold reaches no deeper level; a later stamp it makes that can meet the
    coincidence is a foothold of its own, cut at that stamp, with its aim."""
    cx = counterexample()
    result = cx.run()
    holds = Footholds(("F-16",), spans=written())
    parent = holds.pool["F-16"]
    holds.observe(result, Drawn(cx.seed, cx.profile, cx.tempo or Tempo()), [])
    first = parent[0]
    first.aim = None  # as if its own write could not reach a tick
    early = ((10, 7),)  # a branch cut well before the stamp (its history: the counterexample's)
    added = holds.observe(result, Drawn(cx.seed, cx.profile, cx.tempo or Tempo(), early, first), [])
    assert added == 1 and len(parent) == 2
    spawned = parent[1]
    assert spawned.aim is not None and spawned.cuts == early
    assert (spawned.cut, spawned.marks) == (stamp().index + 1, (spawned.aim.lag, stamp().index))
    late = ((stamp().index + 1, 7),)  # cut after the stamp: no later stamp in reach
    assert holds.observe(result, Drawn(cx.seed, cx.profile, cx.tempo or Tempo(), late, first), []) == 0
