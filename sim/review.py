"""The ADR review: run a sweep configuration, gather the evidence, write the reliability report.

Steps: (1) run the sweep (``sim.sweep.run_sweep``; shards under ``OUT/shards`` survive an
interrupted run); (2) in the same executor, shrink one violating simulation per violated
invariant under ``head`` and under the first preset where the invariant fails, re-run
violating ``head`` simulations to recognise registered findings, and verify the small
scenarios exhaustively for ``head`` and each preset; (3) write the counterexample files into
``OUT/counterexamples`` and return rows and evidence as plain data (:class:`Review`), which
:mod:`reports` renders (the face, ``leaselab report``, joins the two: sim never imports reports).

Everything chosen here is a pure function of the rows (which row to shrink, which to
examine), so the same command on the same commit writes the same numbers and files; only
the times differ. Knows the sweep, the explorers and the findings; renders nothing itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from model.history import Op
from model.policy import PRESET_ALIASES, PRESETS
from scenarios.findings import FINDINGS, NON_GUARANTEES
from scenarios.loader import load_scenario
from sim.explore.counterexample import Counterexample, write
from sim.review_jobs import (
    Cell,
    RecogniseJob,
    ShrinkJob,
    ShrinkOutcome,
    VerifyJob,
    VerifyOutcome,
    parse_flags,
    run_recognise,
    run_shrink,
    run_verify,
)
from sim.sweep import run_sweep
from sim.sweep_config import SweepConfig
from sim.sweep_dir import versions
from sim.sweep_rows import ROW_KEY
from sim.toml_out import dumps as toml_dumps

VERIFY_SCENARIOS = ("single_run", "happy_path", "audit_failure_after_write", "worker_crash_mid_write")
"""Small library scenarios (one or two runs) whose bound-1 enumeration takes well under a second."""
HEAD = "adr-141"

Progress = Callable[[str, int, int], None]
"""progress(phase, done, total): phase 'simulating' counts simulations, 'evidence' counts jobs."""


@dataclass(frozen=True)
class ReviewOptions:
    out: Path
    seeds: int | None = None
    """Seeds per cell for every grid (None = as the configuration says)."""
    workers: int = 1
    verify_scenarios: tuple[str, ...] = VERIFY_SCENARIOS
    verify_bound: int = 1
    shrink_tests: int = 120
    examine_per_invariant: int = 1000
    """Violating head simulations of the primary grid re-run per invariant to explain (round-robin over scenarios)."""
    command: str = "leaselab report"


PRIMARY_GRID = "main"


@dataclass
class Review:
    """Rows and evidence, as plain data for :func:`reports.document.write_review` (same keys as
    its views: ``reports.sections.CounterexampleView``, ``VerifyView``, ``FindingView``, ``Provenance``)."""

    out: Path
    frame: pd.DataFrame
    policies: list[str]
    counterexamples: list[dict[str, Any]]
    histories: dict[int, list[Op]]
    verification: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    provenance: dict[str, Any]
    started: float
    explanations: list[dict[str, Any]] = field(default_factory=list)
    """Per invariant violated under head: what explains its violations (``reports.sections.ExplanationView``)."""
    files: list[Path] = field(default_factory=list)

    @property
    def simulations(self) -> int:
        return len(self.frame)

    def elapsed_s(self) -> float:
        return time.perf_counter() - self.started


def with_seeds(config: SweepConfig, seeds: int | None) -> SweepConfig:
    """The configuration with ``seeds`` per cell in every grid (grid overrides dropped)."""
    if seeds is None:
        return config
    grids = [g.model_copy(update={"seeds": None}) for g in config.grid]
    return config.model_copy(update={"seeds": seeds, "grid": grids})


def run_review(
    config: SweepConfig, options: ReviewOptions, executor: Executor, progress: Progress | None = None
) -> Review:
    """Sweep, then gather the evidence; the wall clock starts here (``Review.started``)."""
    started = time.perf_counter()
    config = with_seeds(config, options.seeds)
    out = options.out
    tell = progress or (lambda phase, done, total: None)
    total_sims = sum(t.seed_count for t in config.tasks())
    fresh_shards(out / "shards", config)
    done = run_sweep(
        config,
        out / "shards",
        executor=executor,
        on_task_done=lambda p: tell("simulating", p.simulations, total_sims),
    )
    frame = read_shards(done.paths)
    policies = [p.label for p in config.policy]
    refs = scenario_refs(config)
    grids = as_written_grids(config)
    shrink_jobs = plan_shrinks(frame, policies, refs, options.shrink_tests, grids)
    recognise_jobs = plan_recognition(frame, policies, refs, options.examine_per_invariant, grids)
    verify_jobs = plan_verification(options.verify_scenarios, options.verify_bound)
    shrunk, recognised, verified = _run_jobs(executor, shrink_jobs, recognise_jobs, verify_jobs, tell)
    views, histories, files = _counterexamples(shrunk, out)
    return Review(
        out=out,
        frame=frame,
        policies=policies,
        counterexamples=views,
        histories=histories,
        verification=[_verify_view(v) for v in verified],
        findings=_findings(recognise_jobs, recognised),
        explanations=_explanations(frame, policies, recognised),
        provenance=_provenance(config, options, len(frame), time.perf_counter() - started, len(recognise_jobs)),
        started=started,
        files=files,
    )


STAMP = "review-stamp.json"


def fresh_shards(shard_dir: Path, config: SweepConfig) -> None:
    """Keep the shards of an interrupted run only when they came from the same code and configuration.

    Shard names identify a cell, not the code that computed it: after a change of commit (or with
    uncommitted changes) old shards could silently stand for new code, so they are deleted first.
    """
    commit = git_commit()
    stamp = json.dumps(
        {"commit": commit, "config": config.fingerprint(), "versions": versions(VERSIONED)}, sort_keys=True
    )
    path = shard_dir / STAMP
    reusable = not commit.endswith("+dirty") and commit != "unknown"
    if path.exists() and reusable and path.read_text(encoding="utf-8") == stamp:
        return
    if shard_dir.exists():
        for shard in shard_dir.glob("*.parquet"):
            shard.unlink()
    shard_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(stamp, encoding="utf-8")


def read_shards(paths: Sequence[Path]) -> pd.DataFrame:
    """Every shard's rows in one frame, in a fixed order. Arrow tables are joined before one conversion
    to pandas (columns a shard lacks become nulls): converting thousands of small shards one by one cost
    about 7 ms each, a serial step that outgrew the evidence phase at 80 seeds per cell."""
    tables = [pq.ParquetFile(path).read() for path in sorted(paths)]
    return _sorted(pa.concat_tables(tables, promote_options="default").to_pandas())


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in a fixed order (shards complete in any order)."""
    return frame.sort_values(list(ROW_KEY), kind="stable").reset_index(drop=True)


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


def _cell(row: pd.Series, refs: dict[str, str]) -> Cell:
    return Cell(
        refs.get(str(row["scenario"]), str(row["scenario"])),
        str(row["preset"]),
        parse_flags(str(row["flags"])),
        float(row["intensity"]),
        int(row["seed"]),
        str(row["digest"]),
    )


def _violators(frame: pd.DataFrame, policy: str, invariant: str, grids: set[str]) -> pd.DataFrame:
    """Rows of ``policy`` violating ``invariant`` in as-written grids: the primary grid first (the one the
    summary counts), fewest faults first (they shrink fastest), then by scenario, intensity and seed."""
    rows = frame[(frame["policy"] == policy) & (frame[f"inv.{invariant}"] == "false") & frame["grid"].isin(grids)]
    faults = rows[[c for c in rows.columns if c.startswith("fault.")]].sum(axis=1)
    rows = rows.assign(_faults=faults, _other_grid=rows["grid"] != PRIMARY_GRID)
    return rows.sort_values(["_other_grid", "_faults", "grid", "scenario", "intensity", "seed"], kind="stable")


def _canonical(preset: str) -> str:
    return PRESET_ALIASES.get(preset, preset)


def presets_in_order(frame: pd.DataFrame, policies: Sequence[str]) -> list[str]:
    """The labels of plain presets (no flags) that have rows, in ADR order."""
    order = list(PRESETS)
    found = []
    for label in policies:
        rows = frame[frame["policy"] == label]
        if rows.empty or str(rows["flags"].iloc[0]):
            continue
        preset = _canonical(str(rows["preset"].iloc[0]))
        found.append((order.index(preset) if preset in order else len(order), label))
    return [label for _, label in sorted(found)]


def head_label(frame: pd.DataFrame, policies: Sequence[str]) -> str | None:
    for label in policies:
        rows = frame[frame["policy"] == label]
        if not rows.empty and _canonical(str(rows["preset"].iloc[0])) == HEAD and not str(rows["flags"].iloc[0]):
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
        first = next((p for p in presets if not _violators(frame, p, name, grids).empty), None)
        if first is not None:
            chosen.append(first)
        if head is not None and head not in chosen and not _violators(frame, head, name, grids).empty:
            chosen.append(head)
        for label in chosen:
            row = _violators(frame, label, name, grids).iloc[0]
            jobs.append(ShrinkJob(_cell(row, refs), name, label, max_tests))
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
        rows = _violators(frame, head, name, {PRIMARY_GRID})
        by_scenario = [group for _, group in rows.groupby("scenario", sort=True)]
        taken = 0
        depth = 0
        while taken < per_invariant and any(depth < len(g) for g in by_scenario):
            for group in by_scenario:
                if depth < len(group) and taken < per_invariant:
                    row = group.iloc[depth]
                    key = (str(row["scenario"]), int(row["seed"]), float(row["intensity"]), str(row["grid"]))
                    if key not in picked:
                        picked[key] = set()
                        order.append(key)
                    picked[key].add(name)
                    taken += 1
            depth += 1
    jobs = []
    head_rows = frame[frame["policy"] == head]
    for key in order:
        scenario, seed, intensity, grid = key
        match = head_rows[
            (head_rows["scenario"] == scenario)
            & (head_rows["seed"] == seed)
            & (head_rows["intensity"] == intensity)
            & (head_rows["grid"] == grid)
        ]
        jobs.append(RecogniseJob(_cell(match.iloc[0], refs), tuple(sorted(picked[key]))))
    return jobs


def plan_verification(scenarios: Sequence[str], bound: int) -> list[VerifyJob]:
    return [VerifyJob(s, preset, bound) for s in scenarios for preset in PRESETS]


def _run_jobs(
    executor: Executor,
    shrinks: list[ShrinkJob],
    recognitions: list[RecogniseJob],
    verifications: list[VerifyJob],
    tell: Progress,
) -> tuple[list[ShrinkOutcome], list[list[tuple[str, str]]], list[VerifyOutcome]]:
    """Submit every evidence job at once (they are independent); collect in submission order."""
    futures: list[Future[Any]] = []
    futures += [executor.submit(run_shrink, job) for job in shrinks]
    futures += [executor.submit(run_recognise, job) for job in recognitions]
    futures += [executor.submit(run_verify, job) for job in verifications]
    total = len(futures)
    results = []
    for i, future in enumerate(futures):
        results.append(future.result())
        tell("evidence", i + 1, total)
    a, b = len(shrinks), len(shrinks) + len(recognitions)
    return results[:a], results[a:b], results[b:]


def _counterexamples(
    outcomes: list[ShrinkOutcome], out: Path
) -> tuple[list[dict[str, Any]], dict[int, list[Op]], list[Path]]:
    """Write each shrunk counterexample into ``OUT/counterexamples`` and replay it for its pictures."""
    views: list[dict[str, Any]] = []
    histories: dict[int, list[Op]] = {}
    files: list[Path] = []
    roles: dict[str, list[str]] = {}
    for outcome in outcomes:
        roles.setdefault(outcome.job.invariant, []).append(outcome.job.label)
    for outcome in outcomes:
        job, cx = outcome.job, outcome.counterexample
        if cx is None:
            continue
        name = f"{_safe(job.label)}--{job.invariant}.toml"
        path = write(cx, out / "counterexamples" / name)
        files.append(path)
        labels = roles[job.invariant]
        role = "first preset where it fails" if job.label == labels[0] else "head"
        if len(labels) == 1 and job.label == labels[0] and _is_head(cx):
            role = "head, and the first preset where it fails"
        replay = cx.run()
        histories[len(views)] = replay.history
        verdict = replay.verdicts[job.invariant]
        runs = sorted({replay.history[i].run for i in verdict.witness if replay.history[i].run})
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
            }
        )
    return views, histories, files


def _is_head(cx: Counterexample) -> bool:
    return _canonical(cx.policy) == HEAD and not cx.flags


def _shrink_note(cx: Counterexample, digest: str) -> str:
    same = "replays to the same history digest" if digest == cx.digest else "REPLAY DIVERGED"
    return f"Minimal after delta debugging; {same} ({cx.digest[:12]})."


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.+=" else "_" for c in label)


def _verify_view(v: VerifyOutcome) -> dict[str, Any]:
    return {
        "scenario": v.job.scenario,
        "policy": "head" if v.job.preset == HEAD else v.job.preset,
        "bound": v.job.bound,
        "schedules": v.schedules,
        "complete": v.complete,
        "verdict": v.sentence,
        "violated": list(v.violated),
        "elapsed_s": v.elapsed_s,
    }


def _findings(jobs: list[RecogniseJob], recognised: list[list[tuple[str, str]]]) -> list[dict[str, Any]]:
    counts: dict[str, int] = {}
    example: dict[str, str] = {}
    for job, hits in zip(jobs, recognised, strict=True):
        for finding_id in sorted({fid for _, fid in hits if fid in FINDING_IDS}):
            counts[finding_id] = counts.get(finding_id, 0) + 1
            example.setdefault(
                finding_id, f"{Path(job.cell.scenario_ref).stem} seed {job.cell.seed} x{job.cell.intensity:g}"
            )
    return [
        {
            "id": f.id,
            "invariant": f.invariant,
            "adr": f.adr,
            "promise": f.promise,
            "story": f.story,
            "reproduced": f.id in counts,
            "deployment_ranges": f.deployment_ranges,
            "recognised": counts.get(f.id, 0),
            "example": example.get(f.id, ""),
        }
        for f in FINDINGS
    ]


FINDING_IDS = frozenset(f.id for f in FINDINGS)


def _explanations(
    frame: pd.DataFrame, policies: Sequence[str], recognised: list[list[tuple[str, str]]]
) -> list[dict[str, Any]]:
    """Per invariant violated under head in the primary grid: its violating simulations, how many were
    re-run and examined, and what explained them (finding or non-guarantee id -> simulations, '' = nothing).
    A pure function of the rows and the recognisers' answers."""
    head = head_label(frame, policies)
    if head is None:
        return []
    mine = frame[(frame["policy"] == head) & (frame["grid"] == PRIMARY_GRID)]
    labels = {f.id: f"{f.id} {f.slug}" for f in FINDINGS} | {ng.id: f"{ng.id}, {ng.source}" for ng in NON_GUARANTEES}
    out = []
    for column in [c for c in frame.columns if c.startswith("inv.")]:
        name = column.removeprefix("inv.")
        violations = int((mine[column] == "false").sum())
        if not violations:
            continue
        by: dict[str, int] = {}
        for hits in recognised:
            for invariant, explained_by in hits:
                if invariant == name:
                    by[explained_by] = by.get(explained_by, 0) + 1
        out.append(
            {
                "invariant": name,
                "policy": head,
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


VERSIONED = ("leaselab", "simpy", "pandas", "numpy", "pyarrow", "matplotlib", "jinja2", "pydantic", "hypothesis")
"""The packages whose versions the report records (a sweep directory records fewer)."""


def git_commit(where: Path | None = None) -> str:
    """The checkout's commit ('+dirty' when it has uncommitted changes), or 'unknown' outside git."""
    cwd = where or Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def config_toml(config: SweepConfig) -> str:
    """The effective configuration as TOML (after ``--seeds``), as the report records it."""
    return toml_dumps(config.model_dump(mode="json"), drop_empty=True)


def _provenance(
    config: SweepConfig, options: ReviewOptions, simulations: int, wall_s: float, examined: int
) -> dict[str, Any]:
    return {
        "name": config.name,
        "versions": versions(VERSIONED),
        "commit": git_commit(),
        "config_toml": config_toml(config),
        "seeds": config.seeds,
        "simulations": simulations,
        "wall_s": wall_s,
        "cores": os.cpu_count() or 1,
        "workers": options.workers,
        "command": options.command,
        "examined": examined,
        "extra": {
            "exhaustive bound": str(options.verify_bound),
            "shrink budget": f"{options.shrink_tests} simulations",
        },
    }
