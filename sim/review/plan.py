"""Which simulations the review looks at again: pure functions of the sweep's rows.

A review shrinks one violating simulation per invariant under ``head`` and under the first preset
(ADR order) where the invariant fails, re-runs violating ``head`` simulations of the primary grid
for the findings' recognisers, and verifies small scenarios exhaustively. Which rows are chosen is
decided here from the rows alone, so the same sweep always yields the same evidence. Knows the
row columns and the job types; runs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from model.policy import PRESET_ALIASES, PRESETS
from scenarios.loader import load_scenario
from sim.review.jobs import Cell, RecogniseJob, ShrinkJob, VerifyJob, parse_flags
from sim.sweep.config import SweepConfig

HEAD = "adr-141"
PRIMARY_GRID = "main"
"""The grid the summary counts (the library scenarios at the configuration's intensities)."""


def scenario_refs(config: SweepConfig) -> dict[str, str]:
    """Scenario name (as rows carry it) -> the reference the loader takes (library name or path)."""
    refs: dict[str, str] = {}
    for grid in config.grid:
        for spec in grid.scenario_specs():
            ref = config.resolve(spec)
            refs.setdefault(load_scenario(ref).name, ref)
    return refs


def as_written_grids(config: SweepConfig) -> set[str]:
    """Grids whose rows simulate scenarios as written (no latency or transport override): a
    counterexample file, which names a scenario and a fault profile, replays those exactly."""
    return {g.name for g in config.grid if not g.latency_ratios and not g.transports}


def cell(row: pd.Series, refs: dict[str, str]) -> Cell:
    """The cell a row came from, with the scenario as the loader takes it (library name or path)."""
    return Cell(
        refs.get(str(row["scenario"]), str(row["scenario"])),
        str(row["preset"]),
        parse_flags(str(row["flags"])),
        float(row["intensity"]),
        int(row["seed"]),
        str(row["digest"]),
    )


def violators(frame: pd.DataFrame, policy: str, invariant: str, grids: set[str]) -> pd.DataFrame:
    """Rows of ``policy`` violating ``invariant`` in as-written grids: the primary grid first (the one the
    summary counts), fewest faults first (they shrink fastest), then by scenario, intensity and seed."""
    rows = frame[(frame["policy"] == policy) & (frame[f"inv.{invariant}"] == "false") & frame["grid"].isin(grids)]
    faults = rows[[c for c in rows.columns if c.startswith("fault.")]].sum(axis=1)
    rows = rows.assign(_faults=faults, _other_grid=rows["grid"] != PRIMARY_GRID)
    return rows.sort_values(["_other_grid", "_faults", "grid", "scenario", "intensity", "seed"], kind="stable")


def canonical(preset: str) -> str:
    return PRESET_ALIASES.get(preset, preset)


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
    frame: pd.DataFrame, policies: Sequence[str], refs: dict[str, str], max_tests: int, grids: set[str]
) -> list[ShrinkJob]:
    """One job per violated invariant under head, and under the first preset (ADR order) where it fails."""
    presets = presets_in_order(frame, policies)
    head = head_label(frame, policies)
    jobs: list[ShrinkJob] = []
    for name in [c.removeprefix("inv.") for c in frame.columns if c.startswith("inv.")]:
        chosen: list[str] = []
        first = next((p for p in presets if not violators(frame, p, name, grids).empty), None)
        if first is not None:
            chosen.append(first)
        if head is not None and head not in chosen and not violators(frame, head, name, grids).empty:
            chosen.append(head)
        for label in chosen:
            row = violators(frame, label, name, grids).iloc[0]
            jobs.append(ShrinkJob(cell(row, refs), name, label, max_tests))
    return jobs


def plan_recognition(
    frame: pd.DataFrame, policies: Sequence[str], refs: dict[str, str], per_invariant: int, grids: set[str]
) -> list[RecogniseJob]:
    """Violating head simulations of the primary grid to re-run for the recognisers of the findings and
    non-guarantees: per invariant violated there, up to ``per_invariant`` rows, taken round-robin over
    scenarios so that each mechanism gets a look. Every violated invariant is examined, not only those a
    finding names: a violation nothing explains is what the reviewer must see."""
    head = head_label(frame, policies)
    if head is None or PRIMARY_GRID not in grids:
        return []
    wanted = [c.removeprefix("inv.") for c in frame.columns if c.startswith("inv.")]
    picked: dict[tuple[str, int, float, str], set[str]] = {}
    order: list[tuple[str, int, float, str]] = []
    for name in wanted:
        rows = violators(frame, head, name, {PRIMARY_GRID})
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
    return [RecogniseJob(cell(head_rows.iloc[first_row[key]], refs), tuple(sorted(picked[key]))) for key in order]


def _keys(rows: pd.DataFrame) -> list[tuple[str, int, float, str]]:
    """(scenario, seed, intensity, grid) of each row, in order: the key a recognition job is picked by."""
    columns = zip(rows["scenario"], rows["seed"], rows["intensity"], rows["grid"], strict=True)
    return [(str(scenario), int(seed), float(intensity), str(grid)) for scenario, seed, intensity, grid in columns]


def plan_verification(scenarios: Sequence[str], bound: int) -> list[VerifyJob]:
    return [VerifyJob(s, preset, bound) for s in scenarios for preset in PRESETS]
