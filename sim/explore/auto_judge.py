"""Judge automatic mutants (:mod:`sim.explore.auto_mutants`) by the head sweep alone and by the unit tests.

Each mutant runs in a fresh process (:mod:`sim.explore.auto_worker`), ``workers`` at a time, or
through an ``executor`` the caller gives (a Dask cluster's, as sweeps use: each task starts the same
process where the cluster runs it, so a result does not depend on where it ran); the unmutated tree
runs once the same way first, as the paired baseline (the same draws: one seed, the same scenarios,
the same budgets). A mutant is

- *crashing* when its module cannot be imported, when its runtime raises a Python error out of a
  simulation, or when its process outlives ``timeout_s`` (a loop that never ends); it is dropped
  with the reason, like an equivalent one;
- *killed by the sweep* when, under faults (a draw where an injected fault took effect), the sweep
  shows a violation no registered finding or recorded non-guarantee explains where the baseline's
  same draw has none (the criterion of :mod:`sim.explore.sweep_mutants`), or when one invariant is
  violated significantly more often than on the baseline's paired draws: a one-sided exact sign
  test on the discordant draws, below :data:`PAIRED_ALPHA` once divided by the number of invariants
  (Bonferroni);
- *killed by the tests* when ``tests/model`` fails (the first failing test is kept).

Each judged mutant also counts the paired draws whose history (its digest) differs from the baseline's.
A survivor whose histories differ is an oracle gap: the runtime behaved otherwise and no invariant
said so. One whose every history is the baseline's was never told apart by the sweep at all: either no
schedule of head can (an equivalent mutant of head) or the world never takes the path (a scenario gap);
the command uses the count to check the reasons ``register/blind_mutants.py`` gives.

The score the issue asks for is the sweep-only score among the mutants the tests kill; the survivors
(the tests kill them, the sweep does not) are listed with file, line and diff. Knows the explorers
and the register through the worker; sim.explore's layer rules hold (no sweep, no review, no reports).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor, as_completed
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.explore.auto_mutants import ROOT, AutoMutant, Dropped
from sim.explore.sweep_mutants import SWEEP_SEED, SWEEP_SIMULATIONS

UNIT_TESTS = ("tests/model",)
PAIRED_ALPHA = 0.01
TIMEOUT_S = 300.0
"""A mutant's process is stopped past this many seconds (its sweep and tests take about 5 s alone)."""


@dataclass(frozen=True)
class SweepKill:
    invariant: str
    how: str
    """"unexplained" (a violation no register entry explains) or "paired" (significantly more often)."""
    scenario: str
    draw: int
    """The first draw that shows it (for "paired": the first discordant draw)."""

    def document(self) -> dict[str, object]:
        return {"invariant": self.invariant, "how": self.how, "scenario": self.scenario, "draw": self.draw}


@dataclass(frozen=True)
class Judged:
    mutant: AutoMutant
    sweep: SweepKill | None
    tests_failed: str | None
    cpu_s: float
    histories_differ: int | None = None
    """Paired draws whose history differs from the baseline's (None: not measured)."""
    histories_paired: int = 0
    """Paired draws compared."""

    @property
    def tests_kill(self) -> bool:
        return self.tests_failed is not None

    def document(self) -> dict[str, object]:
        return {
            **self.mutant.document(),
            "sweep": None if self.sweep is None else self.sweep.document(),
            "tests_failed": self.tests_failed,
            "histories_differ": self.histories_differ,
            "histories_paired": self.histories_paired,
            "cpu_s": self.cpu_s,
        }


@dataclass
class AutoReport:
    sites: int = 0
    sample: int | None = None
    seed: int = 0
    judged: list[Judged] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    baseline_unexplained: list[str] = field(default_factory=list)
    """Unexplained violations of the unmutated tree's sweep: must be empty, or every kill is suspect."""
    simulations: int = 0
    elapsed_s: float = 0.0
    workers: int = 1
    scheduler: str | None = None
    """The Dask scheduler the mutants were judged on (None: ``workers`` local processes)."""

    @property
    def test_killed(self) -> list[Judged]:
        return [j for j in self.judged if j.tests_kill]

    @property
    def survivors(self) -> list[Judged]:
        """Killed by the unit tests, missed by the sweep: a promise no invariant judges."""
        return [j for j in self.test_killed if j.sweep is None]

    @property
    def unkilled(self) -> list[Judged]:
        """Killed by neither."""
        return [j for j in self.judged if not j.tests_kill and j.sweep is None]

    @property
    def sweep_only(self) -> tuple[int, int]:
        """(sweep kills, mutants) among the mutants the tests kill."""
        killed = self.test_killed
        return sum(1 for j in killed if j.sweep is not None), len(killed)

    def document(self, interval: tuple[float, float] | None = None) -> dict[str, object]:
        k, n = self.sweep_only
        return {
            "sites": self.sites,
            "sample": self.sample,
            "seed": self.seed,
            "workers": self.workers,
            "scheduler": self.scheduler,
            "judged": len(self.judged),
            "equivalent": sum(1 for d in self.dropped if d.kind == "equivalent"),
            "crashing": sum(1 for d in self.dropped if d.kind == "crashing"),
            "test_killed": n,
            "sweep_killed_among_test_killed": k,
            "sweep_only_score": round(k / n, 4) if n else None,
            "sweep_only_interval": None if interval is None else [round(interval[0], 4), round(interval[1], 4)],
            "sweep_killed": sum(1 for j in self.judged if j.sweep is not None),
            "baseline_unexplained": list(self.baseline_unexplained),
            "simulations": self.simulations,
            "elapsed_s": round(self.elapsed_s, 1),
            "survivors": [j.document() for j in self.survivors],
            "unkilled": [j.document() for j in self.unkilled],
            "mutants": [j.document() for j in self.judged],
            "dropped": [d.document() for d in self.dropped],
        }


# ---- the kill criteria --------------------------------------------------------------------------


def sign_test(wins: int, losses: int) -> float:
    """One-sided exact sign test: P(X >= wins) for X ~ Binomial(wins + losses, 1/2)."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail: int = sum(math.comb(n, i) for i in range(wins, n + 1))
    return tail / float(2**n)


Draws = dict[tuple[str, int], tuple[bool, frozenset[str], frozenset[str]]]


def draws_of(out: dict[str, Any]) -> Draws:
    return {(s, int(n)): (bool(f), frozenset(v), frozenset(u)) for s, n, f, v, u in out.get("draws", [])}


def histories_of(out: dict[str, Any]) -> dict[tuple[str, int], str]:
    return {(s, int(n)): str(d) for s, n, d in out.get("histories", [])}


def differing(mutant: dict[tuple[str, int], str], baseline: dict[tuple[str, int], str]) -> tuple[int | None, int]:
    """(paired draws whose history differs, paired draws): None when either side kept no histories."""
    if not mutant or not baseline:
        return None, 0
    paired = set(mutant) & set(baseline)
    missing = len(set(mutant) ^ set(baseline))
    return sum(1 for key in paired if mutant[key] != baseline[key]) + missing, len(paired)


def sweep_kill(mutant: Draws, baseline: Draws, invariants: int, alpha: float = PAIRED_ALPHA) -> SweepKill | None:
    """The sweep's kill of a mutant, from its draws and the baseline's paired ones (see the docstring)."""
    for key in sorted(mutant):
        fired, _violated, found = mutant[key]
        base_found = baseline.get(key, (False, frozenset(), frozenset()))[2]
        new = sorted(found - base_found) if fired else []
        if new:
            return SweepKill(new[0], "unexplained", key[0], key[1])
    wins: dict[str, list[tuple[str, int]]] = {}
    losses: dict[str, int] = {}
    for key in sorted(set(mutant) | set(baseline)):
        fired, violated, _ = mutant.get(key, (True, frozenset(), frozenset()))
        base = baseline.get(key, (False, frozenset(), frozenset()))[1]
        for name in violated - base if fired else ():
            wins.setdefault(name, []).append(key)
        for name in base - violated:
            losses[name] = losses.get(name, 0) + 1
    threshold = alpha / max(1, invariants)
    for name in sorted(wins):
        if sign_test(len(wins[name]), losses.get(name, 0)) < threshold:
            first = wins[name][0]
            return SweepKill(name, "paired", first[0], first[1])
    return None


# ---- running ------------------------------------------------------------------------------------


def _run(spec: dict[str, Any], timeout_s: float) -> tuple[dict[str, Any], float]:
    """Run one worker process on ``spec``; its output and the CPU seconds it took."""
    with tempfile.TemporaryDirectory(prefix="leaselab-mutant-") as tmp:
        source, target = Path(tmp) / "in.json", Path(tmp) / "out.json"
        source.write_text(json.dumps(spec), encoding="utf-8")
        env = {**os.environ, "HYPOTHESIS_PROFILE": "ci", "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            subprocess.run(
                [sys.executable, "-m", "sim.explore.auto_worker", str(source), str(target)],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return {"crashed": f"timed out after {timeout_s:.0f} s (a loop that never ends?)"}, timeout_s
        if not target.exists():
            return {"crashed": "the worker process died without a result"}, 0.0
        out: dict[str, Any] = json.loads(target.read_text(encoding="utf-8"))
        return out, float(out.get("cpu_s", 0.0))


def _spec(
    mutant: AutoMutant | None, simulations: int, seed: int, tests: Sequence[str], scenarios: Sequence[str] | None
) -> dict[str, Any]:
    return {
        "module": None if mutant is None else mutant.module_name,
        "source": None if mutant is None else mutant.source,
        "simulations": simulations,
        "seed": seed,
        "tests": list(tests),
        "scenarios": None if scenarios is None else list(scenarios),
    }


Progress = Callable[[str, int, int], None]


def judge_all(
    mutants: Sequence[AutoMutant],
    *,
    workers: int = 1,
    simulations: int = SWEEP_SIMULATIONS,
    seed: int = SWEEP_SEED,
    tests: Sequence[str] = UNIT_TESTS,
    timeout_s: float = TIMEOUT_S,
    progress: Progress | None = None,
    scenarios: Sequence[str] | None = None,
    executor: Executor | None = None,
) -> AutoReport:
    """Judge ``mutants`` (already sampled, equivalents dropped); the report's sample fields are the caller's.
    ``scenarios``: the sweep's scenarios (default: the whole library). ``executor``: where the worker
    processes start (a Dask cluster's executor; default: ``workers`` threads here, each waiting on one)."""
    report = AutoReport(workers=workers)
    started = time.monotonic()
    with ExitStack() as stack:
        pool = executor or stack.enter_context(ThreadPoolExecutor(max_workers=max(1, workers)))
        base_out, _ = pool.submit(_run, _spec(None, simulations, seed, (), scenarios), timeout_s).result()
        _judge_each(report, pool, base_out, mutants, simulations, seed, tests, timeout_s, progress, scenarios)
    report.elapsed_s = time.monotonic() - started
    return report


def _judge_each(
    report: AutoReport,
    pool: Executor,
    base_out: dict[str, Any],
    mutants: Sequence[AutoMutant],
    simulations: int,
    seed: int,
    tests: Sequence[str],
    timeout_s: float,
    progress: Progress | None,
    scenarios: Sequence[str] | None,
) -> None:
    """Every mutant against the baseline's output, through ``pool``; results in the mutants' order."""
    from checks import INVARIANTS

    if base_out.get("crashed"):
        raise RuntimeError(f"the unmutated tree's sweep failed: {base_out['crashed']}")
    baseline = draws_of(base_out)
    base_histories = histories_of(base_out)
    report.baseline_unexplained = sorted({name for _f, _v, found in baseline.values() for name in found})
    report.simulations += int(base_out.get("simulations", 0))
    done = 0
    if progress is not None:
        progress("", done, len(mutants))
    results: dict[int, Judged | Dropped] = {}
    futures = {
        pool.submit(_run, _spec(mutant, simulations, seed, tests, scenarios), timeout_s): i
        for i, mutant in enumerate(mutants)
    }
    for future in as_completed(futures):
        i = futures[future]
        mutant = mutants[i]
        out, cpu = future.result()
        report.simulations += int(out.get("simulations", 0))
        if out.get("crashed"):
            results[i] = Dropped(mutant, "crashing", str(out["crashed"]))
        else:
            kill = sweep_kill(draws_of(out), baseline, len(INVARIANTS))
            differ, paired = differing(histories_of(out), base_histories)
            results[i] = Judged(mutant, kill, out.get("tests_failed"), round(cpu, 2), differ, paired)
        done += 1
        if progress is not None:
            progress(mutant.name, done, len(mutants))
    for i in sorted(results):
        item = results[i]
        if isinstance(item, Judged):
            report.judged.append(item)
        else:
            report.dropped.append(item)


__all__ = [
    "PAIRED_ALPHA",
    "TIMEOUT_S",
    "UNIT_TESTS",
    "AutoReport",
    "Judged",
    "SweepKill",
    "differing",
    "draws_of",
    "histories_of",
    "judge_all",
    "sign_test",
    "sweep_kill",
]
