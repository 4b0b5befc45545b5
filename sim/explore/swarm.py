"""The swarm explorer: per seed a fault profile and a tempo, then a schedule, from one plain ``random.Random``.

Each simulation draws a world seed, a profile and a tempo (:func:`draw_tempo`) from the
explorer's Random, runs in profile mode, and judges the history. The search runs first, naming
every violation by its mechanism (:mod:`sim.explore.discovery`); the first violation of each
distinct mechanism is then shrunk by delta debugging while it keeps that mechanism, and each
mechanism is reported once, with the simulations and seconds until it was first met.
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
from sim.explore.base import (
    Budget,
    Clock,
    ExploreReport,
    Progress,
    Target,
    Violation,
    mechanism_of_result,
    report_shrunk,
    signature,
)
from sim.explore.counterexample import Counterexample
from sim.explore.discovery import UNEXPLAINED_PREFIX, Discovery, mechanism_key
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
    mechanism: str = ""
    """The key of its mechanism (:func:`sim.explore.discovery.mechanism_key`)."""
    cuts: tuple[tuple[int, int], ...] = ()
    """A guided branch's cuts (:mod:`sim.explore.footholds`): replayed with them, never shrunk."""


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
    discovery: Discovery | None = None,
) -> tuple[list[Candidate], int]:
    """Simulate draws until the budget is spent (or, with ``stop_at_first``, a wanted mechanism);
    returns the candidates to shrink and the simulations run. Shrinking is left to the caller, so
    the time to a violation is the search's alone.

    It keeps the first violation of each distinct mechanism (see :func:`keep_new`; ``discovery``, when
    given, receives every mechanism met). ``stop`` (polled every simulation) ends the search early: the
    parallel explorer's "another worker found it".
    """
    base, policy = target.scenario, target.policy
    candidates: list[Candidate] = []
    found = discovery if discovery is not None else Discovery()
    simulations = 0
    timed: dict[Tempo, Scenario] = {}
    draws = explorer_draws(target, budget.seed)
    try:
        while clock.elapsed() < budget.seconds and (budget.simulations is None or simulations < budget.simulations):
            if stop is not None and stop():
                break
            seed, profile, tempo = next(draws)
            scenario = timed.get(tempo)
            if scenario is None:
                scenario = with_tempo(base, tempo)
                if len(timed) < 64:
                    timed[tempo] = scenario
            result = target.judged(simulate(scenario.with_faults(profile), policy, seed))
            simulations += 1
            stopping = keep_new(found, candidates, budget, result, (seed, profile, tempo), clock.elapsed(), simulations)
            if progress is not None:
                progress(simulations, len(candidates))
            if stopping:
                break
    except KeyboardInterrupt:
        found.interrupted = True  # Ctrl-C: the simulation in flight is dropped, the rest is kept
    return candidates, simulations


def keep_new(
    found: Discovery,
    candidates: list[Candidate],
    budget: Budget,
    result: SimulationResult,
    drawn: tuple[int, FaultsModel, Tempo],
    found_at: float,
    simulations: int,
    met_keys: list[str] | None = None,
    cuts: tuple[tuple[int, int], ...] = (),
) -> bool:
    """Name ``result``'s violations by mechanism and keep it as a candidate for each mechanism met for the
    first time (at most ``max_per_invariant`` unexplained ones per invariant, whose witness shapes
    can be many); True when, with ``stop_at_first``, a wanted mechanism was met. ``met_keys``, when
    given, receives the key of every mechanism the result showed."""
    seed, profile, tempo = drawn
    stopping = False
    if not result.violations:
        return False
    for invariant, met, first in found.see(result, simulations, found_at, budget.wants):
        if met_keys is not None and met.key not in met_keys:
            met_keys.append(met.key)
        if budget.stop_at_first and budget.stops_at(met.key) and met.simulations == simulations:
            stopping = True
        if not first:
            continue
        if not met.label or met.label.startswith(UNEXPLAINED_PREFIX):
            unexplained = sum(1 for c in candidates if c.invariant == invariant and UNEXPLAINED_PREFIX in c.mechanism)
            if unexplained >= budget.max_per_invariant:
                continue
        candidates.append(Candidate(invariant, seed, profile, tempo, result, found_at, simulations, met.key, cuts))
    return stopping


def report_unshrunk(report: ExploreReport, candidates: Sequence[Candidate], found: Discovery) -> None:
    """After Ctrl-C: report each candidate as the search met it (no time to shrink), as a replayable
    counterexample of its whole fault script, labelled with its mechanism."""
    for c in candidates:
        label = found.met[c.mechanism].label if c.mechanism in found.met else ""
        report_as_met(report, c, label, "not shrunk: the search was interrupted")


def report_as_met(report: ExploreReport, candidate: Candidate, mechanism: str, note: str) -> None:
    """Report ``candidate`` as the search met it: its whole fault script (and its cuts), unshrunk."""
    cx = Counterexample(
        scenario=report.target.scenario_ref,
        policy=report.target.policy_name,
        seed=candidate.seed,
        invariant=candidate.invariant,
        digest=candidate.result.digest,
        faults=tuple(candidate.result.fault_script),
        profile=candidate.profile,
        flags=dict(report.target.flags),
        explorer=report.explorer,
        tempo=None if candidate.tempo == Tempo() else candidate.tempo,
        mechanism=mechanism,
        note=note,
        cuts=candidate.cuts,
    )
    sig = signature(candidate.invariant, cx.faults)
    report.violations.append(
        Violation(candidate.invariant, candidate.found_after_s, candidate.simulations_until_found, cx, sig)
    )


def finish(report: ExploreReport, candidates: Sequence[Candidate], budget: Budget, found: Discovery) -> None:
    """Shrink and report the candidates (after Ctrl-C, report them unshrunk), then refine."""
    report.extra["mechanisms"] = found.documents()
    if found.interrupted:
        report.extra["interrupted"] = True
        report_unshrunk(report, candidates, found)
        return
    shrink_candidates(report, candidates, budget)
    refine_minimal(target=report.target, budget=budget, report=report)


def shrink_candidates(report: ExploreReport, candidates: Sequence[Candidate], budget: Budget) -> None:
    """Shrink candidates in the order found, each mechanism once (with ``stop_at_first``, only the first
    candidate of a wanted mechanism)."""
    seen: set[str] = set()
    if budget.stop_at_first:
        wanted = [c for c in candidates if budget.stops_at(c.mechanism)]
        candidates = wanted[:1]
    for candidate in candidates:
        if candidate.mechanism in seen:
            continue
        if candidate.cuts:
            report_branch(report, candidate)
            seen.add(candidate.mechanism)
            continue
        report_shrunk(
            report,
            seen,
            budget,
            profile=candidate.profile,
            seed=candidate.seed,
            invariant=candidate.invariant,
            result=candidate.result,
            found=(candidate.found_after_s, candidate.simulations_until_found),
            tempo=None if candidate.tempo == Tempo() else candidate.tempo,
        )
        seen.add(candidate.mechanism)


def report_branch(report: ExploreReport, candidate: Candidate) -> None:
    """A guided branch's find, reported as met: its replay needs its cuts (the suffixes were drawn from
    their own seeds), which delta debugging of a fault script cannot keep, so it is not shrunk."""
    label = candidate.result.violations and _label(candidate)
    note = "found on a guided branch: replays with its cuts (records kept, suffix seed); not shrunk"
    report_as_met(report, candidate, label or "", note)


def _label(candidate: Candidate) -> str:
    shown = mechanism_of_result(candidate.result, candidate.invariant)
    return shown.label() if shown is not None else ""


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
            mechanisms=frozenset({mechanism_key(first.invariant, first.mechanism)}),
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
    of each distinct mechanism is shrunk and reported. Shrinking inline used to spend the budget on
    the easy violations before the rare ones were reached."""

    name = "swarm"

    def explore(self, target: Target, budget: Budget, progress: Progress | None = None) -> ExploreReport:
        report = ExploreReport(self.name, target)
        clock = Clock()
        cpu = time.process_time()
        found = Discovery()
        candidates, report.simulations = search(target, budget, clock, progress, discovery=found)
        report.extra["search_s"] = round(clock.elapsed(), 3)
        report.extra["search_cpu_s"] = round(time.process_time() - cpu, 3)
        finish(report, candidates, budget, found)
        report.elapsed_s = clock.elapsed()
        return report
