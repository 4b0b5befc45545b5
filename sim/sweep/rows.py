"""What one sweep task computes: the cell's scenario, one row per simulation, and its evidence.

Runs inside an executor's worker (a local process or a Dask worker on another machine), so
it returns plain picklable values and never touches the sweep directory: rows (the sweep row
contract, described in the README's "Sweeps" section), the counterexample of each distinct mechanism the task's
seeds met (its first seed only: :func:`register.mechanism.mechanism_of`, so a second mechanism behind an
invariant already seen, F-18 behind F-01's ``non_idempotent_at_most_once``, is kept too), and, when asked, the
histories. Knows scenarios, policies and one simulation; nothing of executors, shards or progress.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from checks import Index, Validity, Verdict
from checks.columns import (
    COV,
    DEAD_LETTER_REASONS,
    DL,
    FAULT,
    FINAL,
    INV,
    JUDGED,
    STAT_COMPLETED,
    STAT_LANDINGS,
    STAT_REQUESTS,
    STAT_RUNS,
    STAT_SIMULATED_S,
    VERDICT_VALUES,
    WHY,
)
from checks.fused import as_index
from checks.history import Op
from checks.metrics import run_metrics
from model.policy import resolve_policy
from model.vocab import RunStatus
from register.explain import explain
from register.mechanism import Mechanism, mechanism_of
from scenarios.families import FAMILIES
from scenarios.loader import load_scenario
from scenarios.overrides import LIBRARY_RANGES, shaped
from scenarios.schema import Scenario
from sim.explore.counterexample import INVARIANT_NAMES, Counterexample
from sim.explore.discovery import mechanism_key
from sim.sweep.task import SweepTask, flags_text
from sim.world.simulate import SimulationResult, gc_paused, simulate


@dataclass(frozen=True)
class Violation:
    """The first seed of a task that met a mechanism, ready to become a counterexample file.

    ``scenario`` is the overridden scenario when the task changed latency, transport or collation (the
    coordinator writes it beside the counterexample, since a library name would replay
    without the overrides), else None. ``key`` is the task's key; ``mechanism`` the mechanism's key
    (:func:`sim.explore.discovery.mechanism_key`: a register id, or the invariant and witness shape) and
    the counterexample's ``mechanism`` its label. ``offset`` is the simulation's place in the task (0 for
    its first seed); the coordinator adds the simulations planned before the task (``first_simulation``,
    counted from 1 in the plan's order, so the same in any executor) and the sweep's seconds then.
    """

    counterexample: Counterexample
    scenario: Scenario | None
    key: str = ""
    mechanism: str = ""
    label: str = ""
    """The task's policy label (a sweep keeps one counterexample per policy and mechanism)."""
    offset: int = 0
    first_simulation: int = 0
    first_s: float = 0.0


@dataclass
class TaskOutput:
    """``rows`` (or, once encoded by the worker, ``shard``: the Parquet file's bytes), the
    violations, and the history rows (or ``history_shard``) when kept."""

    rows: list[dict[str, Any]]
    violations: list[Violation] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    shard: bytes = b""
    history_shard: bytes = b""


def cell_scenario(task: SweepTask) -> tuple[Scenario, bool]:
    """The scenario a task simulates, and whether latency / transport / collation overrides changed it (the fault
    ranges do not count: a counterexample stores its fault profile, widened ranges included)."""
    return shaped(
        load_scenario(task.scenario),
        intensity=task.intensity,
        latency_ratio=task.latency_ratio,
        transport=task.transport,
        fault_ranges=task.fault_ranges,
        collation=task.collation,
    )


def sweep_row(task: SweepTask, scenario: Scenario, result: SimulationResult) -> dict[str, Any]:
    """One row of the contract: keys, verdicts, coverage, faults, statistics, run metrics."""
    row: dict[str, Any] = {
        "grid": task.grid,
        "scenario": scenario.name,
        "policy": task.policy_label,
        "preset": task.policy,
        "flags": flags_text(task.flags),
        "intensity": float(task.intensity),
        "latency_ratio": float(task.latency_ratio),
        "transport": scenario.world.transport,
        "fault_ranges": task.fault_ranges or LIBRARY_RANGES,
        "collation": scenario.world.identity_collation,
        "seed": result.seed,
        "digest": result.digest,
    }
    for name in INVARIANT_NAMES:
        row[INV + name] = VERDICT_VALUES[result.verdicts[name].valid]
    for name in INVARIANT_NAMES:
        row[JUDGED + name] = int(result.verdicts[name].judged)
    for name, reached in result.coverage.items():
        row[COV + name] = bool(reached)
    for family in FAMILIES:
        row[FAULT + family] = int(result.faults_fired.get(family, 0))
    stats = result.stats
    row[STAT_RUNS] = int(stats["runs"])
    row[STAT_REQUESTS] = int(stats["requests"])
    row[STAT_LANDINGS] = int(stats["landings"])
    row[STAT_SIMULATED_S] = float(stats["simulated_s"])
    final = stats["final_status"]
    for status in RunStatus:
        row[FINAL + status.value] = int(final.get(status.value, 0))
    row[STAT_COMPLETED] = int(final.get(RunStatus.COMPLETED.value, 0))
    for reason in DEAD_LETTER_REASONS:
        row[DL + reason] = 0
    row.update(run_metrics(result.history, result.request_types).columns())
    return row


def explain_violations(
    history: list[Op] | Index, verdicts: dict[str, Verdict], names: Sequence[str]
) -> list[tuple[str, str]]:
    """(invariant, id) for each of ``names`` the history violated: the id of the registered finding or
    recorded non-guarantee whose recogniser matches (:func:`register.explain.explain`), '' when none
    does. The review's recognition, run by a sweep worker on the history it just judged or by an
    evidence job on a re-run. Give it the judging pass's index when there is one."""
    index: Index | None = history if isinstance(history, Index) else None
    out = []
    for name in names:
        verdict = verdicts[name]
        if verdict.valid is not Validity.INVALID:
            continue
        if index is None:
            index = as_index(history)
        entry = explain(name, index, verdict)
        out.append((name, "" if entry is None else entry.id))
    return out


def name_mechanisms(result: SimulationResult) -> list[Mechanism]:
    """The mechanism of each violation of ``result``, in the order of ``result.violations`` (one
    index, the judging pass's): what the worker keeps a counterexample of, and, for a task that
    explains, its ``why.*`` columns (``Mechanism.explained_by``)."""
    if not result.violations:
        return []
    index = result.indexed()
    return [mechanism_of(name, index, result.verdicts[name]) for name in result.violations]


def _violation(
    task: SweepTask, scenario: Scenario, changed: bool, result: SimulationResult, mechanism: Mechanism
) -> Violation:
    name, label = mechanism.invariant, mechanism.label()
    cx = Counterexample(
        scenario=task.scenario,
        policy=task.policy,
        seed=result.seed,
        invariant=name,
        digest=result.digest,
        faults=result.fault_script,
        profile=scenario.faults,
        flags=dict(task.flags),
        explorer="sweep",
        note=f"sweep grid {task.grid}, policy {task.policy_label}, intensity {task.intensity:g}, "
        f"latency ratio {task.latency_ratio:g}, transport {scenario.world.transport}"
        + (f", fault ranges {task.fault_ranges}" if task.fault_ranges else "")
        + (f", collation {task.collation}" if task.collation else "")
        + "; not shrunk (the first simulation of the sweep that met its mechanism)",
        mechanism=label,
    )
    return Violation(
        cx,
        scenario if changed else None,
        task.key,
        mechanism_key(name, label),
        task.policy_label,
        result.seed - task.seed_start,
    )


def history_rows(result: SimulationResult) -> list[dict[str, Any]]:
    """A history as flat rows (value as JSON text) for ``--keep-histories``."""
    return [
        {
            "seed": result.seed,
            "index": op.index,
            "time_s": op.time_s,
            "process": op.process,
            "op": op.op,
            "run": op.run,
            "type": op.type.value,
            "value": json.dumps(op.value, default=str),
        }
        for op in result.history
    ]


def run_task_output(task: SweepTask, keep_histories: bool = False) -> TaskOutput:
    """Every simulation of a task; the first violation of each distinct mechanism kept for a
    counterexample (none when the task keeps no ``evidence``). Naming a violation's mechanism runs the
    register's recognisers on the index the judging pass built, about 1-3% of a task whose every
    simulation violates something; a task that explains gets its ``why.*`` columns from the same names.

    The cyclic collector stays paused for the whole task, not only inside each simulation: between
    two simulations the row is built (digest, metrics) from a history of thousands of young
    records, and every collection the row's allocations set off walks them all again, 10-30% of
    a task of ``reaper_races_heartbeat``. A finished simulation is freed by reference counting
    (:func:`sim.world.simulate._release`); the few cycles left wait for the next collection."""
    scenario, changed = cell_scenario(task)
    policy = resolve_policy(task.policy, dict(task.flags))
    out = TaskOutput(rows=[])
    seen: set[str] = set()
    with gc_paused():
        for seed in task.seeds:
            result = simulate(scenario, policy, seed)
            row = sweep_row(task, scenario, result)
            named = name_mechanisms(result) if task.explain or task.evidence else []
            if task.explain:
                row.update((WHY + m.invariant, m.explained_by) for m in named)
            out.rows.append(row)
            for mechanism in named if task.evidence else ():
                key = mechanism_key(mechanism.invariant, mechanism.label())
                if key not in seen:
                    seen.add(key)
                    out.violations.append(_violation(task, scenario, changed, result, mechanism))
            if keep_histories:
                out.history.extend(history_rows(result))
    return out
