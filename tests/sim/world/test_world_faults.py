"""Every fault family of ``sim.world.faults.FAMILIES`` fires, is recorded, changes the history and has its own
visible effect; the quiet phase heals the faults.

Each family is switched on alone, at a probability high enough to fire, over the ``default`` workload
(with every other fault off and no store latency, so that true time and process clocks only differ by
an injected skew). The same seed with every family off is the baseline the history must differ from.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from checks import history as H
from checks.history import Op, OpType
from model.constants import LEASE_S
from model.statements import CANCEL, CLAIM_FOR_RESUME, CLAIM_QUEUED, RENEW_LEASE
from scenarios.loader import load_scenario
from scenarios.schema import FaultsModel, Scenario, ScriptedFaultModel
from sim.world.faults import FAMILIES
from sim.world.simulate import SimulationResult, simulate

SEED = 0

# Per family: its fault table, strong enough to fire on SEED of the base workload.
PROFILES: dict[str, dict[str, Any]] = {
    "audit": {"probability": 0.3},
    "store": {"probability": 0.3},
    "crash": {"probability": 0.05},
    "slow": {"probability": 0.3},
    "duplicate": {"probability": 0.5},
    "dispatch": {"probability": 0.5},
    "clock_skew": {"probability": 0.3},
    "identity": {"probability": 0.3},
    "cancel": {"probability": 0.3},
    "provider": {"probability": 0.3},
    "deploy": {"probability": 0.05},
}


@cache
def base() -> Scenario:
    default = load_scenario("default")
    world = default.world.model_copy(update={"store_latency_s": 0.0})
    return default.model_copy(update={"world": world, "faults": FaultsModel()})


def only(family: str, **table: Any) -> Scenario:
    return base().with_faults(FaultsModel.model_validate({family: table or PROFILES[family]}))


@cache
def baseline(seed: int = SEED) -> SimulationResult:
    return simulate(base(), "head", seed)


@cache
def with_family(family: str, seed: int = SEED) -> SimulationResult:
    return simulate(only(family), "head", seed)


def faults(history: list[Op], family: str) -> list[Op]:
    return [op for op in history if op.op == H.FAULT and op.get("family") == family]


def completions(history: list[Op], ops: tuple[str, ...]) -> Iterator[tuple[Op, Op]]:
    """(invoke, completion) pairs of the calls of ``ops``, matched per process and run."""
    open_calls: dict[tuple[str, str, str], Op] = {}
    for op in history:
        if op.op not in ops:
            continue
        key = (op.process, op.op, op.run)
        if op.type is OpType.INVOKE:
            open_calls[key] = op
        elif key in open_calls:
            yield open_calls.pop(key), op


def lease_writes(history: list[Op]) -> list[Op]:
    """Matched claims and renewals that changed the row (T3, T4, T10)."""
    return [
        op
        for op in history
        if op.op == H.STORE
        and op.type is OpType.OK
        and op.get("matched")
        and op.get("changed")
        and str(op.get("transition")).startswith((f"{CLAIM_QUEUED} ", f"{RENEW_LEASE} ", f"{CLAIM_FOR_RESUME} "))
    ]


def skewed_leases(history: list[Op], epoch_s: int | None = None) -> list[Op]:
    """Lease writes whose lease is not the true clock's reading plus LEASE_S (the clock reads unix
    seconds: the history's epoch, or ``epoch_s`` for a slice without the phase record, plus true time)."""
    epoch_s = H.epoch_of(history) if epoch_s is None else epoch_s
    assert epoch_s > 0, "the world's clocks read a realistic epoch"
    return [
        op for op in lease_writes(history) if op.value["row"]["lease_expires"] != epoch_s + int(op.time_s) + LEASE_S
    ]


def writers_by_identity(history: list[Op]) -> dict[str, set[str]]:
    writers: dict[str, set[str]] = defaultdict(set)
    for op in history:
        if op.op == H.STORE and op.type is OpType.INVOKE and op.process != "user":
            writers[op.get("identity")].add(op.process)
    return writers


def user_cancels(history: list[Op]) -> list[Op]:
    return [
        op
        for op in history
        if op.op == H.STORE
        and op.process == "user"
        and op.get("identity") == "user"
        and str(op.get("transition")).startswith(f"{CANCEL} ")
    ]


def first_quiet(history: list[Op]) -> Op | None:
    return next((op for op in history if op.op == H.PHASE and op.get("phase") == "quiet"), None)


# ---- every family fires, is recorded and changes the history ----------------------------------


def test_the_families_under_test_are_exactly_the_fault_families_of_sim_faults() -> None:
    assert set(PROFILES) == set(FAMILIES)


@pytest.mark.parametrize("family", sorted(PROFILES))
def test_a_family_switched_on_alone_fires(family: str) -> None:
    result = with_family(family)
    assert result.faults_fired[family] > 0
    assert all(count == 0 for name, count in result.faults_fired.items() if name != family)


@pytest.mark.parametrize("family", sorted(PROFILES))
def test_a_fired_family_is_recorded_as_a_nemesis_fault_record_of_that_family(family: str) -> None:
    records = faults(with_family(family).history, family)
    assert records
    assert all(op.process == H.NEMESIS and op.type is OpType.INFO for op in records)


@pytest.mark.parametrize("family", sorted(PROFILES))
def test_the_fault_counts_match_the_fault_records(family: str) -> None:
    result = with_family(family)
    assert result.faults_fired[family] == len(faults(result.history, family))


@pytest.mark.parametrize("family", sorted(PROFILES))
def test_a_fired_family_changes_the_history_of_the_same_seed(family: str) -> None:
    assert with_family(family).digest != baseline().digest


def test_the_baseline_with_every_family_off_has_no_fault_records() -> None:
    result = baseline()
    assert not [op for op in result.history if op.op == H.FAULT]
    assert not any(result.faults_fired.values())


# ---- each family's own effect ----------------------------------------------------------------


def test_an_audit_fault_makes_an_event_insert_fail() -> None:
    failed = [op for op in with_family("audit").history if op.op == H.EVENT and op.type is OpType.FAIL]
    assert failed
    assert not [op for op in baseline().history if op.op == H.EVENT and op.type is OpType.FAIL]


def test_a_store_fault_makes_a_guarded_update_or_read_fail() -> None:
    failed = [op for op in with_family("store").history if op.op in (H.STORE, H.READ) and op.type is OpType.FAIL]
    assert failed
    assert all(op.get("error") == "StoreError" for op in failed)


def test_a_slow_store_fault_is_recorded_as_a_store_fault() -> None:
    result = simulate(only("store", probability=0.0, slow_probability=0.3, slow_s=[100.0, 200.0]), "head", SEED)
    assert any(f.kind == "slow" for f in result.fault_script)
    assert result.faults_fired["store"] > 0
    assert faults(result.history, "store")


def test_a_crash_fault_is_followed_by_a_crash_record_and_a_restart() -> None:
    history = with_family("crash").history
    crashes = [op for op in history if op.op == H.CRASH]
    assert crashes
    assert [op for op in history if op.op == H.RESTART and op.index > crashes[0].index]


def test_a_targeted_crash_after_a_write_kills_the_worker_after_the_side_effect_landed() -> None:
    scenario = base().model_copy(
        update={
            "script": [
                ScriptedFaultModel(family="crash", kind="after", on="tool", tool="mcp_sync_index", process="worker")
            ]
        }
    )
    history = simulate(scenario, "head", SEED).history
    fault = faults(history, "crash")[0]
    abandoned = next(op for op in history if op.op == H.TOOL and op.type is OpType.INFO)
    assert abandoned.process == fault.get("target")
    assert any(op.op == H.LANDING and op.index < abandoned.index for op in history)
    assert any(op.op == H.CRASH and op.get("process") == fault.get("target") for op in history)


def test_a_crashed_reaper_is_restarted_with_a_restart_record() -> None:
    happy = load_scenario("happy_path")
    slow_provider = happy.provider.model_copy(update={"latency_s": (300.0, 300.0)})
    scenario = happy.model_copy(
        update={
            "script": [ScriptedFaultModel(family="crash", kind="before", process="reaper")],
            "provider": slow_provider,
        }
    )
    history = simulate(scenario, "head", SEED).history
    assert any(op.op == H.CRASH and op.get("process") == "reaper#1" for op in history)
    assert any(op.op in (H.SEGMENT, H.IDLE) and op.process == "reaper#2" for op in history)
    assert any(op.op == H.RESTART and op.get("process") == "reaper#2" for op in history)


def test_a_slow_fault_makes_a_provider_or_tool_call_outlive_the_lease() -> None:
    longest = max(
        done.time_s - start.time_s for start, done in completions(with_family("slow").history, ("provider", "tool"))
    )
    assert longest > LEASE_S


def test_without_slow_faults_no_provider_or_tool_call_outlives_the_lease() -> None:
    longest = max(done.time_s - start.time_s for start, done in completions(baseline().history, ("provider", "tool")))
    assert longest < LEASE_S


def test_a_duplicate_fault_delivers_a_wake_up_twice() -> None:
    history = with_family("duplicate").history
    copies = [op for op in history if op.op == H.DELIVER and op.get("duplicate") is True]
    assert copies
    assert all(op.run for op in copies)
    assert not [op for op in baseline().history if op.op == H.DELIVER and op.get("duplicate")]


def test_a_dispatch_fault_makes_a_dispatch_fail() -> None:
    failed = [op for op in with_family("dispatch").history if op.op == H.DISPATCH and op.type is OpType.FAIL]
    assert failed
    assert not [op for op in baseline().history if op.op == H.DISPATCH and op.type is OpType.FAIL]


def test_without_clock_skew_every_lease_runs_exactly_lease_s_from_true_time() -> None:
    writes = lease_writes(baseline().history)
    assert writes
    assert not skewed_leases(baseline().history)


def test_a_clock_skew_fault_stamps_a_lease_that_is_not_lease_s_from_true_time() -> None:
    history = with_family("clock_skew").history
    first_skew = faults(history, "clock_skew")[0]
    skewed = skewed_leases(history)
    assert skewed
    assert all(op.index > first_skew.index for op in skewed)


def test_without_identity_faults_every_identity_belongs_to_one_process() -> None:
    assert all(len(processes) == 1 for processes in writers_by_identity(baseline().history).values())


def test_an_identity_fault_makes_two_processes_write_with_one_identity() -> None:
    shared = {i: p for i, p in writers_by_identity(with_family("identity").history).items() if len(p) > 1}
    assert shared


def test_a_cancel_fault_is_a_t8_cancel_by_the_user() -> None:
    history = with_family("cancel").history
    cancels = user_cancels(history)
    assert cancels
    fault_runs = {op.run for op in faults(history, "cancel")}
    assert {op.run for op in cancels} <= fault_runs
    assert not user_cancels(baseline().history)


def test_a_provider_fault_is_a_provider_failure_with_a_failure_class() -> None:
    failed = [op for op in with_family("provider").history if op.op == H.PROVIDER and op.type is OpType.FAIL]
    assert failed
    allowed = set(FaultsModel().provider.classes)
    assert all(op.get("failure_class") in allowed and op.get("error") for op in failed)


def test_a_deploy_fault_makes_a_later_tool_step_meet_an_unknown_tool() -> None:
    history = with_family("deploy").history
    first_deploy = faults(history, "deploy")[0]
    unknown = [
        op
        for op in history
        if op.op in (H.TOOL, H.EVENT) and op.index > first_deploy.index and op.get("true_effect") == "unknown"
    ]
    assert unknown
    assert not [op for op in baseline().history if op.op in (H.TOOL, H.EVENT) and op.get("true_effect") == "unknown"]


# ---- the quiet phase heals ---------------------------------------------------------------------


def short_chaos(scenario: Scenario, chaos_s: float) -> Scenario:
    return scenario.model_copy(update={"world": scenario.world.model_copy(update={"chaos_s": chaos_s})})


def test_no_fault_is_recorded_after_the_quiet_phase_begins() -> None:
    scenario = short_chaos(load_scenario("default"), 600.0)
    judged = 0
    for seed in range(8):
        history = simulate(scenario, "head", seed, judge=False).history
        quiet = first_quiet(history)
        if quiet is None:
            continue
        judged += 1
        assert faults_before(history, quiet), seed
        assert [op for op in history if op.index > quiet.index and op.op == H.STORE], seed
        assert not [op for op in history if op.index > quiet.index and op.op == H.FAULT], seed
    assert judged >= 4


def faults_before(history: list[Op], quiet: Op) -> list[Op]:
    return [op for op in history if op.op == H.FAULT and op.index < quiet.index]


def test_a_provider_fault_decided_in_the_chaos_phase_never_strikes_in_the_quiet_phase() -> None:
    default = load_scenario("default")
    scenario = short_chaos(default, 300.0).model_copy(
        update={
            "provider": default.provider.model_copy(update={"latency_s": (50.0, 100.0)}),
            "faults": FaultsModel.model_validate({"provider": {"probability": 0.5}}),
        }
    )
    late = []
    for seed in range(6):
        history = simulate(scenario, "head", seed, judge=False).history
        quiet = first_quiet(history)
        assert quiet is not None
        late += [op for op in history if op.index > quiet.index and op.op == H.FAULT]
    assert not late


def test_clock_skew_is_healed_in_the_quiet_phase() -> None:
    scenario = short_chaos(only("clock_skew"), 300.0)
    history = simulate(scenario, "head", SEED).history
    quiet = first_quiet(history)
    assert quiet is not None
    assert skewed_leases([op for op in history if op.index < quiet.index])
    after = [op for op in lease_writes(history) if op.index > quiet.index]
    assert after
    assert not skewed_leases(after, H.epoch_of(history))


def test_identity_faults_are_healed_in_the_quiet_phase() -> None:
    scenario = short_chaos(only("identity"), 300.0)
    history = simulate(scenario, "head", SEED).history
    quiet = first_quiet(history)
    assert quiet is not None
    after = writers_by_identity([op for op in history if op.index > quiet.index])
    assert all(len(processes) == 1 for processes in after.values())


def test_a_targeted_provider_fault_without_on_strikes_a_provider_call() -> None:
    happy = load_scenario("happy_path")
    result = simulate(happy.model_copy(update={"script": [ScriptedFaultModel(family="provider")]}), "head", SEED)
    assert result.fault_script
    assert result.faults_fired["provider"] == 1
