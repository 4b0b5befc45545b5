"""Run metrics and sweep rows on real simulations: each metric is checked against a scenario that must
produce it, and against an independent recount from other records of the same history."""

from __future__ import annotations

from collections import Counter

import pytest

from checks import INVARIANTS, Validity
from checks import history as H
from checks.metrics import run_metrics
from model.policy import resolve_policy
from model.vocab import RunStatus
from scenarios.families import FAMILIES
from scenarios.intensity import scale_faults
from scenarios.loader import load_scenario
from scenarios.overrides import overridden
from sim.sweep.rows import cell_scenario, run_task_output, sweep_row
from sim.sweep.task import SweepTask
from sim.world.simulate import SimulationResult, simulate


def metrics(scenario: str, policy: str, seed: int) -> tuple[SimulationResult, dict[str, object]]:
    result = simulate(scenario, policy, seed)
    return result, run_metrics(result.history, result.request_types).columns()


def test_a_run_that_outlives_its_lease_is_requeued_and_the_count_matches_the_final_rows() -> None:
    for seed in range(3):
        result, cols = metrics("tool_outlives_lease", "adr-111", seed)
        assert cols["stat.requeues"] > 0
        # independent: requeue_count only ever grows by one per requeue, so the final rows hold the total
        finals = [op for op in result.history if op.op == H.FINAL]
        assert cols["stat.requeues"] == sum(op.value["row"]["requeue_count"] for op in finals)


def test_a_fenced_write_in_flight_is_dead_lettered_not_retryable_with_its_write_in_flight() -> None:
    result, cols = metrics("worker_crash_mid_write", "head", 0)
    assert cols["stat.dead_letters"] == cols["dl.not_retryable"] == 1
    assert cols["stat.dead_letters_no_write"] == 0  # the worker died mid-write: its outcome is unknown
    assert result.stats["final_status"] == {"failed": 1}


def test_a_dead_letter_without_a_write_in_flight_is_counted_as_such() -> None:
    # reaper_races_heartbeat exhausts a run's requeues between provider calls: nothing is being written
    found = 0
    for seed in range(4):
        _, cols = metrics("reaper_races_heartbeat", "head", seed)
        if cols.get("dl.retries_exhausted", 0):
            found += 1
            assert cols["stat.dead_letters_no_write"] == cols["dl.retries_exhausted"]
    assert found


def test_repeated_idempotent_writes_and_wasted_executions_match_a_recount_of_the_records() -> None:
    result, cols = metrics("tool_outlives_lease", "adr-111", 0)
    landings = Counter(
        (op.run, op.value["call"])
        for op in result.history
        if op.op == H.LANDING and op.value["effect"] == "idempotent_write"
    )
    assert cols["stat.duplicate_idempotent_writes"] == sum(n - 1 for n in landings.values()) > 0
    invokes = Counter((op.run, op.value["call"]) for op in result.history if op.op == H.TOOL and op.type == "invoke")
    assert cols["stat.wasted_tool_executions"] == sum(n - 1 for n in invokes.values()) > 0
    assert cols["stat.wasted_tool_executions"] >= cols["stat.duplicate_idempotent_writes"]


def test_settle_latencies_one_per_settled_run_within_the_simulation() -> None:
    result, cols = metrics("default", "head", 1)
    latencies = cols["stat.settle_latencies_s"]
    assert isinstance(latencies, list)
    settled = sum(n for status, n in result.stats["final_status"].items() if RunStatus(status).is_terminal)
    assert len(latencies) == settled > 0
    assert all(0 <= s <= result.stats["simulated_s"] for s in latencies)


@pytest.mark.parametrize("scenario", ["default", "tool_outlives_lease", "duplicate_wakeup", "deploy_between_attempts"])
def test_fault_hits_add_up_per_family_and_name_the_request_the_plan_struck(scenario: str) -> None:
    struck_by_plan: Counter[tuple[str, str]] = Counter()
    hits: Counter[tuple[str, str]] = Counter()
    for seed in range(6):
        result = simulate(scale_faults(load_scenario(scenario), 2.0), "head", seed)
        found = run_metrics(result.history, result.request_types).hits
        per_family = Counter[str]()
        for (family, _), n in found.items():
            per_family[family] += n
        assert per_family == +Counter(result.faults_fired)
        hits.update(found)
        # the plan's own anchors name the request type ("uuid/Type/nth"); families that always take effect
        for fault in result.fault_script:
            if fault.family in ("slow", "clock_skew", "crash", "provider"):
                struck_by_plan[(fault.family, fault.anchor.split("/")[1])] += 1
    assert sum(hits.values()) > 0
    for key, n in struck_by_plan.items():
        assert hits[key] == n, key


def test_a_row_carries_every_contract_column() -> None:
    flags = (("idempotency_keys", True),)
    task = SweepTask("worker_crash_mid_write", "head", 0, 2, 2.0, flags, "g", "lbl", 1.5, "sync")
    output = run_task_output(task)
    assert [row["seed"] for row in output.rows] == [0, 1]
    row = output.rows[0]
    scenario, changed = cell_scenario(task)
    assert changed and scenario.world.transport == "sync"
    assert row["grid"] == "g" and row["policy"] == "lbl" and row["preset"] == "head"
    assert row["flags"] == "idempotency_keys=true"
    assert (row["intensity"], row["latency_ratio"], row["transport"]) == (2.0, 1.5, "sync")
    direct = simulate(scenario, resolve_policy("head", dict(flags)), 0)
    assert row["digest"] == direct.digest
    as_cell = {Validity.VALID: True, Validity.INVALID: False, Validity.UNKNOWN: None}
    for inv in INVARIANTS:  # a nullable boolean: true held, false violated, null unknown
        assert row[f"inv.{inv.name}"] is as_cell[direct.verdicts[inv.name].valid]
    for family in FAMILIES:
        assert isinstance(row[f"fault.{family}"], int)
    for status in RunStatus:
        assert isinstance(row[f"final.{status.value}"], int)
    for column in (
        "stat.runs", "stat.requests", "stat.landings", "stat.simulated_s", "stat.completed", "stat.requeues",
        "stat.dead_letters", "stat.dead_letters_no_write", "stat.settle_latencies_s",
        "stat.duplicate_idempotent_writes", "stat.wasted_tool_executions", "stat.progressing_reaped",
        "stat.dead_letters_no_fatal", "stat.failed_by_slowness", "digest", "seed", "scenario",
    ):  # fmt: skip
        assert column in row, column
    assert any(c.startswith("cov.") for c in row)
    direct = simulate(scenario, "head", 0, flags={"idempotency_keys": True})
    assert row["digest"] == direct.digest
    assert sweep_row(task, scenario, direct) == row
    assert {inv.name: row[f"judged.{inv.name}"] for inv in INVARIANTS} == direct.judged
    assert sum(direct.judged.values()) > 0


def test_the_overrides_move_tool_latency_to_the_lease_ratio_and_set_the_transport() -> None:
    base = load_scenario("tool_outlives_lease")
    assert overridden(base) is base
    changed = overridden(base, 0.5, "sync")
    assert changed.world.transport == "sync"
    for old, new in zip(base.tools, changed.tools, strict=True):
        assert sum(new.latency_s) / 2 == pytest.approx(0.5 * 900)
        assert new.latency_s[0] / new.latency_s[1] == pytest.approx(old.latency_s[0] / old.latency_s[1])


def test_violations_become_counterexamples_that_replay_the_same_history() -> None:
    task = SweepTask("worker_crash_mid_write", "adr-111", 0, 2, latency_ratio=2.0)
    output = run_task_output(task)
    assert output.violations
    for violation in output.violations:
        cx = violation.counterexample
        assert violation.scenario is not None  # latency changed: the scenario must travel with it
        replayed = simulate(
            violation.scenario.with_faults(cx.profile), cx.policy, cx.seed, flags=dict(cx.flags), script=cx.faults
        )
        assert replayed.digest == cx.digest
        assert cx.invariant in replayed.violations
