"""The review's evidence jobs, run in an executor's workers: shrink a violating simulation, recognise
registered findings and recorded non-guarantees in violating simulations, verify a small scenario exhaustively,
measure a shrunk counterexample's causality curve.

Each job is a small frozen, picklable value and each runner a top-level function returning
plain values, so a local process pool and a Dask cluster run them alike. A job names the
simulation it starts from by the sweep row's keys (scenario reference, preset, flags,
intensity, seed): the same inputs give the same history in any process, so a worker
rebuilds it exactly. Knows the simulator, the explorers and the findings register; nothing
of sweeps, files or rendering.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from scenarios.intensity import scale_faults
from scenarios.loader import load_scenario
from scenarios.overrides import at_ranges
from scenarios.schema import Scenario
from sim.explore.base import NondeterminismError, Target, shrink
from sim.explore.causality import curve
from sim.explore.counterexample import Counterexample
from sim.explore.discovery import UNEXPLAINED_PREFIX
from sim.explore.exhaustive import ExhaustiveExplorer
from sim.sweep.rows import explain_violations
from sim.world.simulate import simulate


@dataclass(frozen=True, slots=True)
class Cell:
    """One simulation of the sweep, by the keys of its row (scenario as written, no overrides)."""

    scenario_ref: str
    preset: str
    flags: tuple[tuple[str, bool], ...]
    intensity: float
    seed: int
    digest: str
    fault_ranges: str = ""
    """'' or 'library': the scenario's own fault ranges; 'deployment': widened, as the grid swept it."""

    def scenario(self) -> Scenario:
        base = at_ranges(load_scenario(self.scenario_ref), self.fault_ranges)
        return scale_faults(base, self.intensity) if self.intensity != 1.0 else base


def parse_flags(text: str) -> tuple[tuple[str, bool], ...]:
    """The row's canonical ``name=value,...`` flags as pairs."""
    pairs = []
    for part in filter(None, text.split(",")):
        name, _, value = part.partition("=")
        pairs.append((name.strip(), value.strip().lower() in ("true", "1", "on", "yes")))
    return tuple(sorted(pairs))


@dataclass(frozen=True, slots=True)
class ShrinkJob:
    cell: Cell
    invariant: str
    label: str
    max_tests: int
    grid: str = ""
    """The deployment-range grid the row came from ('' = the library's fault ranges)."""
    mechanism: str = ""
    """The mechanism the row was chosen for: a finding or non-guarantee id, ``UNEXPLAINED`` for the
    violations of the invariant nothing explains, '' when the row does not say (a policy or grid whose
    rows carry no ``why.*`` columns: then one job per invariant, its mechanism named when shrunk)."""
    role: str = ""
    """Why the report shows it ('head', 'first preset where it fails', ...)."""
    met: int = 0
    """Simulations of the job's policy and grids that showed its mechanism (0 when not known)."""


UNEXPLAINED = "unexplained"
"""``ShrinkJob.mechanism`` of a row whose violation no recogniser explains (its ``why.*`` column is '')."""


@dataclass(frozen=True, slots=True)
class ShrinkOutcome:
    job: ShrinkJob
    counterexample: Counterexample | None
    problem: str = ""


def run_shrink(job: ShrinkJob) -> ShrinkOutcome:
    """Re-run the row's simulation (its digest must match), then ddmin its fault script while the
    violation keeps its mechanism (the same finding or non-guarantee, or for an unexplained one the
    same witness shape: :func:`sim.explore.base.shrink`), so the report's counterexample tells the
    story the sweep met, not another one that fails the same invariant with fewer faults."""
    cell = job.cell
    scenario = cell.scenario()
    flags = dict(cell.flags)
    result = simulate(scenario, cell.preset, cell.seed, flags=flags)
    if result.digest != cell.digest:
        return ShrinkOutcome(
            job, None, f"re-run of seed {cell.seed} gave digest {result.digest}, row has {cell.digest}"
        )
    target = Target(cell.scenario_ref, cell.preset, flags, scenario_override=scenario)
    try:
        cx, _ = shrink(
            target,
            scenario.faults,
            cell.seed,
            job.invariant,
            result.fault_script,
            expected_digest=result.digest,
            max_tests=job.max_tests,
            explorer="report",
        )
    except NondeterminismError as error:
        return ShrinkOutcome(job, None, str(error))
    note = (
        f"sweep row: policy {job.label}, intensity {cell.intensity:g}, seed {cell.seed}; "
        f"shrunk by ddmin keeping its mechanism ({cx.mechanism})"
    )
    return ShrinkOutcome(job, replace(cx, note=note))


@dataclass(frozen=True, slots=True)
class RecogniseJob:
    cell: Cell
    invariants: tuple[str, ...]
    grid: str = ""
    """The grid the row came from (the explanation tables are per grid)."""
    known: tuple[tuple[str, str], ...] | None = None
    """What the sweep worker already found (the row's ``why.*`` columns), when it explained: the job
    then needs no re-run."""


def run_recognise(job: RecogniseJob) -> list[tuple[str, str]]:
    """(invariant, id) for each violated invariant of the job: the id of the registered finding or
    recorded non-guarantee whose recogniser matches, '' when none does (an unregistered violation)."""
    if job.known is not None:
        return list(job.known)
    cell = job.cell
    result = simulate(cell.scenario(), cell.preset, cell.seed, flags=dict(cell.flags))
    return explain_violations(result.indexed(), result.verdicts, job.invariants)


@dataclass(frozen=True, slots=True)
class VerifyJob:
    scenario: str
    preset: str
    bound: int
    max_schedules: int | None = None


@dataclass(frozen=True, slots=True)
class VerifyOutcome:
    job: VerifyJob
    schedules: int
    complete: bool
    sentence: str
    violated: tuple[str, ...]
    elapsed_s: float
    explained: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    """Per distinct mechanism met, in the order met: (the invariant it was first seen violating, the id of
    the registered finding or recorded non-guarantee whose recogniser matches, '' when none does, its
    first schedule's fault script)."""


def run_verify(job: VerifyJob) -> VerifyOutcome:
    """Enumerate, naming each violation's mechanism as it is met (the recognisers the sweep's violations
    go through: :func:`register.mechanism.mechanism_of`), and list each distinct mechanism once with its
    first (smallest) schedule: a second mechanism behind an invariant gets its own line."""
    started = time.perf_counter()
    explorer = ExhaustiveExplorer(max_schedules=job.max_schedules, mechanisms=True)
    report = explorer.verify(Target(job.scenario, job.preset), job.bound)
    elapsed_s = time.perf_counter() - started
    explained = []
    for _, cx in report.mechanisms:
        entry = "" if cx.mechanism.startswith(UNEXPLAINED_PREFIX) else cx.mechanism
        explained.append((cx.invariant, entry, tuple(f.text() for f in cx.faults)))
    return VerifyOutcome(
        job,
        report.schedules,
        report.complete,
        report.sentence(),
        tuple(name for name, _ in report.violations),
        elapsed_s,
        tuple(explained),
    )


@dataclass(frozen=True, slots=True)
class CurveJob:
    counterexample: Counterexample
    budget_requests: int | None
    """The time box, in world requests (deterministic; about 10-17 us of CPU each)."""


def run_curve(job: CurveJob) -> dict[str, Any]:
    """The counterexample's causality curve as plain data (``sim.explore.causality.Curve.document``)."""
    return curve(job.counterexample, budget_requests=job.budget_requests).document()
