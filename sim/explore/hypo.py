"""The Hypothesis explorer: profile-then-schedule strategies, ``target()`` and shrinking.

Each example is one simulation in script mode with the drawn schedule. A violation
raises an exception whose class is specific to the invariant, so Hypothesis shrinks
each violation as its own failure; the last failing call is the minimal example.
``target()`` steers toward lease overruns, retries and writes left in flight. The
search runs in batches, each a fresh ``@given`` with its own seed, until the budget
is spent; each batch yields at most one (minimal) violation.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings, target
from hypothesis.errors import HypothesisException

from scenarios.schema import Scenario
from scenarios.script import Fault
from scenarios.strategies import profile_then_schedule
from sim.explore.base import Budget, Clock, ExploreReport, Progress, Target, report_shrunk
from sim.explore.metrics import lease_overrun_s, retries, writes_in_flight
from sim.explore.profiles import without_probabilities
from sim.world.simulate import SimulationResult, simulate

_VIOLATION_TYPES: dict[str, type[AssertionError]] = {}


class BudgetSpent(BaseException):
    """Raised inside an example when the budget is spent: a BaseException, so Hypothesis does not
    treat it as a failure to shrink but lets it end the batch at once (targeting phase included)."""


def violation_type(invariant: str) -> type[AssertionError]:
    """One exception class per invariant: Hypothesis shrinks distinct classes separately."""
    if invariant not in _VIOLATION_TYPES:
        _VIOLATION_TYPES[invariant] = type(f"Violated_{invariant}", (AssertionError,), {})
    return _VIOLATION_TYPES[invariant]


def schedule_horizon(target_: Target) -> int:
    """How many request indexes a schedule may address: the fault-free run's requests, plus half."""
    scenario = target_.scenario.with_faults(without_probabilities(target_.scenario.faults))
    baseline = simulate(scenario, target_.policy, 0, script=[], judge=False)
    return max(8, int(baseline.stats["requests"] * 1.5))


class HypothesisExplorer:
    name = "hypothesis"

    def __init__(self, batch_examples: int = 200, max_faults: int = 6, use_targets: bool = True) -> None:
        self.batch_examples = batch_examples
        self.max_faults = max_faults
        self.use_targets = use_targets

    def explore(self, target_: Target, budget: Budget, progress: Progress | None = None) -> ExploreReport:
        scenario = target_.scenario.with_faults(without_probabilities(target_.scenario.faults))
        policy = target_.policy
        horizon = schedule_horizon(target_)
        report = ExploreReport(self.name, target_, extra={"schedule_horizon": horizon})
        if not target_.families:
            return self._fault_free(target_, scenario, budget, report)
        clock = Clock()
        rng = random.Random(budget.seed)
        seen: set[str] = set()
        strategy = profile_then_schedule(target_.families, horizon, self.max_faults)
        world_seed = budget.seed
        last: dict[str, Any] = {}
        while not _spent(clock, budget, report):
            last.clear()

            def check(drawn: tuple[list[str], list[Fault]]) -> None:
                if _spent(clock, budget, report):
                    raise BudgetSpent
                result = simulate(scenario, policy, world_seed, script=drawn[1])
                report.simulations += 1
                if progress is not None:
                    progress(report.simulations, len(report.violations))
                if self.use_targets:
                    _aim(result)
                reported = {v.invariant for v in report.violations}
                new = [v for v in result.violations if budget.wants(v) and v not in reported]
                if new:
                    last["result"], last["script"], last["invariant"] = result, drawn[1], new[0]
                    last["found"] = (clock.elapsed(), report.simulations)
                    raise violation_type(new[0])(new[0])

            runner = settings(
                max_examples=self.batch_examples,
                deadline=None,
                database=None,
                derandomize=False,
                suppress_health_check=list(HealthCheck),
                phases=[Phase.generate, Phase.target, Phase.shrink],
                report_multiple_bugs=False,
            )(seed(rng.getrandbits(32))(given(strategy)(check)))
            try:
                runner()
            except BudgetSpent:
                # The budget ran out, perhaps while Hypothesis was shrinking a violation: keep it.
                self._record(scenario, world_seed, last, report, seen, budget)
                break
            except AssertionError:
                self._record(scenario, world_seed, last, report, seen, budget)
            except HypothesisException:
                pass
            if budget.stop_at_first and report.violations:
                break
        report.elapsed_s = clock.elapsed()
        return report

    def _fault_free(self, target_: Target, scenario: Scenario, budget: Budget, report: ExploreReport) -> ExploreReport:
        """No family to draw from: the only schedule is the empty one, judged once."""
        clock = Clock()
        result = simulate(scenario, target_.policy, budget.seed, script=[])
        report.simulations = 1
        seen: set[str] = set()
        for invariant in result.violations:
            if budget.wants(invariant):
                last = {"result": result, "script": [], "invariant": invariant, "found": (clock.elapsed(), 1)}
                self._record(scenario, budget.seed, last, report, seen, budget)
        report.elapsed_s = clock.elapsed()
        return report

    @staticmethod
    def _record(
        scenario: Scenario,
        world_seed: int,
        last: dict[str, Any],
        report: ExploreReport,
        seen: set[str],
        budget: Budget,
    ) -> None:
        if "result" not in last:
            return
        report_shrunk(
            report,
            seen,
            budget,
            profile=scenario.faults,
            seed=world_seed,
            invariant=last["invariant"],
            result=last["result"],
            found=last["found"],
        )


def _spent(clock: Clock, budget: Budget, report: ExploreReport) -> bool:
    if clock.elapsed() >= budget.seconds:
        return True
    return budget.simulations is not None and report.simulations >= budget.simulations


def _aim(result: SimulationResult) -> None:
    history = result.history
    target(lease_overrun_s(history), label="lease overrun s")
    target(float(retries(history)), label="retries")
    target(float(writes_in_flight(history)), label="writes in flight")
