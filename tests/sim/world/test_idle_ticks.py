"""A reaper tick that finds nothing is one ``idle`` record, and folding it loses nothing.

The recorder holds a tick's segment invoke and its empty SelectStale read until the tick closes; any
other record appends them first, at their own times. So a folded history written out again
(:func:`checks.history.unfolded`) is exactly the history recorded without folding, and every judge,
every metric and every recogniser says the same of both, witnesses mapped record for record.
"""

from __future__ import annotations

import re
from dataclasses import asdict

import pytest
import simpy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checks import history as H
from checks.history import Op, OpType, unfolded
from checks.metrics import run_metrics
from model.policy import resolve_policy
from scenarios.loader import library_names, load_scenario
from sim.sweep.rows import explain_violations
from sim.world.recorder import INFO, INVOKE, OK, Recorder
from sim.world.simulate import SimulationResult, _judged, build_world, gc_paused, run_world

ZERO = dict(H.IDLE_OUTCOME)
EMPTY_READ = {"what": "SelectStale", "site": "", "result": [], "fences": []}


def _recorder_at(now: float) -> tuple[Recorder, simpy.Environment]:
    env = simpy.Environment(initial_time=now)
    return Recorder(env), env


def _advance(env: simpy.Environment, to: float) -> None:
    env.run(until=to)


def test_an_idle_tick_is_one_record_at_its_answer_with_its_invoke_time() -> None:
    rec, env = _recorder_at(10.0)
    rec.open_tick("reaper#1", "reaper:h1:1")
    _advance(env, 10.4)
    assert rec.hold_empty_read("reaper#1", dict(EMPTY_READ))
    assert rec.close_tick("reaper#1", {"outcome": dict(ZERO)})
    idle = {"identity": "reaper:h1:1", "invoked_s": 10.0}
    assert rec.history == [Op(0, 10.4, "reaper#1", H.IDLE, "", OpType.OK, idle)]
    assert unfolded(rec.history) == [
        Op(0, 10.0, "reaper#1", H.SEGMENT, "", INVOKE, {"entry": "reap", "identity": "reaper:h1:1"}),
        Op(1, 10.4, "reaper#1", H.READ, "", OK, EMPTY_READ),
        Op(2, 10.4, "reaper#1", H.SEGMENT, "", OK, {"outcome": ZERO}),
    ]


def test_a_record_of_another_process_during_the_tick_writes_the_tick_out_in_full() -> None:
    rec, env = _recorder_at(5.0)
    rec.open_tick("reaper#1", "reaper:h1:1")
    _advance(env, 5.2)
    rec.add("worker1#1", H.DELIVER, "run-001", OK, {"duplicate": False})
    _advance(env, 5.4)
    assert rec.hold_empty_read("reaper#1", dict(EMPTY_READ)) is False  # the invoke is no longer held
    rec.add("reaper#1", H.READ, "", OK, dict(EMPTY_READ))
    assert rec.close_tick("reaper#1", {"outcome": dict(ZERO)}) is False
    rec.add("reaper#1", H.SEGMENT, "", OK, {"outcome": dict(ZERO)})
    assert [(op.index, op.time_s, op.process, op.op, op.type) for op in rec.history] == [
        (0, 5.0, "reaper#1", H.SEGMENT, INVOKE),
        (1, 5.2, "worker1#1", H.DELIVER, OK),
        (2, 5.4, "reaper#1", H.READ, OK),
        (3, 5.4, "reaper#1", H.SEGMENT, OK),
    ]


def test_a_tick_that_found_rows_or_told_counts_or_crashed_is_not_folded() -> None:
    rec, env = _recorder_at(1.0)
    rec.open_tick("reaper#1", "r:1")
    _advance(env, 2.0)
    assert rec.hold_empty_read("reaper#1", dict(EMPTY_READ))
    told = {"outcome": {**ZERO, "skipped": 1}}  # a (mutated) reaper that counts what it never found
    assert rec.close_tick("reaper#1", told) is False
    rec.add("reaper#1", H.SEGMENT, "", OK, told)
    _advance(env, 3.0)
    rec.open_tick("reaper#1", "r:1")
    _advance(env, 4.0)
    rec.add("reaper#1", H.SEGMENT, "", INFO, {"crashed": True})
    assert [(op.time_s, op.op, op.type) for op in rec.history] == [
        (1.0, H.SEGMENT, INVOKE),
        (2.0, H.READ, OK),
        (2.0, H.SEGMENT, OK),
        (3.0, H.SEGMENT, INVOKE),
        (4.0, H.SEGMENT, INFO),
    ]
    assert [op.index for op in rec.history] == list(range(5))


def test_without_folding_the_tick_is_recorded_as_it_happens() -> None:
    rec, _ = _recorder_at(1.0)
    rec.folding = False
    rec.open_tick("reaper#1", "r:1")
    assert [op.op for op in rec.history] == [H.SEGMENT]
    assert rec.hold_empty_read("reaper#1", dict(EMPTY_READ)) is False
    assert rec.close_tick("reaper#1", {"outcome": dict(ZERO)}) is False


def _run(name: str, policy: str, seed: int, fold: bool) -> SimulationResult:
    scenario, resolved = load_scenario(name), resolve_policy(policy, None)
    with gc_paused():
        world = build_world(scenario, resolved, seed)
        world.recorder.folding = fold
        run_world(world)
        return _judged(world, scenario.name, resolved, seed, None, True)


def _folded_index(full: list[Op], folded: list[Op]) -> list[int]:
    """For each record of the full history, the index of the folded record that holds it."""
    out: list[int] = []
    for op in folded:
        out.extend([op.index] * (3 if op.op == H.IDLE else 1))
    assert len(out) == len(full)
    return out


_DIGITS = re.compile(r"\d+")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(library_names()),
    policy=st.sampled_from(("adr-104", "adr-111", "adr-112", "head")),
    seed=st.integers(0, 2**32 - 1),
)
@pytest.mark.slow
def test_folding_idle_ticks_changes_no_judgement_metric_or_recognition(name: str, policy: str, seed: int) -> None:
    full, folded = _run(name, policy, seed, False), _run(name, policy, seed, True)
    assert unfolded(folded.history) == full.history
    at = _folded_index(full.history, folded.history)
    assert folded.coverage == full.coverage
    assert folded.faults_fired == full.faults_fired
    for invariant, before in full.verdicts.items():
        after = folded.verdicts[invariant]
        assert (after.valid, after.judged) == (before.valid, before.judged), invariant
        assert after.witness == tuple(at[i] for i in before.witness), invariant
        # explanations cite record numbers, which folding renumbers: the words must agree
        assert _DIGITS.sub("#", after.explanation) == _DIGITS.sub("#", before.explanation), invariant
    assert asdict(run_metrics(folded.history, folded.request_types)) == asdict(
        run_metrics(full.history, full.request_types)
    )
    assert explain_violations(folded.history, folded.verdicts, folded.violations) == explain_violations(
        full.history, full.verdicts, full.violations
    )


def test_a_reaper_that_ticks_every_second_records_far_fewer_records() -> None:
    """The scenario the fold is for: most of its ticks find nothing and are one record each."""
    full, folded = _run("reaper_races_heartbeat", "head", 0, False), _run("reaper_races_heartbeat", "head", 0, True)
    idle = sum(op.op == H.IDLE for op in folded.history)
    assert idle > 1000
    assert len(folded.history) == len(full.history) - 2 * idle
    assert len(folded.history) < len(full.history) / 2
