"""Which simulations the review looks at again: pure functions of the sweep's rows.

A review shrinks one violating simulation per invariant under ``head`` and under the first preset
(ADR order) where the invariant fails, re-runs violating ``head`` simulations of the primary grid
for the findings' recognisers, and verifies small scenarios exhaustively. Which rows are chosen is
decided here from the rows alone, so the same sweep always yields the same evidence. Knows the
row columns and the job types; runs nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from checks.columns import FAULT, INV, WHY, violated_mask
from checks.columns import names as column_names
from model.policy import PRESET_ALIASES, PRESETS
from scenarios.loader import load_scenario
from sim.review.jobs import UNEXPLAINED, Cell, RecogniseJob, ShrinkJob, VerifyJob, parse_flags
from sim.sweep.config import SweepConfig
from sim.sweep.task import SweepTask

HEAD = "adr-141"
PRIMARY_GRID = "main"
"""The grid the summary counts (the library scenarios at the configuration's intensities)."""
DEPLOYMENT = "deployment"


def scenario_refs(config: SweepConfig) -> dict[str, str]:
    """Scenario name (as rows carry it) -> the reference the loader takes (library name or path)."""
    refs: dict[str, str] = {}
    for grid in config.grid:
        for spec in grid.scenario_specs():
            ref = config.resolve(spec)
            refs.setdefault(load_scenario(ref).name, ref)
    return refs


def as_written_grids(config: SweepConfig) -> set[str]:
    """Grids whose rows simulate scenarios as written (no latency, transport or collation override): a
    counterexample file, which names a scenario and a fault profile, replays those exactly."""
    return {g.name for g in config.grid if not g.latency_ratios and not g.transports and not g.collations}


def deployment_grids(config: SweepConfig) -> list[str]:
    """Grids at the fault ranges of real deployments whose rows a counterexample file replays (no
    latency or transport override): the review explains head's violations there as in the primary grid."""
    written = as_written_grids(config)
    return [g.name for g in config.grid if g.fault_ranges == DEPLOYMENT and g.name in written]


def explained_grids(config: SweepConfig) -> list[str]:
    """The grids whose violations under head the review re-runs and explains: the primary grid (the
    library's fault ranges) and every deployment-range grid."""
    return [PRIMARY_GRID, *deployment_grids(config)]


def cell(row: pd.Series, refs: dict[str, str]) -> Cell:
    """The cell a row came from, with the scenario as the loader takes it (library name or path)."""
    return Cell(
        refs.get(str(row["scenario"]), str(row["scenario"])),
        str(row["preset"]),
        parse_flags(str(row["flags"])),
        float(row["intensity"]),
        int(row["seed"]),
        str(row["digest"]),
        _ranges(row),
    )


def _ranges(row: pd.Series) -> str:
    """The row's fault ranges ('' for rows written before the column existed: the library's)."""
    value = row.get("fault_ranges")
    return "" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def violators(frame: pd.DataFrame, policy: str, invariant: str, grids: set[str]) -> pd.DataFrame:
    """Rows of ``policy`` violating ``invariant`` in as-written grids: the primary grid first (the one the
    summary counts), fewest faults first (they shrink fastest), then by scenario, intensity and seed."""
    rows = frame[(frame["policy"] == policy) & violated_mask(frame[INV + invariant]) & frame["grid"].isin(grids)]
    faults = rows[[c for c in rows.columns if c.startswith(FAULT)]].sum(axis=1)
    rows = rows.assign(_faults=faults, _other_grid=rows["grid"] != PRIMARY_GRID)
    return rows.sort_values(["_other_grid", "_faults", "grid", "scenario", "intensity", "seed"], kind="stable")


def canonical(preset: str) -> str:
    return PRESET_ALIASES.get(preset, preset)


@dataclass(frozen=True)
class ExplainingSweep:
    """The review's sweep: the configuration's tasks, with head's tasks in the grids the review
    explains (:func:`explained_grids`) marked ``explain``, so their workers explain each violation
    while the history is in memory instead of the review re-running it (``run_recognise``). Head is
    the first policy of the preset with no flags, as :func:`head_label` finds it in the rows."""

    config: SweepConfig

    def iter_tasks(self) -> Iterator[SweepTask]:
        head = next((p.label for p in self.config.policy if canonical(p.preset) == HEAD and not p.flags), None)
        grids = set(explained_grids(self.config))
        for task in self.config.iter_tasks():
            wanted = task.policy_label == head and task.grid in grids
            # the review plans its counterexamples from the rows (:func:`plan_shrinks`): none from the workers
            yield replace(task, explain=wanted, evidence=False)

    def tasks(self) -> list[SweepTask]:
        return list(self.iter_tasks())

    def size(self) -> tuple[int, int]:
        return self.config.size()


def presets_in_order(frame: pd.DataFrame, policies: Sequence[str]) -> list[str]:
    """The labels of plain presets (no flags) that have rows, in ADR order."""
    order = list(PRESETS)
    found = []
    for label in policies:
        rows = frame[frame["policy"] == label]
        if rows.empty or str(rows["flags"].iloc[0]):
            continue
        preset = canonical(str(rows["preset"].iloc[0]))
        found.append((order.index(preset) if preset in order else len(order), label))
    return [label for _, label in sorted(found)]


def head_label(frame: pd.DataFrame, policies: Sequence[str]) -> str | None:
    for label in policies:
        rows = frame[frame["policy"] == label]
        if not rows.empty and canonical(str(rows["preset"].iloc[0])) == HEAD and not str(rows["flags"].iloc[0]):
            return label
    return None


def plan_shrinks(
    frame: pd.DataFrame,
    policies: Sequence[str],
    refs: dict[str, str],
    max_tests: int,
    grids: set[str],
    deployment: Sequence[str] = (),
) -> list[ShrinkJob]:
    """The counterexamples to shrink, one per distinct mechanism of head and one per invariant where a
    preset before head fails first, in the order of the invariants:

    - under the first preset (ADR order) where an invariant fails at the library's fault ranges, when
      that is not head, one job for the invariant;
    - under head, one job per distinct mechanism its rows name (the ``why.*`` columns: a registered
      finding or a recorded non-guarantee, whichever invariant showed it, or per invariant the
      violations nothing explains), at the library's fault ranges first (:func:`mechanism_rows`); an
      invariant whose rows name none (no ``why.*`` columns) gets one job, as before;
    - under head at deployment ranges, one per mechanism not met at the library's.

    So a second mechanism behind an invariant already seen (F-18 behind F-01's
    ``non_idempotent_at_most_once``) gets its own counterexample, and a mechanism behind several
    invariants one."""
    presets = presets_in_order(frame, policies)
    head = head_label(frame, policies)
    library = grids - set(deployment)
    jobs: list[ShrinkJob] = []
    names = column_names(INV, frame.columns)
    planned: set[str] = set()
    for name in names:
        first = next((p for p in presets if not violators(frame, p, name, library).empty), None)
        if first is not None and first != head:
            row = violators(frame, first, name, library).iloc[0]
            jobs.append(ShrinkJob(cell(row, refs), name, first, max_tests, role="first preset where it fails"))
        if head is None:
            continue
        role = "head, and the first preset where it fails" if first == head else "head"
        for mechanism, row, met in mechanism_rows(frame, head, name, library):
            key = _planned_key(name, mechanism)
            if key in planned:
                continue
            planned.add(key)
            jobs.append(ShrinkJob(cell(row, refs), name, head, max_tests, mechanism=mechanism, role=role, met=met))
    if head is not None and deployment:
        for name in names:
            for mechanism, row, met in mechanism_rows(frame, head, name, set(deployment)):
                key = _planned_key(name, mechanism)
                if key in planned:
                    continue
                planned.add(key)
                grid = str(row["grid"])
                role = f"head at deployment ranges, grid {grid}"
                jobs.append(ShrinkJob(cell(row, refs), name, head, max_tests, grid, mechanism, role, met))
    return jobs


def _planned_key(invariant: str, mechanism: str) -> str:
    """What one head counterexample stands for: a register id alone (whichever invariant showed it), or
    per invariant its unexplained violations, or its violations whose rows name no mechanism."""
    if mechanism == UNEXPLAINED:
        return f"{invariant} {UNEXPLAINED}"
    return mechanism or f"{invariant} ?"


def mechanism_rows(
    frame: pd.DataFrame, policy: str, invariant: str, grids: set[str]
) -> list[tuple[str, pd.Series, int]]:
    """Per distinct mechanism of ``policy``'s violations of ``invariant`` in ``grids``, as the rows'
    ``why.*`` columns name it (a finding or non-guarantee id, or ``UNEXPLAINED``), its first row in
    :func:`violators`' order and the simulations that showed it (for an id: rows whose ``why`` of any
    invariant is that id). Rows without the column (not explained) count only when no row names a
    mechanism: then one entry, mechanism ''."""
    rows = violators(frame, policy, invariant, grids)
    if rows.empty:
        return []
    column = WHY + invariant
    whys = rows[column] if column in rows.columns else pd.Series([None] * len(rows), index=rows.index)
    named = [(str(w), i) for i, w in zip(range(len(rows)), whys, strict=True) if isinstance(w, str)]
    if not named:
        return [("", rows.iloc[0], 0)]
    mine = frame[(frame["policy"] == policy) & frame["grid"].isin(grids)]
    why_columns = [c for c in mine.columns if c.startswith(WHY)]
    out: list[tuple[str, pd.Series, int]] = []
    seen: set[str] = set()
    for why, position in named:
        if why in seen:
            continue
        seen.add(why)
        if why:
            met = int((mine[why_columns] == why).any(axis=1).sum())
        else:
            met = int((violated_mask(mine[INV + invariant]) & mine[column].eq("")).sum())
        out.append((why or UNEXPLAINED, rows.iloc[position], met))
    return out


def plan_recognition(
    frame: pd.DataFrame,
    policies: Sequence[str],
    refs: dict[str, str],
    per_invariant: int,
    grids: set[str],
    explained: Sequence[str] = (PRIMARY_GRID,),
) -> list[RecogniseJob]:
    """Violating head simulations of each ``explained`` grid (the primary grid, and the deployment-range
    grids) for the recognisers of the findings and non-guarantees (a job the row's ``why.*`` columns
    already answer carries them as ``known``, and is not re-run): per grid and invariant
    violated there, up to ``per_invariant`` rows, taken round-robin over scenarios so that each mechanism
    gets a look. Every violated invariant is examined, not only those a finding names: a violation
    nothing explains is what the reviewer must see."""
    return [
        job
        for grid in explained
        if grid in grids
        for job in _recognition_of_grid(frame, policies, refs, per_invariant, grid)
    ]


def _recognition_of_grid(
    frame: pd.DataFrame, policies: Sequence[str], refs: dict[str, str], per_invariant: int, grid_name: str
) -> list[RecogniseJob]:
    head = head_label(frame, policies)
    if head is None:
        return []
    wanted = column_names(INV, frame.columns)
    picked: dict[tuple[str, int, float, str], set[str]] = {}
    order: list[tuple[str, int, float, str]] = []
    for name in wanted:
        rows = violators(frame, head, name, {grid_name})
        by_scenario = [_keys(group) for _, group in rows.groupby("scenario", sort=True)]
        taken = 0
        depth = 0
        while taken < per_invariant and any(depth < len(g) for g in by_scenario):
            for group in by_scenario:
                if depth < len(group) and taken < per_invariant:
                    key = group[depth]
                    if key not in picked:
                        picked[key] = set()
                        order.append(key)
                    picked[key].add(name)
                    taken += 1
            depth += 1
    head_rows = frame[frame["policy"] == head]
    first_row: dict[tuple[str, int, float, str], int] = {}
    for position, key in enumerate(_keys(head_rows)):
        first_row.setdefault(key, position)
    # one row lookup per job, by key (a filter of every head row per job grew with jobs x rows)
    jobs = []
    for key in order:
        row = head_rows.iloc[first_row[key]]
        names = tuple(sorted(picked[key]))
        jobs.append(RecogniseJob(cell(row, refs), names, key[3], known_explanations(row, names)))
    return jobs


def known_explanations(row: pd.Series, names: Sequence[str]) -> tuple[tuple[str, str], ...] | None:
    """The row's ``why.*`` columns for ``names`` (every one of them violated there), when its sweep
    worker explained them; None when any is missing (a shard of a sweep that did not explain)."""
    known = []
    for name in names:
        value = row.get(WHY + name)
        if not isinstance(value, str):  # absent, or null (None / NaN) in a row that did not explain
            return None
        known.append((name, value))
    return tuple(known)


def _keys(rows: pd.DataFrame) -> list[tuple[str, int, float, str]]:
    """(scenario, seed, intensity, grid) of each row, in order: the key a recognition job is picked by."""
    columns = zip(rows["scenario"], rows["seed"], rows["intensity"], rows["grid"], strict=True)
    return [(str(scenario), int(seed), float(intensity), str(grid)) for scenario, seed, intensity, grid in columns]


def plan_verification(scenarios: Sequence[str], bound: int) -> list[VerifyJob]:
    return [VerifyJob(s, preset, bound) for s in scenarios for preset in PRESETS]
