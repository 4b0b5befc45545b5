"""The swarm explorer: per seed a fault profile, then a schedule, from one plain ``random.Random``.

Each simulation draws a world seed and a profile from the explorer's Random, runs in
profile mode, and judges the history. The first violations of each invariant (with a
new set of fired fault families) are shrunk by delta debugging before being reported;
distinct root-cause signatures are reported separately.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

from scenarios.schema import FaultsModel
from sim.explore.base import Budget, Clock, ExploreReport, Progress, Target, report_shrunk
from sim.explore.counterexample import Counterexample
from sim.explore.profiles import draw_profile
from sim.simulate import SimulationResult, simulate


@dataclass(frozen=True)
class Draw:
    """One simulation of a swarm batch: its number (1-based), world seed, profile and result."""

    number: int
    seed: int
    profile: FaultsModel
    result: SimulationResult

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
        )


def swarm_draws(target: Target, seed: int) -> Iterator[tuple[int, FaultsModel]]:
    """The (world seed, profile) pairs :class:`SwarmExplorer` draws under ``Budget(seed=seed)``, in order.

    The draws never depend on the policy, so two policies given the same seed see the same
    worlds and profiles: batches are paired.
    """
    rng = random.Random(seed)
    faults = target.scenario.faults
    while True:
        world_seed = rng.getrandbits(32)
        yield world_seed, draw_profile(rng, faults, target.families)


def swarm_batch(target: Target, simulations: int, seed: int, deadline_s: float | None = None) -> Iterator[Draw]:
    """Run the first ``simulations`` swarm draws of ``target`` (stopping early past ``deadline_s``)."""
    base = target.scenario
    policy = target.policy
    clock = Clock()
    for number, (world_seed, profile) in enumerate(islice(swarm_draws(target, seed), simulations), 1):
        if deadline_s is not None and clock.elapsed() >= deadline_s:
            return
        yield Draw(number, world_seed, profile, simulate(base.with_faults(profile), policy, world_seed))


class SwarmExplorer:
    name = "swarm"

    def explore(self, target: Target, budget: Budget, progress: Progress | None = None) -> ExploreReport:
        base = target.scenario
        policy = target.policy
        report = ExploreReport(self.name, target)
        clock = Clock()
        tried: set[tuple[str, frozenset[str]]] = set()
        shrunk: dict[str, int] = {}
        seen: set[tuple[str, ...]] = set()
        draws = swarm_draws(target, budget.seed)
        while clock.elapsed() < budget.seconds and (
            budget.simulations is None or report.simulations < budget.simulations
        ):
            seed, profile = next(draws)
            result = simulate(base.with_faults(profile), policy, seed)
            report.simulations += 1
            found_at, count = clock.elapsed(), report.simulations
            for invariant in result.violations:
                if not budget.wants(invariant):
                    continue
                families = frozenset(f.family for f in result.fault_script)
                if shrunk.get(invariant, 0) >= budget.max_per_invariant or (invariant, families) in tried:
                    continue
                tried.add((invariant, families))
                if report_shrunk(
                    report,
                    seen,
                    budget,
                    profile=profile,
                    seed=seed,
                    invariant=invariant,
                    result=result,
                    found=(found_at, count),
                ):
                    shrunk[invariant] = shrunk.get(invariant, 0) + 1
            if progress is not None:
                progress(report.simulations, len(report.violations))
            if budget.stop_at_first and report.violations:
                break
        report.elapsed_s = clock.elapsed()
        return report
