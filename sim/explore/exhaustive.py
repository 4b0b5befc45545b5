"""The exhaustive explorer: every placement of up to K faults over every request boundary of a
small workload, and every reversal of a group of same-instant events, level by level.

Level 0 is the fault-free run. Each schedule at level k extends one of level k-1 by a
tie reversal (only before any fault, at a later instant than its last reversal) or by
one fault at a request index after its last fault, taken from the requests that
schedule's own run issued. So every schedule is enumerated once, in order of size,
and the first violation of each invariant comes with a smallest schedule.

The fault menu per request type is deliberately small (the kinds with distinct
effects); deploy, clock skew and identity faults are left to the randomized explorers.
Reversing one group of same-instant events gives every order of groups of two, and
the most different order of larger groups; full permutations of large groups are not
enumerated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from model.requests import (
    STORE_REQUESTS,
    CallProvider,
    Dispatch,
    InsertEvent,
    InvokeTool,
    Request,
    SelectStale,
)
from register.mechanism import mechanism_of
from scenarios.script import Fault
from sim.explore.base import Clock, Target
from sim.explore.counterexample import Counterexample
from sim.explore.discovery import mechanism_key
from sim.explore.profiles import without_probabilities
from sim.world.kernel import TieControl, TieKey
from sim.world.simulate import SimulationResult, simulate

MENU: dict[type[Request], tuple[tuple[str, str, float], ...]] = {
    **{t: (("store", "fail", 0.0),) for t in STORE_REQUESTS},
    InsertEvent: (("audit", "fire", 0.0),),
    CallProvider: (
        ("provider", "serverError", 0.0),
        ("provider", "auth", 0.0),
        ("slow", "stretch", 1.5),
        ("slow", "hang_then_error", 1.5),
    ),
    InvokeTool: (("slow", "stretch", 1.5),),
    Dispatch: (("dispatch", "fire", 0.0), ("duplicate", "twice", 0.0)),
}
ANY_REQUEST: tuple[tuple[str, str, float], ...] = (("crash", "before", 0.0), ("crash", "after", 0.0))
RUN_REQUEST: tuple[tuple[str, str, float], ...] = (("cancel", "fire", 0.0),)

Progress = Callable[[int, int, int, int], None]
"""progress(level, bound, done, total): schedules run of the level's total, after each schedule.
A level's total is counted when it starts (its parents' children), only when progress is asked for."""


@dataclass(frozen=True)
class Schedule:
    ties: tuple[TieKey, ...] = ()
    faults: tuple[Fault, ...] = ()

    @property
    def size(self) -> int:
        return len(self.ties) + len(self.faults)


@dataclass(frozen=True, slots=True)
class Opened:
    """What a schedule's run offers its children: the requests it issued and its same-instant groups."""

    request_types: Sequence[type[Request]]
    ties: TieControl | None


@dataclass
class VerifyReport:
    target: Target
    bound: int
    schedules: int = 0
    elapsed_s: float = 0.0
    complete: bool = True
    violations: list[tuple[str, Counterexample]] = field(default_factory=list)
    found_after_s: dict[str, float] = field(default_factory=dict)
    """Per invariant, the wall seconds into the search at which its first violation appeared."""
    mechanisms: list[tuple[str, Counterexample]] = field(default_factory=list)
    """With ``ExhaustiveExplorer(mechanisms=True)``: the first (smallest) schedule of each distinct
    mechanism (:mod:`sim.explore.discovery`), keyed by the mechanism's key, in the order met."""
    mechanism_found: dict[str, tuple[float, int]] = field(default_factory=dict)
    """Per mechanism key: wall seconds and schedules until it was first met."""

    def sentence(self) -> str:
        if self.violations:
            invariants = ", ".join(name for name, _ in self.violations)
            if not self.complete:
                return (
                    f"violations in the {self.schedules} schedules explored "
                    f"(bound {self.bound} not exhausted): {invariants}"
                )
            return f"violations up to bound {self.bound}: {invariants}"
        if not self.complete:
            return f"no violation in the {self.schedules} schedules explored (bound {self.bound} not exhausted)"
        return f"no violation up to bound {self.bound}"

    def document(self) -> dict[str, Any]:
        return {
            "scenario": self.target.scenario_ref,
            "policy": self.target.policy_name,
            "flags": dict(self.target.flags),
            "schedules": self.schedules,
            "bound": self.bound,
            "complete": self.complete,
            "elapsed_s": round(self.elapsed_s, 3),
            "sentence": self.sentence(),
            "violations": [
                {
                    "invariant": name,
                    "faults": [f.text() for f in cx.faults],
                    "ties": [list(t) for t in cx.ties],
                    "seed": cx.seed,
                    "digest": cx.digest,
                }
                for name, cx in self.violations
            ],
            **(
                {
                    "mechanisms": [
                        {
                            "invariant": cx.invariant,
                            "mechanism": cx.mechanism,
                            "found_after_s": round(self.mechanism_found[key][0], 3),
                            "schedules_until_found": self.mechanism_found[key][1],
                            # a schedule is one simulation: the name explore's JSON uses
                            "simulations_until_found": self.mechanism_found[key][1],
                            "faults": [f.text() for f in cx.faults],
                            "ties": [list(t) for t in cx.ties],
                            "seed": cx.seed,
                            "digest": cx.digest,
                        }
                        for key, cx in self.mechanisms
                    ]
                }
                if self.mechanisms
                else {}
            ),
        }


def fault_menu(request_types: Sequence[type[Request]], start: int, families: Sequence[str]) -> list[Fault]:
    """Every fault the explorer may place at request indexes >= ``start`` of one run."""
    allowed = set(families)
    out: list[Fault] = []
    for index in range(start, len(request_types)):
        rtype = request_types[index]
        options = ANY_REQUEST + MENU.get(rtype, ()) + (RUN_REQUEST if rtype is not SelectStale else ())
        out.extend(Fault(index, fam, kind, value) for fam, kind, value in options if fam in allowed)
    return out


class ExhaustiveExplorer:
    name = "exhaustive"

    def __init__(
        self,
        seed: int = 0,
        ties: bool = True,
        max_schedules: int | None = None,
        deadline_s: float | None = None,
        stop_on: str | None = None,
        mechanisms: bool = False,
    ) -> None:
        self.seed = seed
        self.ties = ties
        self.max_schedules = max_schedules
        self.deadline_s = deadline_s
        """Stop (incomplete) after this many wall seconds: the search benchmark's budget."""
        self.stop_on = stop_on
        """Stop at the first violation of this invariant: the search benchmark's time to it."""
        self.mechanisms = mechanisms
        """Also name every violation by its mechanism and keep the first schedule of each (``verify``'s
        report: :attr:`VerifyReport.mechanisms`); off by default, as it costs a register look-up each."""

    def _spent(self, report: VerifyReport, clock: Clock) -> bool:
        if self.stop_on is not None and self.stop_on in report.found_after_s:
            return True
        if self.max_schedules is not None and report.schedules >= self.max_schedules:
            return True
        return self.deadline_s is not None and clock.elapsed() >= self.deadline_s

    def verify(self, target: Target, bound: int, progress: Progress | None = None) -> VerifyReport:
        scenario = target.scenario.with_faults(without_probabilities(target.scenario.faults))
        policy = target.policy
        report = VerifyReport(target, bound)
        clock = Clock()
        found: dict[str, Counterexample] = {}

        def run(schedule: Schedule) -> SimulationResult:
            control = TieControl(reverse=frozenset(schedule.ties))
            result = simulate(scenario, policy, self.seed, script=schedule.faults, ties=control)
            report.schedules += 1
            if self.mechanisms and result.violations:
                self._name_mechanisms(report, result, schedule, target, clock)
            for invariant in result.violations:
                if invariant not in found:
                    report.found_after_s[invariant] = clock.elapsed()
                    found[invariant] = Counterexample(
                        scenario=target.scenario_ref,
                        policy=target.policy_name,
                        seed=self.seed,
                        invariant=invariant,
                        digest=result.digest,
                        faults=schedule.faults,
                        profile=scenario.faults,
                        flags=dict(target.flags),
                        explorer=self.name,
                        ties=schedule.ties,
                    )
            return result

        # A level keeps what its children need (request types, ties), never whole results: a
        # level of a large workload holds thousands of schedules.
        first = run(Schedule())
        if progress is not None:
            progress(0, bound, 1, 1)
        level: list[tuple[Schedule, Opened]] = [(Schedule(), Opened(first.request_types, first.ties))]
        for depth in range(1, bound + 1):
            nxt: list[tuple[Schedule, Opened]] = []
            total = 0
            if progress is not None:
                total = sum(len(self._children(s, o, target.families)) for s, o in level)
                if self.max_schedules is not None:
                    total = min(total, max(0, self.max_schedules - report.schedules))
            for schedule, opened in level:
                for child in self._children(schedule, opened, target.families):
                    if self._spent(report, clock):
                        report.complete = False
                        break
                    result = run(child)
                    nxt.append((child, Opened(result.request_types, result.ties)))
                    if progress is not None:
                        progress(depth, bound, len(nxt), total)
                if not report.complete:
                    break
            if not report.complete:
                break
            level = nxt
        report.violations = sorted(found.items())
        report.elapsed_s = clock.elapsed()
        return report

    def _name_mechanisms(
        self, report: VerifyReport, result: SimulationResult, schedule: Schedule, target: Target, clock: Clock
    ) -> None:
        ix = result.indexed()
        known = {key for key, _ in report.mechanisms}
        for invariant in result.violations:
            label = mechanism_of(invariant, ix, result.verdicts[invariant]).label()
            key = mechanism_key(invariant, label)
            if key in known:
                continue
            known.add(key)
            report.mechanism_found[key] = (clock.elapsed(), report.schedules)
            cx = Counterexample(
                scenario=target.scenario_ref,
                policy=target.policy_name,
                seed=self.seed,
                invariant=invariant,
                digest=result.digest,
                faults=schedule.faults,
                profile=target.scenario.with_faults(without_probabilities(target.scenario.faults)).faults,
                flags=dict(target.flags),
                explorer=self.name,
                ties=schedule.ties,
                mechanism=label,
            )
            report.mechanisms.append((key, cx))

    def _children(self, schedule: Schedule, result: Opened, families: Sequence[str]) -> list[Schedule]:
        children = []
        if self.ties and not schedule.faults and result.ties is not None:
            last = schedule.ties[-1] if schedule.ties else None
            for key in result.ties.ties():
                if last is None or key > last:
                    children.append(Schedule((*schedule.ties, key), ()))
        start = schedule.faults[-1].at + 1 if schedule.faults else 0
        for fault in fault_menu(result.request_types, start, families):
            children.append(Schedule(schedule.ties, (*schedule.faults, fault)))
        return children
