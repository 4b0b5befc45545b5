"""The swarm explorer: per seed a fault profile and a tempo, then a schedule, from one plain ``random.Random``.

Each simulation draws a world seed, a profile and a tempo (:func:`draw_tempo`) from the
explorer's Random, runs in profile mode, and judges the history. The search runs first; the
first violations of each invariant (with a new set of fired fault families) are then shrunk
by delta debugging; distinct root-cause signatures are reported separately.
:func:`swarm_batch` (the property suites and the mutant runner) runs the very same draws.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice

from scenarios.intensity import Tempo, with_tempo
from scenarios.schema import FaultsModel, Scenario
from sim.explore.base import Budget, Clock, ExploreReport, Progress, Target, report_shrunk
from sim.explore.counterexample import Counterexample
from sim.explore.profiles import draw_profile, draw_tempo
from sim.world.simulate import SimulationResult, simulate


@dataclass(frozen=True)
class Draw:
    """One simulation of a swarm batch: its number (1-based), world seed, profile and result."""

    number: int
    seed: int
    profile: FaultsModel
    result: SimulationResult
    tempo: Tempo = field(default_factory=Tempo)

    def counterexample(self, target: Target, invariant: str) -> Counterexample:
        """This simulation as a replayable (unshrunk) counterexample of ``invariant``."""
        return Counterexample(
            scenario=target.scenario_ref,
            policy=target.policy_name,
            seed=self.seed,
            invariant=invariant,
            digest=self.result.digest,
            faults=tuple(self.result.fault_script),
            profile=self.profile,
            flags=dict(target.flags),
            explorer="swarm",
            tempo=None if self.tempo == Tempo() else self.tempo,
        )


def swarm_draws(target: Target, seed: int) -> Iterator[tuple[int, FaultsModel]]:
    """The (world seed, profile) pairs :class:`SwarmExplorer` draws under ``Budget(seed=seed)``, in order
    (without their tempos: see :func:`explorer_draws`).

    The draws never depend on the policy, so two policies given the same seed see the same
    worlds and profiles: batches are paired.
    """
    for world_seed, profile, _tempo in explorer_draws(target, seed):
        yield world_seed, profile


def swarm_batch(target: Target, simulations: int, seed: int, deadline_s: float | None = None) -> Iterator[Draw]:
    """Run the first ``simulations`` swarm draws of ``target``, each at its tempo, as the explorer does
    (stopping early past ``deadline_s``)."""
    base = target.scenario
    policy = target.policy
    clock = Clock()
    for number, (world_seed, profile, tempo) in enumerate(islice(explorer_draws(target, seed), simulations), 1):
        if deadline_s is not None and clock.elapsed() >= deadline_s:
            return
        result = simulate(with_tempo(base, tempo).with_faults(profile), policy, world_seed)
        yield Draw(number, world_seed, profile, result, tempo)


@dataclass(frozen=True)
class Candidate:
    """A violation as the search first met it, before shrinking: enough to replay and shrink it."""

    invariant: str
    seed: int
    profile: FaultsModel
    tempo: Tempo
    result: SimulationResult
    found_after_s: float
    simulations_until_found: int


def explorer_draws(target: Target, seed: int) -> Iterator[tuple[int, FaultsModel, Tempo]]:
    """The explorer's draws: a world seed, a fault profile of the target's families, and a tempo."""
    rng = random.Random(seed)
    faults = target.scenario.faults
    while True:
        world_seed = rng.getrandbits(32)
        profile = draw_profile(rng, faults, target.families)
        yield world_seed, profile, draw_tempo(rng)


def search(
    target: Target,
    budget: Budget,
    clock: Clock,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
) -> tuple[list[Candidate], int]:
    """Simulate draws until the budget is spent (or, with ``stop_at_first``, a wanted violation);
    returns the candidates to shrink and the simulations run. Shrinking is left to the caller, so
    the time to a violation is the search's alone.

    Per invariant it keeps the first violation of each new set of fired families, at most
    ``2 * max_per_invariant`` of them. ``stop`` (polled every simulation) ends the search early:
    the parallel explorer's "another worker found it".
    """
    base, policy = target.scenario, target.policy
    candidates: list[Candidate] = []
    tried: set[tuple[str, frozenset[str]]] = set()
    kept: dict[str, int] = {}
    simulations = 0
    timed: dict[Tempo, Scenario] = {}
    draws = explorer_draws(target, budget.seed)
    while clock.elapsed() < budget.seconds and (budget.simulations is None or simulations < budget.simulations):
        if stop is not None and stop():
            break
        seed, profile, tempo = next(draws)
        scenario = timed.get(tempo)
        if scenario is None:
            scenario = with_tempo(base, tempo)
            if len(timed) < 64:
                timed[tempo] = scenario
        result = simulate(scenario.with_faults(profile), policy, seed)
        simulations += 1
        found_at = clock.elapsed()
        for invariant in result.violations:
            if not budget.wants(invariant) or kept.get(invariant, 0) >= 2 * budget.max_per_invariant:
                continue
            families = frozenset(f.family for f in result.fault_script)
            if (invariant, families) in tried:
                continue
            tried.add((invariant, families))
            kept[invariant] = kept.get(invariant, 0) + 1
            candidates.append(Candidate(invariant, seed, profile, tempo, result, found_at, simulations))
        if progress is not None:
            progress(simulations, len(candidates))
        if budget.stop_at_first and candidates:
            break
    return candidates, simulations


def shrink_candidates(report: ExploreReport, candidates: Sequence[Candidate], budget: Budget) -> None:
    """Shrink candidates in the order found, until each invariant has ``max_per_invariant`` distinct
    signatures reported (with ``stop_at_first``, only the first candidate)."""
    seen: set[tuple[str, ...]] = set()
    shrunk: dict[str, int] = {}
    for candidate in candidates[:1] if budget.stop_at_first else candidates:
        if shrunk.get(candidate.invariant, 0) >= budget.max_per_invariant:
            continue
        if report_shrunk(
            report,
            seen,
            budget,
            profile=candidate.profile,
            seed=candidate.seed,
            invariant=candidate.invariant,
            result=candidate.result,
            found=(candidate.found_after_s, candidate.simulations_until_found),
            tempo=None if candidate.tempo == Tempo() else candidate.tempo,
        ):
            shrunk[candidate.invariant] = shrunk.get(candidate.invariant, 0) + 1


MAX_MINIMAL_FAULTS = 3
"""A counterexample a reviewer can follow; a larger one sends the explorer looking for a simpler one."""
REFINE_ROUNDS = 4


def refine_minimal(target: Target, budget: Budget, report: ExploreReport) -> None:
    """With ``stop_at_first``: when the first violation shrank to more than :data:`MAX_MINIMAL_FAULTS`
    faults, search on (fresh draws, up to twice the simulations the first find took, a few rounds)
    for another violation of the same invariant that shrinks smaller, and report the smallest.

    A minimal script is only 1-minimal for its own world seed: a draw that fired many faults often
    needs most of them (each shifts the timing of everything after it), while another seed needs
    two or three. The find's time and simulation count stay those of the first violation.
    """
    if not budget.stop_at_first or not report.violations:
        return
    first = report.violations[0]
    best = first
    extra = 0
    for round_no in range(1, REFINE_ROUNDS + 1):
        if best.faults_in_minimal <= MAX_MINIMAL_FAULTS:
            break
        more = Budget(
            seconds=math.inf,
            simulations=max(20, 2 * first.simulations_until_found),
            seed=budget.seed + 7919 * round_no,
            stop_at_first=True,
            invariants=frozenset({first.invariant}),
            shrink_tests=budget.shrink_tests,
        )
        candidates, simulations = search(target, more, Clock())
        extra += simulations
        trial = ExploreReport(report.explorer, target)
        shrink_candidates(trial, candidates, more)
        if trial.violations and trial.violations[0].faults_in_minimal < best.faults_in_minimal:
            best = trial.violations[0]
    if best is not first:
        report.violations[0] = replace(
            best, found_after_s=first.found_after_s, simulations_until_found=first.simulations_until_found
        )
    report.extra["refine_simulations"] = extra


class SwarmExplorer:
    """Search first, shrink after: the budget is spent simulating draws, then the first violation
    of each invariant and new family set is shrunk (at most ``max_per_invariant`` reported per
    invariant). Shrinking inline used to spend the budget on the easy violations before the rare
    ones were reached."""

    name = "swarm"

    def explore(self, target: Target, budget: Budget, progress: Progress | None = None) -> ExploreReport:
        report = ExploreReport(self.name, target)
        clock = Clock()
        cpu = time.process_time()
        candidates, report.simulations = search(target, budget, clock, progress)
        report.extra["search_s"] = round(clock.elapsed(), 3)
        report.extra["search_cpu_s"] = round(time.process_time() - cpu, 3)
        shrink_candidates(report, candidates, budget)
        refine_minimal(target, budget, report)
        report.elapsed_s = clock.elapsed()
        return report
