"""How often each registered entry was met in the cells of a recorded sweep, and whether a later sweep of the
same cells still meets it: a finding that stops reproducing is news.

A changed runtime (or a model that drifted) removes mechanisms as well as adding them. :mod:`register.met`
keeps the property suite's head sweeps (exact draws, compared exactly); this module keeps the sweeps users
run, ``leaselab sweep`` and ``leaselab report``, whose cells (scenario, preset and flags, fault intensity,
latency ratio, transport, fault ranges, collation) any configuration may share. ``entries/met_rates.json``
records, per cell of the built-in ADR review's head policy (``python -m benchmarks.record_met``), the
simulations run, how many met each entry (a violation its recogniser explained) and the first seed that
did: the recorded counterexample, replayable with ``leaselab run``.

:func:`observe` tallies a sweep's rows the same way; :func:`compare` groups the cells both share by the
recorded grid and, for each entry the record met there, asks whether the sweep met it again. Meeting it
zero times is news only when it is unlikely at the recorded rates: with ``r_c`` the recorded rate of cell
``c`` and ``n_c`` the simulations the sweep ran there, P(none) = prod_c (1 - r_c)^n_c; below
:data:`NEWS_BELOW` the entry is *no longer met*, otherwise there were *not enough simulations to say*.
A grid whose simulations judged no case says nothing.

Pure: rows are mappings of a sweep row's columns (see :mod:`checks.columns`); no simulation here.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.columns import INV, WHY
from model.policy import PRESET_ALIASES
from register.findings import FINDINGS_DIR

RECORD = FINDINGS_DIR / "met_rates.json"
NEWS_BELOW = 0.01
"""P(meeting an entry zero times | the recorded rates, the simulations run) below which it is news."""
NO_LONGER_MET = "no longer met"
NOT_ENOUGH = "not enough simulations to say"
CELL_COLUMNS = ("scenario", "preset", "flags", "intensity", "latency_ratio", "transport", "fault_ranges", "collation")
"""The row columns that decide a cell (besides the seed): what the record keys on."""
HEAD_PRESET = "adr-141"


def _canonical(preset: str) -> str:
    return PRESET_ALIASES.get(preset, preset)


@dataclass(frozen=True, order=True)
class Cell:
    """One cell of a sweep: the simulations of one scenario, shaped one way, under one policy."""

    scenario: str
    preset: str
    flags: str = ""
    """``name=value,...`` sorted, as rows carry it; '' for none."""
    intensity: float = 1.0
    latency_ratio: float = 0.0
    transport: str = "async"
    fault_ranges: str = "library"
    collation: str = "binary"

    @classmethod
    def of_row(cls, row: Mapping[str, Any]) -> Cell:
        collation = row.get("collation")  # rows of older shards lack it
        return cls(
            scenario=str(row["scenario"]),
            preset=_canonical(str(row["preset"])),
            flags=str(row.get("flags") or ""),
            intensity=float(row["intensity"]),
            latency_ratio=float(row.get("latency_ratio") or 0.0),
            transport=str(row["transport"]),
            fault_ranges=str(row.get("fault_ranges") or "library"),
            collation=collation if isinstance(collation, str) and collation else "binary",
        )

    def replay(self, seed: int) -> str:
        """The ``leaselab run`` command that simulates this cell's ``seed``."""
        words = ["leaselab", "run", self.scenario, "--policy", "head" if self.preset == HEAD_PRESET else self.preset]
        for flag in filter(None, self.flags.split(",")):
            words += ["--flag", flag]
        words += ["--seed", str(seed)]
        if self.intensity != 1.0:
            words += ["--intensity", f"{self.intensity:g}"]
        if self.latency_ratio:
            words += ["--latency-ratio", f"{self.latency_ratio:g}"]
        if self.transport != "async":
            words += ["--transport", self.transport]
        if self.fault_ranges != "library":
            words += ["--fault-ranges", self.fault_ranges]
        if self.collation != "binary":
            words += ["--collation", self.collation]
        return shlex.join(words)

    def document(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in CELL_COLUMNS}


@dataclass
class Tally:
    """What a sweep met in one cell: its simulations, and per entry those that met it and the first seed."""

    simulations: int = 0
    met: dict[str, int] = field(default_factory=dict)
    first: dict[str, int] = field(default_factory=dict)
    grids: set[str] = field(default_factory=set)


def _violated(value: Any) -> bool:
    """An ``inv.*`` cell that says violated: False (None, NaN and True are not)."""
    return value is not None and value == value and not value


def observe(rows: Iterable[Mapping[str, Any]], invariants: Sequence[str]) -> dict[Cell, Tally]:
    """Per cell, the simulations and the entries they met, in one pass holding one tally per (grid, policy,
    cell), never the rows (a sweep may have 10^8). A group whose violations were not all examined (a row
    violates an invariant and has no ``why.*`` answer: a policy the sweep did not explain) is left out,
    since what it met is unknown. A cell two grids share is the larger group's: every grid's seeds start at
    0, so the larger holds the smaller's seeds and no seed counts twice."""
    groups: dict[tuple[str, str, Cell], Tally] = {}
    unexamined: set[tuple[str, str, Cell]] = set()
    for row in rows:
        key = (str(row.get("grid", "")), str(row.get("policy", "")), Cell.of_row(row))
        if key in unexamined:
            continue
        whys = [row.get(WHY + name) for name in invariants if _violated(row.get(INV + name))]
        if any(not isinstance(why, str) for why in whys):
            unexamined.add(key)
            continue
        tally = groups.get(key)
        if tally is None:
            tally = groups[key] = Tally(grids={key[0]})
        tally.simulations += 1
        seed = int(row["seed"])
        for entry in {w for w in whys if isinstance(w, str) and w not in ("", "?")}:
            tally.met[entry] = tally.met.get(entry, 0) + 1
            tally.first[entry] = min(seed, tally.first.get(entry, seed))
    out: dict[Cell, Tally] = {}
    for key in sorted(groups, key=lambda k: (k[2], k[0], k[1])):
        if key in unexamined:
            continue
        tally, cell = groups[key], key[2]
        kept = out.get(cell)
        if kept is None or tally.simulations > kept.simulations:
            out[cell] = Tally(tally.simulations, tally.met, tally.first, tally.grids | (kept.grids if kept else set()))
        else:
            kept.grids |= tally.grids
    return out


@dataclass(frozen=True)
class CellRecord:
    """A recorded cell: where it was run (``grid``), its simulations, and per entry met the count and first seed."""

    cell: Cell
    grid: str
    simulations: int
    met: Mapping[str, int]
    first: Mapping[str, int]

    def rate(self, entry: str) -> float:
        return self.met.get(entry, 0) / self.simulations if self.simulations else 0.0

    def document(self) -> dict[str, Any]:
        return {
            **self.cell.document(),
            "grid": self.grid,
            "simulations": self.simulations,
            "met": dict(sorted(self.met.items())),
            "first": dict(sorted(self.first.items())),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellRecord:
        return cls(
            cell=Cell(**{name: data[name] for name in CELL_COLUMNS}),
            grid=str(data["grid"]),
            simulations=int(data["simulations"]),
            met={str(k): int(v) for k, v in data["met"].items()},
            first={str(k): int(v) for k, v in data["first"].items()},
        )


@dataclass(frozen=True)
class MetRecord:
    """The record: how it was made, and its cells."""

    source: str
    cells: tuple[CellRecord, ...]

    def by_cell(self) -> dict[Cell, CellRecord]:
        return {c.cell: c for c in self.cells}

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "cells": [c.document() for c in sorted(self.cells, key=lambda c: c.cell)]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MetRecord:
        return cls(str(data["source"]), tuple(CellRecord.from_json(c) for c in data["cells"]))


def recorded(
    observed: Mapping[Cell, Tally], source: str, grid_order: Sequence[str] = (), prefix: str = ""
) -> MetRecord:
    """A record of what a sweep met (each cell under ``prefix`` and the first of its grids in ``grid_order``)."""
    rank = {name: i for i, name in enumerate(grid_order)}
    cells = tuple(
        CellRecord(
            cell, prefix + min(t.grids, key=lambda g: (rank.get(g, len(rank)), g)), t.simulations, t.met, t.first
        )
        for cell, t in sorted(observed.items())
        if t.simulations
    )
    return MetRecord(source, cells)


def read_record(path: Path = RECORD) -> MetRecord:
    return MetRecord.from_json(json.loads(path.read_text(encoding="utf-8")))


def write_record(record: MetRecord, path: Path = RECORD) -> Path:
    path.write_text(json.dumps(record.to_json(), indent=1) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class Stopped:
    """An entry a recorded grid met that the sweep did not meet in any of the cells both share."""

    entry: str
    grid: str
    scenarios: tuple[str, ...]
    simulations: int
    """The sweep's simulations in those cells."""
    expected: float
    """The count the recorded rates expect in them."""
    p_none: float
    """P(meeting it zero times) at the recorded rates."""
    met_before: int
    recorded_simulations: int
    replay: str
    """The recorded counterexample: the first seed that met it, in the cell that met it most often."""

    @property
    def verdict(self) -> str:
        return NO_LONGER_MET if self.p_none < NEWS_BELOW else NOT_ENOUGH

    def line(self) -> str:
        where = (
            f"met before in {self.grid}: {self.met_before:,} of {self.recorded_simulations:,} simulations; "
            f"this sweep ran {self.simulations:,} there, {self.expected:.1f} expected, P(none) {self.p_none:.2g}"
        )
        if self.verdict == NO_LONGER_MET:
            return f"{NO_LONGER_MET}: {self.entry} ({where}); the recorded counterexample: {self.replay}"
        return f"{NOT_ENOUGH}: {self.entry} ({where})"

    def document(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "verdict": self.verdict,
            "grid": self.grid,
            "scenarios": list(self.scenarios),
            "simulations": self.simulations,
            "expected": round(self.expected, 2),
            "p_none": float(f"{self.p_none:.3g}"),
            "met_before": self.met_before,
            "recorded_simulations": self.recorded_simulations,
            "replay": self.replay,
        }


@dataclass(frozen=True)
class Comparison:
    """A sweep against the record: the cells both share, the entries met again, and those not met."""

    cells: int
    simulations: int
    met_again: tuple[tuple[str, str], ...]
    """(entry, recorded grid) met again in the shared cells."""
    stopped: tuple[Stopped, ...]

    @property
    def news(self) -> list[Stopped]:
        return [s for s in self.stopped if s.verdict == NO_LONGER_MET]

    @property
    def unsure(self) -> list[Stopped]:
        return [s for s in self.stopped if s.verdict == NOT_ENOUGH]

    def line(self) -> str:
        """One sentence; '' when the sweep shares no recorded cell (nothing to compare, nothing said)."""
        if not self.cells:
            return ""
        shared = f"{self.cells:,} recorded cell{'' if self.cells == 1 else 's'}, {self.simulations:,} simulations"
        distinct, grids = len({e for e, _ in self.met_again}), len({g for _, g in self.met_again})
        entries = f"{distinct} {'entry' if distinct == 1 else 'entries'}" + (f" on {grids} grids" if grids > 1 else "")
        if not self.stopped:
            return f"Every entry the register records as met on these grids was met again ({entries}; {shared})."
        said = f"{entries} met again"
        if self.unsure:
            said += f", {len(self.unsure)} too rare there to say with these simulations"
        if not self.news:
            return f"No entry the register records on these grids stopped being met: {said} ({shared})."
        gone = ", ".join(sorted({s.entry for s in self.news}))
        return f"No longer met where the register met it: {gone} ({said}; {shared})."

    def document(self) -> dict[str, Any]:
        return {
            "cells": self.cells,
            "simulations": self.simulations,
            "line": self.line(),
            "met_again": [{"entry": e, "grid": g} for e, g in self.met_again],
            "no_longer_met": [s.document() for s in self.news],
            "not_enough_simulations": [s.document() for s in self.unsure],
        }


def compare(observed: Mapping[Cell, Tally], record: MetRecord) -> Comparison:
    """``observed`` (see :func:`observe`) against ``record``, per recorded grid and entry (see the module)."""
    recorded_cells = record.by_cell()
    shared = [(recorded_cells[cell], tally) for cell, tally in sorted(observed.items()) if cell in recorded_cells]
    by_grid: dict[str, list[tuple[CellRecord, Tally]]] = {}
    for pair in shared:
        by_grid.setdefault(pair[0].grid, []).append(pair)
    met_again: list[tuple[str, str]] = []
    stopped: list[Stopped] = []
    for grid, pairs in sorted(by_grid.items()):
        for entry in sorted({e for rec, _ in pairs for e, n in rec.met.items() if n}):
            where = [(rec, tally) for rec, tally in pairs if rec.met.get(entry, 0)]
            if any(tally.met.get(entry, 0) for _, tally in where):
                met_again.append((entry, grid))
                continue
            expected = sum(rec.rate(entry) * tally.simulations for rec, tally in where)
            log_none = sum(tally.simulations * _log1m(rec.rate(entry)) for rec, tally in where)
            best = max(where, key=lambda pair: (pair[0].rate(entry), pair[0].cell))[0]
            stopped.append(
                Stopped(
                    entry=entry,
                    grid=grid,
                    scenarios=tuple(sorted({rec.cell.scenario for rec, _ in where})),
                    simulations=sum(tally.simulations for _, tally in where),
                    expected=expected,
                    p_none=math.exp(log_none),
                    met_before=sum(rec.met[entry] for rec, _ in where),
                    recorded_simulations=sum(rec.simulations for rec, _ in where),
                    replay=best.cell.replay(best.first[entry]),
                )
            )
    return Comparison(
        cells=len(shared),
        simulations=sum(tally.simulations for _, tally in shared),
        met_again=tuple(met_again),
        stopped=tuple(stopped),
    )


def _log1m(rate: float) -> float:
    """log(1 - rate), -inf for a rate of 1 (an entry met in every simulation)."""
    return math.log1p(-rate) if rate < 1.0 else -math.inf


__all__ = [
    "CELL_COLUMNS",
    "NEWS_BELOW",
    "NOT_ENOUGH",
    "NO_LONGER_MET",
    "RECORD",
    "Cell",
    "CellRecord",
    "Comparison",
    "MetRecord",
    "Stopped",
    "Tally",
    "compare",
    "observe",
    "read_record",
    "recorded",
    "write_record",
]
