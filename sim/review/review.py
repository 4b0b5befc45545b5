"""The ADR review: run a sweep configuration, gather the evidence, write the reliability report.

Steps: (1) run the sweep (``sim.sweep.engine.run_sweep``; shards under ``OUT/shards`` survive an
interrupted run); (2) in the same executor, shrink one violating simulation per violated
invariant under ``head`` and under the first preset where the invariant fails, recognise registered
findings in violating ``head`` simulations (from the ``why.*`` columns the sweep's workers wrote while
each history was in memory, :class:`sim.review.plan.ExplainingSweep`; a re-run only for a row without
them), and verify the small
scenarios exhaustively for ``head`` and each preset, and measure each shrunk counterexample's causality
curve (submitted as its shrink finishes, time-boxed by ``ReviewOptions.causality_budget_requests``);
(3) write the counterexample files into ``OUT/counterexamples`` and return rows and evidence as plain
data (:class:`Review`), which
:mod:`reports` renders (the face, ``leaselab report``, joins the two: sim never imports reports).

Everything chosen is a pure function of the rows (:mod:`sim.review.plan`: which row to shrink,
which to examine), so the same command on the same commit writes the same numbers and files;
only the times differ. The evidence becomes views in :mod:`sim.review.evidence`, the provenance
in :mod:`sim.review.provenance`. Knows the sweep and the evidence jobs; renders nothing itself.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from checks.columns import INV, ROW_KEY, violated_mask
from checks.columns import names as column_names
from checks.history import Op
from model.errors import LeaselabError
from sim.review.evidence import counterexamples, explanations, findings, verify_view
from sim.review.jobs import (
    CurveJob,
    RecogniseJob,
    ShrinkJob,
    ShrinkOutcome,
    VerifyJob,
    VerifyOutcome,
    run_curve,
    run_recognise,
    run_shrink,
    run_verify,
)
from sim.review.plan import (
    ExplainingSweep,
    as_written_grids,
    deployment_grids,
    explained_grids,
    plan_recognition,
    plan_shrinks,
    plan_verification,
    scenario_refs,
)
from sim.review.provenance import fresh_shards, provenance
from sim.review.rare import rare_rates
from sim.sweep.config import SweepConfig
from sim.sweep.directory import REPORT, SHARDS, locked, prepare, refuse_foreign
from sim.sweep.engine import SweepProgress, run_sweep

VERIFY_SCENARIOS = ("single_run", "happy_path", "audit_failure_after_write", "worker_crash_mid_write")
"""Small library scenarios (one or two runs) whose bound-1 enumeration takes well under a second."""
CAUSALITY_BUDGET_REQUESTS = 600_000
"""About 1-3 CPU s per curve here: a whole curve (8-14 points of 16-93 draws) of a counterexample of the
``default`` scenario; the 12,000-record histories of ``reaper_races_heartbeat`` get a few points."""
PROGRESS_POLL_S = 1.0
"""How often the evidence phase tells its progress while it waits for a job."""
Progress = Callable[[str, int, int], None]
"""progress(phase, done, total): 'checking' counts the shards of an interrupted run verified,
'simulating' simulations, 'evidence' jobs."""


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
    causality_budget_requests: int = CAUSALITY_BUDGET_REQUESTS
    """Per counterexample, the causality curve's time box in world requests; 0 = no curves."""


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

    def failed(self, policy: str) -> dict[str, int]:
        """The invariants violated in some simulation of ``policy`` (any grid), with how many."""
        mine = self.frame[self.frame["policy"] == policy]
        counts = {name: int(violated_mask(mine[INV + name]).sum()) for name in column_names(INV, mine.columns)}
        return {name: count for name, count in counts.items() if count}


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
    early = _EarlyReader()

    def swept(p: SweepProgress) -> None:
        if p.phase == "checking":
            tell("checking", p.checked, p.to_check)
        else:
            early.read_new(p.paths)
            tell("simulating", p.simulations, p.simulations_total)

    refuse_foreign(out, config, REPORT)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise LeaselabError(f"cannot create: {error.strerror}", file=str(out)) from None
    with locked(out):
        prepare(out, config, kind=REPORT, command=options.command)  # refuses a sweep's directory first
        renewed = fresh_shards(out / SHARDS, config)
        if renewed:  # said before the minutes it costs, not after
            print(f"leaselab: {renewed}", file=sys.stderr, flush=True)
        done = run_sweep(ExplainingSweep(config), out / SHARDS, executor=executor, on_task_done=swept)
    frame = read_shards(done.paths, early.tables)
    sweep_end = time.perf_counter()
    policies = [p.label for p in config.policy]
    refs = scenario_refs(config)
    grids = as_written_grids(config)
    deployment = deployment_grids(config)
    shrink_jobs = plan_shrinks(frame, policies, refs, options.shrink_tests, grids, deployment)
    explained = explained_grids(config)
    recognise_jobs = plan_recognition(frame, policies, refs, options.examine_per_invariant, grids, explained)
    verify_jobs = plan_verification(options.verify_scenarios, options.verify_bound)
    shrunk, recognised, verified, curves = _run_jobs(
        executor, shrink_jobs, recognise_jobs, verify_jobs, tell, options.causality_budget_requests
    )
    views, histories, files = counterexamples(shrunk, out, curves)
    explained_by = explanations(frame, policies, recognise_jobs, recognised, explained)
    rare_rates(frame, policies, explained_by, refs)  # gives the rare ones their rate (``rate_text``)
    phases_s = {"sweep": sweep_end - started, "evidence": time.perf_counter() - sweep_end}
    return Review(
        out=out,
        frame=frame,
        policies=policies,
        counterexamples=views,
        histories=histories,
        verification=[verify_view(v) for v in verified],
        findings=findings(recognise_jobs, recognised, deployment),
        explanations=explained_by,
        provenance=provenance(
            config, options, len(frame), time.perf_counter() - started, len(recognise_jobs), curves, phases_s
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
    keys = [key for key in ROW_KEY if key in frame.columns]  # rows of older shards lack ``collation``
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


def _known(job: RecogniseJob) -> Future[Any]:
    """A recognition the sweep's worker already made, as a finished future beside the submitted ones."""
    done: Future[Any] = Future()
    done.set_result(run_recognise(job))
    return done


def _run_jobs(
    executor: Executor,
    shrinks: list[ShrinkJob],
    recognitions: list[RecogniseJob],
    verifications: list[VerifyJob],
    tell: Progress,
    curve_budget: int,
) -> tuple[list[ShrinkOutcome], list[list[tuple[str, str]]], list[VerifyOutcome], list[dict[str, Any] | None]]:
    """Submit every evidence job at once (they are independent) and each counterexample's curve as its
    shrink finishes (``curve_budget`` 0: no curves); collect in submission order."""
    futures: list[Future[Any]] = []
    futures += [executor.submit(run_shrink, job) for job in shrinks]
    futures += [_known(job) if job.known is not None else executor.submit(run_recognise, job) for job in recognitions]
    futures += [executor.submit(run_verify, job) for job in verifications]
    total = len(futures)
    results = []
    curve_futures: list[Future[Any] | None] = []

    def finished() -> int:
        return sum(f.done() for f in futures) + sum(c.done() for c in curve_futures if c is not None)

    def settled(future: Future[Any]) -> Any:
        """``future``'s result, telling the jobs done so far (in any order) while it runs, so the
        phase shows progress from its start, not only as the jobs finish in submission order."""
        while not future.done():
            tell("evidence", finished(), total)
            wait([future], timeout=PROGRESS_POLL_S)
        return future.result()

    tell("evidence", 0, total)
    for i, future in enumerate(futures):
        results.append(settled(future))
        if i < len(shrinks):
            cx = results[-1].counterexample
            wanted = cx is not None and curve_budget > 0
            curve_futures.append(executor.submit(run_curve, CurveJob(cx, curve_budget)) if wanted else None)
            total += wanted
        tell("evidence", min(finished(), total - 1), total)
    curves: list[dict[str, Any] | None] = []
    for pending in curve_futures:
        curves.append(None if pending is None else settled(pending))
    tell("evidence", total, total)
    a, b = len(shrinks), len(shrinks) + len(recognitions)
    return results[:a], results[a:b], results[b:], curves
