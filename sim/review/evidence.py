"""The review's evidence as plain data: what each job found, in the views ``reports`` renders.

Shrunk counterexamples are written into ``OUT/counterexamples`` and replayed once for their
swim lanes; exhaustive verifications (each violation matched against the register), recognised findings and
the explanation of every invariant violated under ``head`` become dicts with the keys of ``reports.sections``' views
(``CounterexampleView``, ``VerifyView``, ``FindingView``, ``ExplanationView``). Pure functions
of the jobs' outcomes and the rows, except for writing the counterexample files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from checks.columns import INV, violated_mask
from checks.history import Op
from register.findings import FINDINGS
from register.nonguarantees import NON_GUARANTEES
from sim.explore.counterexample import Counterexample, write
from sim.explore.discovery import mechanism_tag
from sim.explore.entry_target import check_entry_target
from sim.review.jobs import RecogniseJob, ShrinkOutcome, VerifyOutcome
from sim.review.plan import HEAD, PRIMARY_GRID, canonical, head_label

FINDING_IDS = frozenset(f.id for f in FINDINGS)
_LABELS = {f.id: f"{f.id} {f.slug}" for f in FINDINGS} | {ng.id: f"{ng.id}, {ng.source}" for ng in NON_GUARANTEES}
"""What the report calls each registered finding and recorded non-guarantee."""


def counterexamples(
    outcomes: list[ShrinkOutcome], out: Path, curves: Sequence[dict[str, Any] | None] = ()
) -> tuple[list[dict[str, Any]], dict[int, list[Op]], list[Path]]:
    """Write each shrunk counterexample into ``OUT/counterexamples`` as
    ``<policy>--<invariant>--<mechanism>[--<grid>].toml`` (the mechanism its shrink kept: a register id
    or ``unexplained-<hash>``, :func:`sim.explore.discovery.mechanism_tag`) and replay it for its
    pictures; ``curves`` (by outcome) are their causality curves (``causality``: None when not measured)."""
    views: list[dict[str, Any]] = []
    histories: dict[int, list[Op]] = {}
    files: list[Path] = []
    names: set[str] = set()
    for i, outcome in enumerate(outcomes):
        job, cx = outcome.job, outcome.counterexample
        if cx is None:
            continue
        grid = f"--{_safe(job.grid)}" if job.grid else ""
        stem = f"{_safe(job.label)}--{job.invariant}--{mechanism_tag(cx.mechanism)}{grid}"
        name = f"{stem}.toml"
        for n in range(2, len(outcomes) + 2):  # two planned rows whose shrinks kept one mechanism
            if name not in names:
                break
            name = f"{stem}-{n}.toml"
        names.add(name)
        path = write(cx, out / "counterexamples" / name)
        files.append(path)
        role = job.role or ("head" if _is_head(cx) else "first preset where it fails")
        replay = cx.run()
        histories[len(views)] = replay.history
        verdict = replay.verdicts[job.invariant]
        runs = sorted({replay.history[w].run for w in verdict.witness if replay.history[w].run})
        views.append(
            {
                "invariant": job.invariant,
                "policy": job.label,
                "role": role,
                "scenario": cx.scenario,
                "seed": cx.seed,
                "faults": [f.text() for f in cx.faults],
                "file": str(Path("counterexamples") / name),
                "shrink_note": _shrink_note(cx, replay.digest),
                "runs": runs,
                "explanation": verdict.explanation,
                "mechanism": cx.mechanism,
                "met": job.met,
                "grid": job.grid,
                "witness": list(verdict.witness),
                "causality": curves[i] if i < len(curves) else None,
            }
        )
    return views, histories, files


def _is_head(cx: Counterexample) -> bool:
    return canonical(cx.policy) == HEAD and not cx.flags


def _shrink_note(cx: Counterexample, digest: str) -> str:
    same = "replays to the same history digest" if digest == cx.digest else "REPLAY DIVERGED"
    return f"Minimal after delta debugging; {same} ({cx.digest[:12]})."


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.+=" else "_" for c in label)


def verify_view(v: VerifyOutcome) -> dict[str, Any]:
    """One exhaustive verification, with each violation's counterexample matched against the register."""
    return {
        "scenario": v.job.scenario,
        "policy": "head" if v.job.preset == HEAD else v.job.preset,
        "bound": v.job.bound,
        "schedules": v.schedules,
        "complete": v.complete,
        "verdict": v.sentence,
        "violated": list(v.violated),
        "elapsed_s": v.elapsed_s,
        "violations": [
            {
                "invariant": name,
                "faults": list(faults),
                "explained_by": key,
                "label": _LABELS.get(key, key),
                "kind": "" if not key else "finding" if key in FINDING_IDS else "non-guarantee",
            }
            for name, key, faults in v.explained
        ],
    }


def findings(
    jobs: list[RecogniseJob], recognised: list[list[tuple[str, str]]], deployment: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Per registered finding: whether a violating simulation of the primary grid was recognised as it
    (reproduced), and, when the review has deployment-range grids, whether one of theirs was."""
    counts: dict[tuple[str, bool], int] = {}
    example: dict[tuple[str, bool], str] = {}
    for job, hits in zip(jobs, recognised, strict=True):
        wide = job.grid in deployment
        for finding_id in sorted({fid for _, fid in hits if fid in FINDING_IDS}):
            key = (finding_id, wide)
            counts[key] = counts.get(key, 0) + 1
            example.setdefault(key, f"{Path(job.cell.scenario_ref).stem} seed {job.cell.seed} x{job.cell.intensity:g}")
    return [
        {
            "id": f.id,
            "invariant": f.invariant,
            "adr": f.adr,
            "promise": f.promise,
            "story": f.story,
            "reproduced": (f.id, False) in counts,
            "deployment_ranges": f.deployment_ranges,
            "recognised": counts.get((f.id, False), 0),
            "example": example.get((f.id, False), ""),
            "reproduced_deployment": ((f.id, True) in counts) if deployment else None,
            "recognised_deployment": counts.get((f.id, True), 0),
            "example_deployment": example.get((f.id, True), ""),
            "search": f"leaselab explore {check_entry_target(f.id).setup} --target {f.id}",
        }
        for f in FINDINGS
    ]


def explanations(
    frame: pd.DataFrame,
    policies: Sequence[str],
    jobs: Sequence[RecogniseJob],
    recognised: list[list[tuple[str, str]]],
    grids: Sequence[str] = (PRIMARY_GRID,),
) -> list[dict[str, Any]]:
    """Per explained grid and invariant violated under head there: its violating simulations, how many
    were re-run and examined, and what explained them (finding or non-guarantee id -> simulations,
    '' = nothing). The first grid is the primary one (the library's fault ranges); the others are at
    deployment ranges. A pure function of the rows and the recognisers' answers."""
    head = head_label(frame, policies)
    if head is None:
        return []
    labels = _LABELS
    out = []
    for grid in grids:
        mine = frame[(frame["policy"] == head) & (frame["grid"] == grid)]
        for column in [c for c in frame.columns if c.startswith(INV)]:
            name = column.removeprefix(INV)
            violations = int(violated_mask(mine[column]).sum())
            if not violations:
                continue
            by: dict[str, int] = {}
            for job, hits in zip(jobs, recognised, strict=True):
                if (job.grid or PRIMARY_GRID) != grid:
                    continue
                for invariant, explained_by in hits:
                    if invariant == name:
                        by[explained_by] = by.get(explained_by, 0) + 1
            out.append(
                {
                    "invariant": name,
                    "policy": head,
                    "grid": grid,
                    "ranges": "library" if grid == grids[0] else "deployment",
                    "violations": violations,
                    "examined": sum(by.values()),
                    "unexplained": by.pop("", 0),
                    "explained": [
                        {
                            "id": key,
                            "label": labels.get(key, key),
                            "kind": "finding" if key in FINDING_IDS else "non-guarantee",
                            "simulations": count,
                        }
                        for key, count in sorted(by.items())
                    ],
                }
            )
    return out
