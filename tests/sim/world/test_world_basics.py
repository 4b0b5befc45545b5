"""The world without chaos: runs complete, leases belong to the right kind of process, the transports,
redelivery after a worker crash, ending early, and the shape of the history."""

from __future__ import annotations

from typing import Any

import pytest

from checks import INVARIANTS, Validity
from checks import history as H
from checks.history import Op, OpType
from model.statements import CLAIM_QUEUED, ENQUEUE_RUN, START_RUN
from scenarios.loader import load_scenario
from scenarios.schema import Scenario, ScriptedFaultModel
from sim.world.simulate import simulate


def happy(**world: Any) -> Scenario:
    scenario = load_scenario("happy_path")
    return scenario.model_copy(update={"world": scenario.world.model_copy(update=world)}) if world else scenario


def interactive_happy() -> Scenario:
    scenario = happy()
    return scenario.model_copy(update={"runs": [scenario.runs[0].model_copy(update={"kind": "interactive"})]})


def stored(history: list[Op], transition: str) -> list[Op]:
    return [
        op
        for op in history
        if op.op == H.STORE
        and op.type is OpType.OK
        and op.get("matched")
        and str(op.get("transition")).startswith(transition)
    ]


def segments(history: list[Op], entry: str) -> list[Op]:
    return [op for op in history if op.op == H.SEGMENT and op.type is OpType.INVOKE and op.get("entry") == entry]


def test_the_happy_path_completes_under_head() -> None:
    result = simulate("happy_path", "head", 0)
    assert result.stats["final_status"] == {"completed": 1}


def test_the_happy_path_is_judged_valid_by_every_invariant_under_head() -> None:
    result = simulate("happy_path", "head", 0)
    assert set(result.verdicts) == {inv.name for inv in INVARIANTS}
    assert all(v.valid is Validity.VALID for v in result.verdicts.values())
    assert result.ok


def test_the_happy_path_injects_no_fault() -> None:
    result = simulate("happy_path", "head", 0)
    assert not any(result.faults_fired.values())
    assert result.fault_script == ()


def test_the_happy_path_write_lands_once() -> None:
    result = simulate("happy_path", "head", 0)
    landings = [op for op in result.history if op.op == H.LANDING]
    assert [op.get("tool") for op in landings] == ["update_page_metadata"]


def test_an_interactive_run_holds_an_interactive_lease() -> None:
    history = simulate(interactive_happy(), "head", 0).history
    start = stored(history, f"{START_RUN} ")
    assert len(start) == 1
    row = start[0].value["row"]
    assert row["status"] == "running"
    assert row["claimed_by"].startswith("interactive:")
    assert start[0].process.startswith("client-")


def test_an_interactive_run_is_never_dispatched_to_a_worker() -> None:
    history = simulate(interactive_happy(), "head", 0).history
    assert not [op for op in history if op.op == H.DELIVER]
    assert not segments(history, "run_queued")


def test_a_queued_run_is_claimed_by_a_worker_identity() -> None:
    history = simulate("happy_path", "head", 0).history
    claims = stored(history, f"{CLAIM_QUEUED} ")
    assert len(claims) == 1
    assert claims[0].value["row"]["claimed_by"].startswith("worker:")
    assert claims[0].process.startswith("worker")


def test_a_queued_run_is_enqueued_by_a_client_without_a_lease() -> None:
    history = simulate("happy_path", "head", 0).history
    enqueued = stored(history, f"{ENQUEUE_RUN} ")
    assert len(enqueued) == 1
    assert enqueued[0].value["row"]["status"] == "queued"
    assert enqueued[0].value["row"]["claimed_by"] == ""


def test_the_async_transport_delivers_the_wake_up_to_a_worker_process() -> None:
    history = simulate(happy(transport="async"), "head", 0).history
    deliveries = [op for op in history if op.op == H.DELIVER]
    assert len(deliveries) == 1
    assert deliveries[0].process.startswith("worker")


def test_the_sync_transport_runs_the_queued_segment_nested_in_the_dispatching_process() -> None:
    history = simulate(happy(transport="sync"), "head", 0).history
    enqueue = segments(history, "enqueue")[0]
    nested = segments(history, "run_queued")[0]
    enqueue_end = next(
        op for op in history if op.op == H.SEGMENT and op.process == enqueue.process and op.index > nested.index
    )
    nested_end = next(op for op in history if op.op == H.SEGMENT and op.type is OpType.OK and op.index > nested.index)
    assert nested.process == enqueue.process
    assert enqueue.index < nested.index < nested_end.index <= enqueue_end.index
    assert nested.get("identity").startswith("worker:")


def test_the_sync_transport_records_an_inline_delivery_and_no_worker_runs_it() -> None:
    result = simulate(happy(transport="sync"), "head", 0)
    deliveries = [op for op in result.history if op.op == H.DELIVER]
    assert [op.get("inline") for op in deliveries] == [True]
    assert not [op for op in result.history if op.process.startswith("worker")]
    assert result.stats["final_status"] == {"completed": 1}


def crash_on_first_claim(redeliver_s: float) -> Scenario:
    scenario = happy(redeliver_s=redeliver_s, reaper_interval_s=86_400.0)
    fault = ScriptedFaultModel(family="crash", kind="before", process="worker", transition=CLAIM_QUEUED)
    return scenario.model_copy(update={"script": [fault]})


def test_a_worker_that_crashes_holding_a_wake_up_gets_it_redelivered() -> None:
    history = simulate(crash_on_first_claim(10.0), "head", 0).history
    crash = next(op for op in history if op.op == H.CRASH)
    deliveries = [op for op in history if op.op == H.DELIVER and op.run == "run-001"]
    assert len(deliveries) == 2
    first, again = deliveries
    assert first.process == crash.get("process")
    assert again.process != crash.get("process")
    assert again.time_s == pytest.approx(crash.time_s + 10.0)


def test_a_redelivered_wake_up_lets_the_run_complete() -> None:
    result = simulate(crash_on_first_claim(10.0), "head", 0)
    assert result.stats["final_status"] == {"completed": 1}
    assert result.ok


def test_a_crashed_worker_restarts_as_a_new_incarnation_with_a_fresh_identity() -> None:
    history = simulate(crash_on_first_claim(10.0), "head", 0).history
    crash = next(op for op in history if op.op == H.CRASH)
    restart = next(op for op in history if op.op == H.RESTART)
    assert crash.get("process") == "worker1#1"
    assert restart.get("process") == "worker1#2"
    later = [op for op in history if op.process == "worker1#2" and op.op == H.SEGMENT and op.type is OpType.INVOKE]
    assert all(op.get("identity") != crash.get("identity") for op in later)


def test_the_simulation_ends_early_when_every_run_is_terminal() -> None:
    result = simulate("happy_path", "head", 0)
    world = load_scenario("happy_path").world
    assert result.stats["ended_early"] is True
    assert result.stats["simulated_s"] < world.chaos_s + world.quiet_s
    assert result.history[-1].op == H.FINAL


def test_the_simulation_runs_to_the_deadline_while_a_run_is_stranded() -> None:
    # The client dies between the insert and the dispatch: the row stays queued, nothing ends it early.
    fault = ScriptedFaultModel(family="crash", kind="before", on="dispatch", process="client")
    scenario = happy().model_copy(update={"script": [fault]})
    result = simulate(scenario, "head", 0, judge=False)
    assert result.stats["final_status"] == {"queued": 1}
    world = scenario.world
    assert result.stats["ended_early"] is False
    assert result.stats["simulated_s"] == world.chaos_s + world.quiet_s


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_history_indexes_are_zero_to_n_minus_one_in_order(seed: int) -> None:
    history = simulate("default", "head", seed, judge=False).history
    assert [op.index for op in history] == list(range(len(history)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_history_times_never_decrease(seed: int) -> None:
    history = simulate("default", "head", seed, judge=False).history
    times = [op.time_s for op in history]
    assert times == sorted(times)


def test_the_history_opens_with_the_chaos_phase_and_ends_with_one_final_record_per_run() -> None:
    result = simulate("default", "head", 0, judge=False)
    first = result.history[0]
    assert (first.op, first.get("phase")) == (H.PHASE, "chaos")
    finals = [op for op in result.history if op.op == H.FINAL]
    assert len(finals) == result.stats["runs"]
    assert result.history[-len(finals) :] == finals


@pytest.mark.parametrize(
    ("scenario", "seed", "judge"),
    [("default", 0, False), ("default", 1, True), ("worker_crash_mid_write", 0, True), ("sync", 0, False)],
)
def test_the_stats_count_the_history_and_its_landings(scenario: str, seed: int, judge: bool) -> None:
    """The landings stat is the tool server's count, kept as it records them: it must be the history's."""
    result = simulate(happy(transport="sync") if scenario == "sync" else scenario, "head", seed, judge=judge)
    assert result.stats["landings"] > 0
    assert result.stats["history_records"] == len(result.history)
    assert result.stats["landings"] == sum(1 for op in result.history if op.op == H.LANDING)
    assert sum(result.stats["final_status"].values()) == result.stats["runs"]
