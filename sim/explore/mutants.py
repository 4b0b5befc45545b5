"""Policy mutants: flip each flag of ``head``, one at a time, and check that the search notices.

A mutant is ``head`` with one :class:`model.policy.Policy` field flipped. It is *killed* when a
swarm batch on one of its targets shows a violation ``head`` does not have:

- on a *clean* target (``head``'s paired batch, the same draws, violates nothing) any violation;
- on any other target a violation that no registered finding or recorded non-guarantee of
  ``head`` (:mod:`scenarios.findings`) recognises: a new mechanism, not one ``head`` already has.

Its targets are ``default`` with every family, plus the known-defect catalogue's scenario and
families when the flag is a defect flag, plus the scenarios that exercise the mechanism the flag
switches. A mutant that no search can tell from ``head`` is listed in :data:`EQUIVALENT` with the
reason instead of being searched. The score is killed / (total - equivalent).

Batches draw exactly as :class:`sim.explore.swarm.SwarmExplorer` does (one ``random.Random``:
a world seed, then a profile, per simulation) but judge each simulation as it comes and stop at
the first kill, without shrinking every other violation on the way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from model.invariants import Index
from model.policy import FLAG_NAMES, HEAD
from scenarios.findings import explain
from scenarios.known_defects import KNOWN_DEFECTS
from scenarios.schema import FAMILIES
from sim.explore.base import Clock, Target
from sim.explore.counterexample import Counterexample
from sim.explore.swarm import Draw, swarm_batch, swarm_draws
from sim.simulate import SimulationResult


def unexplained(result: SimulationResult) -> list[str]:
    """The violated invariants of ``result`` that no registered finding or non-guarantee recognises."""
    if not result.violations:
        return []
    ix = Index.of(result.history)
    return [name for name in result.violations if explain(name, ix, result.verdicts[name]) is None]


# ---- the mutants -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MutantTarget:
    scenario: str
    families: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.scenario} [{','.join(self.families) or 'no random faults'}]"


DEFAULT_TARGET = MutantTarget("default", FAMILIES)

EQUIVALENT: Mapping[str, str] = {
    "operation_deadline": (
        "proposal: before every provider and tool call the lease is extended to max(LEASE_S, the call's "
        "declared deadline). No library tool or provider declares a deadline (deadline_s = 0), so the "
        "extension renews to LEASE_S just after the boundary renewal did the same: a slow call still "
        "outlives its lease and is reaped mid-call, and no invariant can tell the mutant from head. The "
        "flip adds a mechanism (one more guarded renewal per call); with declared deadlines it would "
        "close the reaped-mid-call window behind F-02 and the reaper route of F-01."
    ),
}
"""Mutants no search can tell from head, with the reason; they are not searched."""

# The scenarios (beyond default) that exercise the mechanism a flag switches.
_EXERCISED_BY: Mapping[str, tuple[MutantTarget, ...]] = {
    "typed_effects": (MutantTarget("happy_path", ()),),
    "fail_closed_write_audit": (MutantTarget("audit_failure_after_write", ()),),
    "write_fence": (MutantTarget("happy_path", ()),),
    "fence_blocks_retry": (MutantTarget("worker_crash_mid_write", ()), MutantTarget("tool_outlives_lease", ())),
    "kb1_finish_unguarded": (MutantTarget("happy_path", ("cancel",)),),
    # A deploy renames a tool between attempts: the next attempt calls a name the code lost.
    "unknown_tool_is_strictest": (MutantTarget("deploy_between_attempts", ()),),
    # The proposal lets the deciders retry a fenced run; a reaped write still in flight then lands
    # beside the retry's, because the dedup store replays only completed calls.
    "idempotency_keys": (MutantTarget("default", ("slow",)),),
}


def _catalogue_targets(flag: str) -> tuple[MutantTarget, ...]:
    """The known-defect catalogue's (scenario, families) for a defect flag, or for the flag whose
    switch-off is a catalogued defect (``dead_letter_payloadless`` is KB-11)."""
    found = []
    for entry in KNOWN_DEFECTS:
        named = flag.startswith("kb") and entry.id == "KB-" + flag[2:].split("_", 1)[0]
        if named or flag in entry.defective_flags:
            found.append(MutantTarget(entry.scenario, tuple(entry.families)))
    return tuple(found)


def mutant_targets(flag: str) -> tuple[MutantTarget, ...]:
    """Where the mutant of ``flag`` is searched: its specific targets first, then ``default``."""
    specific = (*_EXERCISED_BY.get(flag, ()), *_catalogue_targets(flag))
    unique = list(dict.fromkeys(specific))
    return (*unique, DEFAULT_TARGET) if DEFAULT_TARGET not in unique else tuple(unique)


def mutant_flags(flag: str) -> dict[str, bool]:
    """The one-flag override that makes the mutant of ``flag``."""
    return {flag: not getattr(HEAD, flag)}


@dataclass(frozen=True)
class Kill:
    flag: str
    invariant: str
    simulations: int
    """Simulations of the mutant's search up to and including the killing one."""
    target: MutantTarget
    counterexample: Counterexample


@dataclass
class MutationReport:
    killed: list[Kill] = field(default_factory=list)
    equivalent: list[tuple[str, str]] = field(default_factory=list)
    survivors: list[str] = field(default_factory=list)
    simulations: int = 0
    elapsed_s: float = 0.0

    @property
    def score(self) -> float:
        judged = len(self.killed) + len(self.survivors)
        return len(self.killed) / judged if judged else 1.0

    def document(self) -> dict[str, object]:
        return {
            "score": round(self.score, 4),
            "killed": [
                {
                    "flag": k.flag,
                    "invariant": k.invariant,
                    "simulations": k.simulations,
                    "scenario": k.target.scenario,
                    "faults": list(k.target.families),
                }
                for k in self.killed
            ],
            "equivalent": [{"flag": flag, "reason": reason} for flag, reason in self.equivalent],
            "survivors": list(self.survivors),
        }


@dataclass
class Baselines:
    """``head``'s paired batch per target, computed once: is the target clean?"""

    simulations: int
    seed: int
    clean: dict[MutantTarget, bool] = field(default_factory=dict)
    spent: int = 0

    def is_clean(self, target: MutantTarget) -> bool:
        if target not in self.clean:
            batch = swarm_batch(Target(target.scenario, "head", {}, target.families), self.simulations, self.seed)
            violated = False
            for draw in batch:
                self.spent += 1
                if draw.result.violations:
                    violated = True
                    break
            self.clean[target] = not violated
        return self.clean[target]


Progress = Callable[[str, str], None]
"""Called as progress(flag, what) while the mutants run."""


def hunt(
    flag: str,
    simulations: int,
    seed: int,
    baselines: Baselines,
    deadline_s: float | None = None,
) -> tuple[Kill | None, int]:
    """Search the mutant of ``flag`` target by target; the first kill, and the simulations spent."""
    clock = Clock()
    spent = 0
    for target in mutant_targets(flag):
        clean = baselines.is_clean(target)
        search = Target(target.scenario, "head", mutant_flags(flag), target.families)
        remaining = None if deadline_s is None else max(0.0, deadline_s - clock.elapsed())
        for draw in swarm_batch(search, simulations, seed, remaining):
            spent += 1
            new = draw.result.violations if clean else unexplained(draw.result)
            if new:
                cx = draw.counterexample(search, new[0])
                return Kill(flag, new[0], spent, target, cx), spent
    return None, spent


def run_mutants(
    simulations: int = 300,
    seed: int = 0,
    *,
    budget_s: float | None = None,
    flags: Sequence[str] = FLAG_NAMES,
    progress: Progress | None = None,
) -> MutationReport:
    """Flip each of ``flags`` over ``head``; ``simulations`` per target, ``budget_s`` per mutant."""
    report = MutationReport()
    clock = Clock()
    baselines = Baselines(simulations, seed)
    for flag in flags:
        if flag in EQUIVALENT:
            report.equivalent.append((flag, EQUIVALENT[flag]))
            continue
        if progress is not None:
            progress(flag, "searching")
        kill, spent = hunt(flag, simulations, seed, baselines, budget_s)
        report.simulations += spent
        if kill is None:
            report.survivors.append(flag)
        else:
            report.killed.append(kill)
    report.simulations += baselines.spent
    report.elapsed_s = clock.elapsed()
    return report


def policy_fields() -> tuple[str, ...]:
    """Every field of :class:`model.policy.Policy`: the mutants to make."""
    return tuple(f.name for f in dataclasses.fields(HEAD))


__all__ = [
    "DEFAULT_TARGET",
    "EQUIVALENT",
    "Baselines",
    "Draw",
    "Kill",
    "MutantTarget",
    "MutationReport",
    "hunt",
    "mutant_flags",
    "mutant_targets",
    "policy_fields",
    "run_mutants",
    "swarm_batch",
    "swarm_draws",
    "unexplained",
]
