"""The swarm explorer: per seed a fault profile, then a schedule, from one plain ``random.Random``.

Each simulation draws a world seed and a profile from the explorer's Random, runs in
profile mode, and judges the history. The first violations of each invariant (with a
new set of fired fault families) are shrunk by delta debugging before being reported;
distinct root-cause signatures are reported separately.
"""

from __future__ import annotations

import random

from sim.explore.base import (
    Budget,
    Clock,
    ExploreReport,
    Progress,
    Target,
    Violation,
    shrink,
    signature,
)
from sim.explore.profiles import draw_profile
from sim.simulate import simulate


class SwarmExplorer:
    name = "swarm"

    def explore(self, target: Target, budget: Budget, progress: Progress | None = None) -> ExploreReport:
        rng = random.Random(budget.seed)
        base = target.scenario
        policy = target.policy
        report = ExploreReport(self.name, target)
        clock = Clock()
        tried: set[tuple[str, frozenset[str]]] = set()
        shrunk: dict[str, int] = {}
        seen: set[tuple[str, ...]] = set()
        while clock.elapsed() < budget.seconds and (
            budget.simulations is None or report.simulations < budget.simulations
        ):
            seed = rng.getrandbits(32)
            profile = draw_profile(rng, base.faults, target.families)
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
                cx, _ = shrink(
                    target,
                    profile,
                    seed,
                    invariant,
                    result.fault_script,
                    expected_digest=result.digest,
                    max_tests=budget.shrink_tests,
                    explorer=self.name,
                )
                sig = signature(invariant, cx.faults)
                if sig in seen:
                    continue
                seen.add(sig)
                shrunk[invariant] = shrunk.get(invariant, 0) + 1
                report.violations.append(Violation(invariant, found_at, count, cx, sig))
            if progress is not None:
                progress(report.simulations, len(report.violations))
            if budget.stop_at_first and report.violations:
                break
        report.elapsed_s = clock.elapsed()
        return report
