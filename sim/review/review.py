"""The ADR review: run a sweep configuration, gather the evidence, write the reliability report.

Steps: (1) run the sweep (``sim.sweep.engine.run_sweep``; shards under ``OUT/shards`` survive an
interrupted run); (2) in the same executor, shrink one violating simulation per violated
invariant under ``head`` and under the first preset where the invariant fails, re-run
violating ``head`` simulations to recognise registered findings, and verify the small
scenarios exhaustively for ``head`` and each preset; (3) write the counterexample files into
``OUT/counterexamples`` and return rows and evidence as plain data (:class:`Review`), which
:mod:`reports` renders (the face, ``leaselab report``, joins the two: sim never imports reports).

Everything chosen is a pure function of the rows (:mod:`sim.review.plan`: which row to shrink,
which to examine), so the same command on the same commit writes the same numbers and files;
only the times differ. The evidence becomes views in :mod:`sim.review.evidence`, the provenance
in :mod:`sim.review.provenance`. Knows the sweep and the evidence jobs; renders nothing itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from model.history import Op
from sim.review.evidence import counterexamples, explanations, findings, verify_view
from sim.review.jobs import (
    RecogniseJob,
    ShrinkJob,
    ShrinkOutcome,
    VerifyJob,
    VerifyOutcome,
    run_recognise,
    run_shrink,
    run_verify,
)
from sim.review.plan import as_written_grids, plan_recognition, plan_shrinks, plan_verification, scenario_refs
from sim.review.provenance import fresh_shards, provenance
from sim.sweep.config import SweepConfig
from sim.sweep.engine import SweepProgress, run_sweep
from sim.sweep.rows import ROW_KEY

VERIFY_SCENARIOS = ("single_run", "happy_path", "audit_failure_after_write", "worker_crash_mid_write")
"""Small library scenarios (one or two runs) whose bound-1 enumeration takes well under a second."""
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
    early = _EarlyReader()

    def task_done(progress: SweepProgress) -> None:
        early.read_new(progress.paths)
        tell("simulating", progress.simulations, total_sims)

    done = run_sweep(config, out / "shards", executor=executor, on_task_done=task_done)
    frame = read_shards(done.paths, early.tables)
    swept = time.perf_counter()
    policies = [p.label for p in config.policy]
    refs = scenario_refs(config)
    grids = as_written_grids(config)
    shrink_jobs = plan_shrinks(frame, policies, refs, options.shrink_tests, grids)
    recognise_jobs = plan_recognition(frame, policies, refs, options.examine_per_invariant, grids)
    verify_jobs = plan_verification(options.verify_scenarios, options.verify_bound)
    shrunk, recognised, verified = _run_jobs(executor, shrink_jobs, recognise_jobs, verify_jobs, tell)
    views, histories, files = counterexamples(shrunk, out)
    phases_s = {"sweep": swept - started, "evidence": time.perf_counter() - swept}
    return Review(
        out=out,
        frame=frame,
        policies=policies,
        counterexamples=views,
        histories=histories,
        verification=[verify_view(v) for v in verified],
        findings=findings(recognise_jobs, recognised),
        explanations=explanations(frame, policies, recognised),
        provenance=provenance(
            config, options, len(frame), time.perf_counter() - started, len(recognise_jobs), phases_s
        ),
        started=started,
        files=files,
    )


def read_shards(paths: Sequence[Path], already: Mapping[Path, pa.Table] | None = None) -> pd.DataFrame:
    """Every shard's rows in one frame, in a fixed order. Arrow tables are joined before one conversion
    to pandas (columns a shard lacks become nulls): converting thousands of small shards one by one cost
    about 7 ms each, a serial step that outgrew the evidence phase at 80 seeds per cell. ``already``
    holds shards read while the sweep ran (see :class:`_EarlyReader`); the rest are read here."""
    known = already or {}
    tables = [known[path] if path in known else pq.ParquetFile(path).read() for path in sorted(paths)]
    return _sorted(pa.concat_tables(tables, promote_options="default").to_pandas())


class _EarlyReader:
    """Reads each shard as soon as the sweep has written it: the coordinator waits on the workers
    during the sweep, so reading there costs no wall time, while reading 714 shards after it was
    a serial step of 2-4 s at 100 seeds per cell."""

    def __init__(self) -> None:
        self.tables: dict[Path, pa.Table] = {}
        self._seen = 0

    def read_new(self, paths: Sequence[Path]) -> None:
        for path in paths[self._seen :]:
            self.tables[path] = pq.ParquetFile(path).read()
        self._seen = len(paths)


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in a fixed order (shards complete in any order)."""
    return frame.sort_values(list(ROW_KEY), kind="stable").reset_index(drop=True)


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
