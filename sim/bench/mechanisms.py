"""Search benchmark by mechanism: simulations and seconds to the first meeting of each register entry.

For each registered finding and recorded non-guarantee (:mod:`register.findings`,
:mod:`register.nonguarantees`) and each origin (the scenario of the finding's counterexample, and
``default``; a non-guarantee has no counterexample of its own, so ``default`` only), the swarm and the
guided search run once per seed under ``head``, with the finding's fault families (every family for a
non-guarantee), at deployment ranges when the finding needs them. A search counts as having found the
entry at the first simulation whose history shows that mechanism (:class:`sim.explore.discovery.Discovery`
with ``stop_at_first`` on the entry's id; only the entry's invariants are named, so other violations
cost nothing); nothing is shrunk. A search that does not meet it within ``max_simulations`` or
``budget_s`` counts as that (censored); a median over censored runs is a lower bound (``>``), and the
ratio swarm / guided built from one is a bound too (:class:`sim.bench.stats.Speedup`).

Counts of simulations are deterministic (a function of the seed); seconds depend on the machine and
its load, which the document records. This module may not know the CLI.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from register.findings import FINDINGS
from register.nonguarantees import NON_GUARANTEES
from scenarios.families import FAMILIES
from scenarios.loader import load_scenario
from sim.bench.stats import Median, Speedup, censored_median
from sim.explore.base import Budget, Clock, Target
from sim.explore.counterexample import read
from sim.explore.discovery import Discovery
from sim.explore.entry_target import EntryTarget
from sim.explore.guided import guided_search
from sim.explore.swarm import search

SEARCHERS = {"swarm": search, "guided": guided_search}
RATIO_TARGET = 10.0
RAREST = ("F-15", "F-16", "F-18")
"""The entries the guided explorer is meant to reach at least :data:`RATIO_TARGET` times sooner."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A register entry as the benchmark searches for it."""

    id: str
    invariants: tuple[str, ...]
    families: tuple[str, ...]
    deployment: bool
    scenario: str | None
    """The scenario of its counterexample (None for a non-guarantee)."""


def entries(only: Sequence[str] = ()) -> list[Entry]:
    found = [
        Entry(f.id, f.invariants, f.families, f.deployment_ranges, read(f.path).scenario)
        for f in FINDINGS
        if not only or f.id in only
    ]
    found += [Entry(n.id, n.invariants, FAMILIES, False, None) for n in NON_GUARANTEES if not only or n.id in only]
    return found


def target_of(entry: Entry, origin: str) -> Target:
    name = entry.scenario if origin == "own" and entry.scenario else "default"
    scenario = load_scenario(name)
    if entry.deployment:
        scenario = scenario.at_deployment_ranges()
    return Target(name, "head", {}, tuple(entry.families), scenario)


def entry_target_of(entry: Entry) -> EntryTarget:
    """The entry as ``explore --target`` names it: one budget for the bench and the CLI."""
    return EntryTarget(entry.id, entry.invariants, entry.families, entry.deployment, entry.scenario or "default")


@dataclass(frozen=True, slots=True)
class Run:
    seed: int
    found: bool
    simulations: int
    seconds: float


def one_search(entry: Entry, origin: str, explorer: str, seed: int, max_simulations: int, budget_s: float) -> Run:
    """One search of ``explorer`` for ``entry`` from ``origin``, stopped at its first meeting."""
    found = Discovery()
    budget = entry_target_of(entry).budget(Budget(seconds=budget_s, simulations=max_simulations, seed=seed))
    clock = Clock()
    _, simulations = SEARCHERS[explorer](target_of(entry, origin), budget, clock, None, None, found)
    met = found.met.get(entry.id)
    if met is None:
        return Run(seed, False, simulations, clock.elapsed())
    return Run(seed, True, met.simulations, met.seconds)


@dataclass(frozen=True, slots=True)
class Cell:
    entry: str
    origin: str
    scenario: str
    runs: dict[str, tuple[Run, ...]]

    def median(self, explorer: str, what: str) -> Median:
        return censored_median(
            [(float(r.simulations) if what == "simulations" else r.seconds, r.found) for r in self.runs[explorer]]
        )

    def ratio(self, what: str) -> Speedup:
        return Speedup.of(self.median("swarm", what), self.median("guided", what))

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"entry": self.entry, "origin": self.origin, "scenario": self.scenario}
        for explorer, runs in self.runs.items():
            sims, secs = self.median(explorer, "simulations"), self.median(explorer, "seconds")
            doc[explorer] = {
                "found": sum(r.found for r in runs),
                "seeds": len(runs),
                "median_simulations": sims.value,
                "median_simulations_censored": sims.censored,
                "median_s": round(secs.value, 3),
                "median_s_censored": secs.censored,
                "runs": [[r.seed, r.found, r.simulations, round(r.seconds, 3)] for r in runs],
            }
        if set(self.runs) >= {"swarm", "guided"}:
            for what in ("simulations", "seconds"):
                speedup = self.ratio(what)
                doc[f"ratio_{what}"] = speedup.json_ratio()
                doc[f"ratio_{what}_bound"] = speedup.bound
        return doc


def bench(
    *,
    seeds: int,
    max_simulations: int,
    budget_s: float,
    only: Sequence[str] = (),
    origins: Sequence[str] = ("own", "default"),
    explorers: Sequence[str] = ("swarm", "guided"),
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every cell (entry x origin), every explorer, ``seeds`` seeds each (see the module)."""
    started, load = time.perf_counter(), os.getloadavg()
    cells: list[Cell] = []
    for entry in entries(only):
        for origin in origins:
            if origin == "own" and entry.scenario is None:
                continue
            if origin == "default" and entry.scenario == "default" and "own" in origins:
                continue  # its own scenario is default: one cell
            runs: dict[str, tuple[Run, ...]] = {}
            for explorer in explorers:
                done = []
                for seed in range(seeds):
                    run = one_search(entry, origin, explorer, seed, max_simulations, budget_s)
                    done.append(run)
                    if progress is not None:
                        verdict = f"at {run.simulations} simulations" if run.found else "not found"
                        progress(f"{entry.id} {origin} {explorer} seed {seed}: {verdict}, {run.seconds:.1f} s")
                runs[explorer] = tuple(done)
            cells.append(Cell(entry.id, origin, target_of(entry, origin).scenario_ref, runs))
    return {
        "seeds": seeds,
        "max_simulations": max_simulations,
        "budget_s": budget_s,
        "load_average_at_start": [round(x, 2) for x in load],
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "elapsed_s": round(time.perf_counter() - started, 1),
        "cells": [c.document() for c in cells],
        "rarest_at_least_10x": {
            c.entry: c.ratio("simulations").at_least(RATIO_TARGET)
            for c in cells
            if c.entry in RAREST and c.origin == "own"
        }
        if set(explorers) >= {"swarm", "guided"}
        else {},
    }


def _median_text(doc: dict[str, Any], key: str, digits: int = 0) -> str:
    value = doc[f"median_{key}"]
    shown = f"{value:,.{digits}f}"
    return (">" + shown) if doc[f"median_{key}_censored"] else shown


def table(document: dict[str, Any]) -> str:
    """The Markdown table of a :func:`bench` document."""
    lines = [
        "| entry | origin | swarm simulations | guided simulations | ratio | swarm s | guided s | ratio (s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for cell in document["cells"]:
        s, g = cell.get("swarm"), cell.get("guided")
        if s is None or g is None:
            continue
        ratio = cell.get("ratio_simulations")
        ratio_s = cell.get("ratio_seconds")
        bound = {"upper": "<", "lower": ">", "unknown": "?"}.get(cell.get("ratio_simulations_bound", ""), "")
        bound_s = {"upper": "<", "lower": ">", "unknown": "?"}.get(cell.get("ratio_seconds_bound", ""), "")
        lines.append(
            f"| {cell['entry']} | {cell['origin']} ({cell['scenario']}) "
            f"| {_median_text(s, 'simulations')} ({s['found']}/{s['seeds']}) "
            f"| {_median_text(g, 'simulations')} ({g['found']}/{g['seeds']}) "
            f"| {bound}{ratio if ratio is not None else '?'} "
            f"| {_median_text(s, 's', 1)} | {_median_text(g, 's', 1)} "
            f"| {bound_s}{ratio_s if ratio_s is not None else '?'} |"
        )
    return "\n".join(lines)


__all__ = ["RAREST", "Entry", "bench", "entries", "one_search", "table"]
