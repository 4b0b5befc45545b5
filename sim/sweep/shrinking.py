"""Shrinking a sweep's kept counterexamples after it (``leaselab sweep --shrink``), one per mechanism.

The sweep keeps one counterexample per policy and mechanism (:mod:`sim.sweep.job`): the plan's first
simulation that met it, with the whole fault script that simulation drew. Shrinking it runs the
explorers' delta debugging while the violation keeps its mechanism (:func:`sim.explore.base.shrink`),
so a counterexample of F-18 stays one of F-18 rather than becoming a smaller one of F-01 behind the
same invariant. It is a pass after the sweep, not part of a task: which counterexample is kept is known
only once every task is done, and a shrink costs up to ``max_tests`` simulations, which a sweep that does
not ask for it should not pay. Each file is shrunk in an executor's worker (a local pool or Dask) from
the file alone, so the result is the same wherever it runs; a shrunk file is marked in the index and a
resumed sweep does not shrink it again. Knows counterexample files and the shrinker; not the sweep's
shards or its CLI.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass, replace
from pathlib import Path

from sim.explore.base import NondeterminismError, Target, shrink
from sim.explore.counterexample import read, write
from sim.world.simulate import simulate

SHRINK_TESTS = 120
"""The review's budget per shrink (``ReviewOptions.shrink_tests``): simulations of delta debugging."""


@dataclass(frozen=True, slots=True)
class Shrunk:
    """What one shrink did: the faults before and after, or why it could not (the file is then kept)."""

    path: str
    faults_before: int
    faults_after: int
    problem: str = ""


def shrink_file(path: str, max_tests: int) -> Shrunk:
    """Shrink the counterexample at ``path`` in place, keeping its mechanism (an executor's task)."""
    cx = read(Path(path))
    target = Target(cx.scenario, cx.policy, dict(cx.flags))
    # the sweep's own draw again (no script): its fault script carries the anchors ddmin cuts by
    drawn = simulate(cx.effective_scenario(), cx.policy, cx.seed, flags=dict(cx.flags))
    if drawn.digest != cx.digest:
        problem = f"re-run of seed {cx.seed} gave digest {drawn.digest}, the file has {cx.digest}"
        return Shrunk(path, len(cx.faults), len(cx.faults), problem)
    try:
        shrunk, _ = shrink(
            target,
            cx.profile,
            cx.seed,
            cx.invariant,
            drawn.fault_script,
            expected_digest=cx.digest,
            max_tests=max_tests,
            explorer=cx.explorer or "sweep",
            tempo=cx.tempo,
        )
    except NondeterminismError as error:
        return Shrunk(path, len(cx.faults), len(cx.faults), str(error))
    note = cx.note.replace("; not shrunk (", "; shrunk by ddmin keeping its mechanism (")
    write(replace(shrunk, note=note, scenario=cx.scenario), Path(path))
    return Shrunk(path, len(cx.faults), len(shrunk.faults))


def shrink_files(paths: list[Path], executor: Executor, max_tests: int = SHRINK_TESTS) -> list[Shrunk]:
    """Shrink every file through ``executor``; the outcomes in the order of ``paths``."""
    futures = [executor.submit(shrink_file, str(path), max_tests) for path in paths]
    return [future.result() for future in futures]
