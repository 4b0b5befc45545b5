"""Sweep tasks: one cell of a sweep (grid, scenario, policy, intensity, overrides) and a block of seeds.

A task is the unit of work an executor runs and of output a shard holds; its ``key`` names
the shard, so the key must be a pure function of everything that decides the rows (and
nothing else: not the machine, not the output directory). ``SweepPlan`` is the older,
configuration-free way to build tasks (presets x scenarios x intensities), kept for callers
that predate sweep configuration files. Knows nothing of files, executors or the world.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9_.+=-]+")


def flags_text(flags: Sequence[tuple[str, bool]]) -> str:
    """The canonical ``name=value,...`` form of flag overrides (sorted; '' for none)."""
    return ",".join(f"{name}={'true' if value else 'false'}" for name, value in sorted(flags))


@dataclass(frozen=True, slots=True)
class SweepTask:
    """``policy`` is the preset; ``label`` the name rows carry ('' = the preset's name).
    ``latency_ratio`` 0, ``transport`` '' and ``collation`` '' keep the scenario as written."""

    scenario: str
    policy: str
    seed_start: int
    seed_count: int
    intensity: float = 1.0
    flags: tuple[tuple[str, bool], ...] = ()
    grid: str = "main"
    label: str = ""
    latency_ratio: float = 0.0
    transport: str = ""
    fault_ranges: str = ""
    """'' = the scenario's own fault ranges; 'deployment' = widened (``Scenario.at_deployment_ranges``)."""
    collation: str = ""
    """'' = the scenario's own ``[world] identity_collation``; else 'binary' or 'unicode_ci'."""
    explain: bool = False
    """Explain each violation in the worker, while the history is in memory (``why.*`` columns): the
    review asks it of head's tasks, whose violations it would otherwise re-run one by one to explain.
    Not part of the key: the columns only spare the review those re-runs, and a shard without them
    (from a sweep that did not explain) is complete; the review re-runs what it lacks."""
    evidence: bool = True
    """Keep the first violation of each distinct mechanism for a counterexample file (``leaselab sweep``
    does). The review plans its own from the rows and turns it off, sparing the workers the naming of
    every violation. Not part of the key: it decides no row."""

    @property
    def policy_label(self) -> str:
        return self.label or self.policy

    @property
    def seeds(self) -> range:
        return range(self.seed_start, self.seed_start + self.seed_count)

    @property
    def key(self) -> str:
        """The shard name: readable head, then a digest of every field that decides the rows."""
        text = "|".join(
            (
                self.grid,
                self.scenario,
                self.policy,
                self.policy_label,
                flags_text(self.flags),
                repr(float(self.intensity)),
                repr(float(self.latency_ratio)),
                self.transport,
                str(self.seed_start),
                str(self.seed_count),
                # only when set: a task at the scenario's own ranges keeps the key it always had
                *((self.fault_ranges,) if self.fault_ranges else ()),
                *(("collation=" + self.collation,) if self.collation else ()),
            )
        )
        digest = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
        head = "__".join(
            (
                self.grid,
                Path(self.scenario).stem,
                self.policy_label,
                f"x{self.intensity:g}",
                f"r{self.latency_ratio:g}",
                self.transport or "as",
                *((self.collation,) if self.collation else ()),
                str(self.seed_start),
            )
        )
        return f"{_UNSAFE.sub('_', head)}__{digest}"


@dataclass(frozen=True)
class SweepPlan:
    """Presets x scenarios x intensities x seeds, without a configuration file (one grid, 'main')."""

    scenarios: Sequence[str]
    policies: Sequence[str]
    seeds: int
    intensities: Sequence[float] = (1.0,)
    seeds_per_task: int = 50
    flags: tuple[tuple[str, bool], ...] = ()

    def tasks(self) -> list[SweepTask]:
        out = []
        for scenario in self.scenarios:
            for intensity in self.intensities:
                for start in range(0, self.seeds, self.seeds_per_task):
                    count = min(self.seeds_per_task, self.seeds - start)
                    for policy in self.policies:
                        out.append(SweepTask(scenario, policy, start, count, intensity, self.flags))
        return out
