"""The report's sections as plain data: numbers from :mod:`reports.tables`, words written from them.

:func:`build` turns the sweep rows plus what the orchestration found (counterexamples,
exhaustive verification, findings, provenance) into one JSON-able context: the templates
render it, ``report.json`` stores it, and the tests compare it with the rows. Figures are
added by :mod:`reports.document`; this module draws nothing and knows nothing of how the
rows, counterexamples or verifications were produced.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from checks import INVARIANTS
from checks.outcome_table import table_rows
from model.policy import FLAG_DOCS, PRESET_ALIASES, PRESET_DOCS
from reports import costs, curves, real_runtime, tables
from reports.answer import cell_text, interval, verdict
from reports.explained import explained_by_ranges
from reports.met_again import met_again_view
from reports.register import (
    explanations_view,
    named_counterexample,
    verification_rows,
    verification_summary,
)
from reports.stats import DASH, percent

INVARIANT_MEANING = {inv.name: getattr(inv, "meaning", "") for inv in INVARIANTS}

SECTIONS = (
    ("verdict", "The answer"),
    ("summary", "Summary: violations per policy and invariant"),
    ("decisions", "What each decision bought"),
    ("proposals", "Proposals"),
    ("cost", "Cost and liveness"),
    ("curves", "Curves"),
    ("counterexamples", "Minimal counterexamples"),
    ("findings", "Findings register"),
    ("real-runtime", "Checked against the real runtime"),
    ("coverage", "Fault coverage"),
    ("verification", "Exhaustive verification"),
    ("provenance", "How it was made"),
)
"""(anchor, heading) of every section, in order: the templates and the browser test use these."""


GLOSSARY = (
    ("head", "the current design (preset adr-141); head+<flag> is head with one proposal switched on"),
    ("invariant", "a safety property checked on every simulated history (hover a name for its meaning)"),
    ("rate [a-b%]", "share of simulations violating it, with the 95% Wilson interval for the true rate"),
    ("≤ x", "rule of three: none seen in n simulations, so the rate is at most 3/n with 95% confidence"),
    (
        "no case judged",
        "no simulation gave the invariant anything to judge (e.g. a fence check where no fence "
        "exists): it neither held nor failed, and is not counted as held",
    ),
    ("pp, paired", "percentage points; paired = both policies ran the same scenario, intensity and seed"),
    ("intensity", "fault probabilities scaled by this factor (0 = no random faults, 1 = as written)"),
    ("latency ratio", "tool latency as a multiple of the lease length (> 1: a call outlives its lease)"),
    ("F-…, NG-…", "a registered finding (a head violation no ADR records), a non-guarantee the spec records"),
    ("counterexample", "a violating simulation with its faults removed one by one while it still fails"),
)
"""(term, one-line meaning) shown under the answer, for a reader new to the harness."""


@dataclass(frozen=True)
class CounterexampleView:
    """One minimal counterexample, as the orchestration produced it."""

    invariant: str
    policy: str
    role: str
    """Why it is shown: 'head', 'first preset where it fails', or both."""
    scenario: str
    seed: int
    faults: tuple[str, ...]
    file: str
    """Path of the counterexample file relative to the report directory."""
    timeline: tuple[str, ...]
    shrink_note: str = ""
    runs: tuple[str, ...] = ()
    """The runs the violation's witness records belong to (the figure and text show only these)."""
    explanation: str = ""
    """The checker's one-line explanation of the violation, as the checker wrote it."""
    witness: tuple[int, ...] = ()
    """The checker's witness records (history indexes); the last is the violating event."""
    explanation_text: str = ""
    """The explanation for people: cited records as '#n (t s)', floats rounded (:func:`reports.wording.annotate`)."""
    markers: tuple[Mapping[str, Any], ...] = ()
    """Extra lane markers (fields of :class:`reports.lanes.LaneMarker`) beyond the witness and cited records
    (the causality curve's decisive moments among them)."""
    causality: Mapping[str, Any] | None = None
    """Its causality curve (``reports.causality.view``), None when not measured."""
    mechanism: str = ""
    """What its shrink kept: a finding or non-guarantee id, or 'unexplained: <witness shape>'."""
    met: int = 0
    """Simulations of its policy and grids whose rows name its mechanism (0: the rows do not say)."""
    grid: str = ""
    """The deployment-range grid it came from ('' = the library's fault ranges)."""


@dataclass(frozen=True)
class VerifyView:
    scenario: str
    policy: str
    bound: int
    schedules: int
    complete: bool
    verdict: str
    violated: tuple[str, ...]
    elapsed_s: float
    violations: tuple[Mapping[str, Any], ...] = ()
    """Per violated invariant: its counterexample's faults and what the register matched
    (``invariant``, ``faults``, ``explained_by``, ``label``, ``kind``); see :mod:`reports.verification`."""


@dataclass(frozen=True)
class FindingView:
    id: str
    invariant: str
    adr: str
    promise: str
    story: str
    reproduced: bool
    recognised: int
    """Violating simulations (of those examined) this finding's recogniser matched."""
    example: str
    """'scenario seed N' of the first recognised simulation, '' when none."""
    deployment_ranges: bool
    """Reachable only beyond the library's fault ranges, so a review at those ranges cannot see it."""
    reproduced_deployment: bool | None = None
    """Recognised in a deployment-range grid of this run (None: the run has no such grid)."""
    recognised_deployment: int = 0
    example_deployment: str = ""
    search: str = ""
    """The command that searches for it where the register met it (``explore --target``): what a reviewer
    runs to see a finding this review did not."""


@dataclass(frozen=True)
class Provenance:
    name: str
    versions: Mapping[str, str]
    commit: str
    config_toml: str
    seeds: int
    simulations: int
    wall_s: float
    cores: int
    workers: int
    command: str
    examined: int = 0
    """Violating simulations re-run to recognise findings."""
    extra: Mapping[str, str] = field(default_factory=dict)
    phases_s: Mapping[str, float] = field(default_factory=dict)
    """Wall seconds per phase of the run ('sweep', 'evidence', 'figures'), in the order they ran."""


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of a table as plain dicts (typed loosely: the tables' columns are documented)."""
    return [{str(k): v for k, v in r.items()} for r in table.to_dict(orient="records")]


def _num(value: float) -> float | None:
    return None if isinstance(value, float) and math.isnan(value) else value


def _summary(frame: pd.DataFrame, policies: Sequence[str]) -> dict[str, Any]:
    table = tables.summary(frame, policies)
    names = tables.invariant_names(frame)
    cells: dict[str, dict[str, Any]] = {name: {} for name in names}
    for r in _records(table):
        cells[r["invariant"]][r["policy"]] = {
            "violations": int(r["violations"]),
            "simulations": int(r["simulations"]),
            "unknown": int(r["unknown"]),
            "rate": float(r["rate"]),
            "lower": float(r["lower"]),
            "upper": float(r["upper"]),
            "judged": int(r["judged"]),
            "rule_of_three": _num(float(r["rule_of_three"])),
            "text": cell_text(
                int(r["violations"]), int(r["simulations"]), float(r["lower"]), float(r["upper"]), int(r["judged"])
            ),
        }
    anyv = tables.any_violated(frame)
    totals = {}
    for policy in policies:
        sel = frame["policy"] == policy
        k, n = int(anyv[sel].sum()), int(sel.sum())
        totals[policy] = {"violations": k, "simulations": n, "rate": k / n if n else 0.0}
    return {
        "policies": list(policies),
        "invariants": names,
        "meaning": {n: INVARIANT_MEANING.get(n, "") for n in names},
        "cells": cells,
        "any": totals,
    }


def _comparison(frame: pd.DataFrame, before: str, after: str, about: str) -> dict[str, Any]:
    table = tables.compare(frame, before, after)
    rows = []
    for r in _records(table):
        rows.append(
            {
                "invariant": r["invariant"],
                "pairs": int(r["pairs"]),
                "before_violations": int(r["before_violations"]),
                "after_violations": int(r["after_violations"]),
                "rate_before": float(r["rate_before"]),
                "rate_after": float(r["rate_after"]),
                "only_before": int(r["only_before"]),
                "only_after": int(r["only_after"]),
                "difference": float(r["difference"]),
                "lower": float(r["lower"]),
                "upper": float(r["upper"]),
                "made_hold": bool(r["made_hold"]),
                "broke": bool(r["broke"]),
                "text": _pp(r["difference"], r["lower"], r["upper"]),
            }
        )
    moved = [r for r in rows if r["before_violations"] or r["after_violations"]]
    return {
        "before": before,
        "after": after,
        "about": about,
        "pairs": rows[0]["pairs"] if rows else 0,
        "rows": moved,
        "unchanged_clean": [r["invariant"] for r in rows if not (r["before_violations"] or r["after_violations"])],
        "made_hold": [r["invariant"] for r in rows if r["made_hold"]],
        "significant": [r["invariant"] for r in rows if r["upper"] < 0 or r["lower"] > 0],
        "broke": [r["invariant"] for r in rows if r["broke"]],
        "_table": table,
    }


def _pp(difference: float, lower: float, upper: float) -> str:
    return f"{difference * 100:+.2f} pp [{lower * 100:+.2f}, {upper * 100:+.2f}]"


def _preset_about(frame: pd.DataFrame, policy: str) -> str:
    preset = str(frame.loc[frame["policy"] == policy, "preset"].iloc[0])
    return PRESET_DOCS.get(PRESET_ALIASES.get(preset, preset), "")


def _flags_about(frame: pd.DataFrame, policy: str) -> str:
    flags = str(frame.loc[frame["policy"] == policy, "flags"].iloc[0])
    names = [part.split("=")[0] for part in flags.split(",") if part]
    return " ".join(FLAG_DOCS.get(name, name) for name in names)


def _fmt(value: float | None, digits: int = 1) -> str:
    return DASH if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:,.{digits}f}"


def _cost(frame: pd.DataFrame, policies: Sequence[str]) -> dict[str, Any]:
    table = tables.cost(frame, policies)
    reasons = tables.dead_letter_reasons(frame)
    rows = []
    for record in _records(table):
        row = {k: _num(v) if isinstance(v, float) else v for k, v in record.items()}
        rate = row["completion_rate"]
        completion = percent(float(rate)) if rate is not None else DASH
        requeues = _fmt(row["requeues_per_run"], 3)
        low, high = row.get("completion_lower"), row.get("completion_upper")
        if rate is not None and low is not None and high is not None:
            completion += f" [{interval(float(low), min(1.0, float(high)))}]"
        low, high = row.get("requeues_lower"), row.get("requeues_upper")
        if row["requeues_per_run"] is not None and low is not None and high is not None:
            requeues += f" [{_fmt(low, 3)}{DASH}{_fmt(high, 3)}]"
        row["completion_text"], row["requeues_text"] = completion, requeues
        for key in ("settle_p50_s", "settle_p95_s", "settle_p99_s"):
            row[key + "_text"] = _fmt(row[key], 1)
        rows.append(row)
    return {"reasons": reasons, "rows": rows}


def _curve(frame: pd.DataFrame, grid: str, x: str, policies: Sequence[str]) -> dict[str, Any]:
    table = tables.curve(frame, grid, x, policies)
    points = sorted({float(v) for v in table[x]}) if not table.empty else []
    cells: dict[str, dict[str, str]] = {}
    for r in _records(table):
        cells.setdefault(str(r["policy"]), {})[f"{float(r[x]):g}"] = cell_text(
            int(r["violations"]), int(r["simulations"]), float(r["lower"]), float(r["upper"])
        )
    head = curves.head_label(frame, policies)
    mine = curves.by_invariant(frame, grid, x, head) if head is not None else pd.DataFrame()
    invariant_cells: dict[str, dict[str, str]] = {}
    for r in _records(mine):
        invariant_cells.setdefault(str(r["policy"]), {})[f"{float(r[x]):g}"] = cell_text(
            int(r["violations"]), int(r["simulations"]), float(r["lower"]), float(r["upper"])
        )
    return {
        "grid": grid,
        "x": x,
        "points": [f"{p:g}" for p in points],
        "records": _records(table),
        "cells": cells,
        "_table": table,
        "by_invariant": {"policy": head, "cells": invariant_cells, "drawn": curves.drawn(mine), "_table": mine},
    }


def _coverage(frame: pd.DataFrame, policies: Sequence[str]) -> dict[str, Any]:
    hits = tables.fault_hits(frame)
    totals = tables.fault_totals(frame)
    cov = tables.coverage_counts(frame, policies)
    return {
        "hits": {f: {r: int(hits.loc[f, r]) for r in hits.columns} for f in hits.index} if not hits.empty else {},
        "faults": {str(k): int(v) for k, v in totals.items()},
        "inert": [str(k) for k, v in totals.items() if int(v) == 0],
        "properties": {name: {p: int(cov.loc[name, p]) for p in [*policies, "all"]} for name in cov.index},
        "unreached": [str(name) for name in cov.index if int(cov.loc[name, "all"]) == 0],
        "simulations": len(frame),
        "_hits": hits,
    }


def _grid_about(main: pd.DataFrame) -> str:
    """'14 scenarios x fault intensity 0.5, 1, 2 x 6 seeds': what the primary grid holds."""
    if main.empty:
        return "no simulations"
    intensities = ", ".join(f"{float(v):g}" for v in sorted(main["intensity"].unique()))
    seeds = main["seed"].nunique()
    return f"{main['scenario'].nunique()} scenarios x fault intensity {intensities} x {seeds} seeds"


def build(
    frame: pd.DataFrame,
    *,
    policies: Sequence[str] | None,
    counterexamples: Sequence[CounterexampleView],
    verification: Sequence[VerifyView],
    findings: Sequence[FindingView],
    provenance: Provenance,
    explanations: Sequence[Mapping[str, Any]] = (),
    conformance: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole report as data. Keys starting with '_' hold DataFrames for the figures only."""
    rows = tables.with_defaults(frame)
    order = tables.policy_order(rows, policies)
    main = tables.primary(rows)
    main_policies = [p for p in order if p in set(main["policy"])]
    summary = _summary(main, main_policies)
    presets = tables.presets_in_order(main, main_policies)
    decisions = [_comparison(main, a, b, _preset_about(main, b)) for a, b in itertools.pairwise(presets)]
    proposals = [_comparison(main, a, b, _flags_about(main, b)) for a, b in tables.proposal_pairs(main, main_policies)]
    grid_name = str(main["grid"].iloc[0]) if not main.empty else ""
    verified = verification_rows([asdict(v) for v in verification])
    verdicts = [verdict(p, summary, main) for p in main_policies]
    head = curves.head_label(main, main_policies)
    return {
        "title": f"{provenance.name}: reliability report",
        "sections": [{"id": a, "heading": h} for a, h in SECTIONS],
        "glossary": [{"term": t, "meaning": m} for t, m in GLOSSARY],
        "outcome_table": table_rows(),
        "primary_grid": grid_name,
        "primary_simulations": len(main),
        "primary_about": _grid_about(main),
        "verdicts": verdicts,
        # the answer's sentences lead with the policy under review; the table keeps the grid's order
        "lead_verdicts": sorted(verdicts, key=lambda v: v["policy"] != head),
        "head_policy": head,
        "head_explained": explanations_view([e for e in explanations if e.get("ranges", "library") == "library"]),
        "explained_ranges": explained_by_ranges(explanations, rows),
        "summary": summary,
        "decisions": decisions,
        "proposals": proposals,
        "cost": {**(cost := _cost(main, main_policies)), "changes": costs.big_changes(cost["rows"], presets)},
        "curves": {
            "intensity": _curve(rows, "intensity", "intensity", order),
            "latency": _curve(rows, "latency", "latency_ratio", order),
        },
        "counterexamples": [named_counterexample(asdict(c)) for c in counterexamples],
        "findings": [asdict(f) for f in findings],
        "met_again": met_again_view(rows),
        "real_runtime": real_runtime.view(conformance),
        "coverage": _coverage(rows, order),
        "verification": verified,
        "verification_line": verification_summary(verified),
        "provenance": asdict(provenance),
    }


def public(context: Mapping[str, Any]) -> Any:
    """The context without the private DataFrames and figures: what ``report.json`` stores."""
    if isinstance(context, Mapping):
        return {k: public(v) for k, v in context.items() if not str(k).startswith("_") and k != "svg"}
    if isinstance(context, list | tuple):
        return [public(v) for v in context]
    return context
