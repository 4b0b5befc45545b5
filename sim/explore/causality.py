"""When was it doomed? The causality curve of a counterexample.

For a counterexample (a scenario, policy, seed and minimal fault script that replays one violating
history), the curve gives, at a cut after the history's first ``c`` records, the share of re-runs
that keep those records and draw everything after them afresh (:func:`sim.world.conditioned.simulate_from`)
and still end in *the same violation*: the same invariant violated, explained the same way
(the same registered finding or recorded non-guarantee recognises it, :mod:`register.findings`;
or, for a violation nothing explains, again one nothing explains).

What the suffix draws, and why that answers "when was it doomed". A shrunk counterexample is a
fault script: the faults it needs, and nothing else. Replaying the script after the cut would only
say whether the cut came after its last fault. Instead the suffix is a fresh draw of the world the
search explored: the counterexample's fault profile (its file's ``[profile]``: for the review's
counterexamples the scenario's faults at the row's intensity; for the swarm's, the profile it drew),
the scenario's targeted faults still ahead, fresh latencies and approver answers (the tempo's
distributions: the file's tempo scale is kept, its draws are not) and a fresh order of every group of
same-instant events. So a point is P(the same violation | the world as it stood after those records,
then whatever that world may do next). Early in the history the point is about the scenario's base
rate of that violation; it stays low while the violation still needs luck (a fault that has not
come, a race not yet lost), and reaches 1 once nothing the world can still do would avoid it: the
history is doomed. The records (and faults) between the last low point and the first high one are
what doomed it. A violation that needs no fault (a design defect) is near 1 from the start.

The points: the start (nothing kept), just before and just after each fault the counterexample's
script fired (its decision is fresh in the first, kept in the second), the cut that keeps the
violation's last witness record, and ``between`` cuts evenly spaced over the records up to it
(evenly spaced records fall evenly over the swim lanes' compressed time axis, where evenly spaced
seconds would fall in idle gaps). Where two neighbouring points differ by :data:`JUMP` or more and
lie more than one record apart, the window is bisected (more points) until one record decides it
or the budget ends. A point draws suffixes until its Wilson 95% interval is at most +-10 points
(``reports.stats.wilson`` draws the intervals; the test of this module checks this module's width
against it): 16 draws when they all agree (most points of a curve sit at 0 or 1: not yet doomed, or
doomed), at most :data:`DRAWS` at any share. That sequential stop is why a report's curves cost a
third of what a fixed 93 draws did; its price is the usual one of optional stopping, a slightly
lower coverage than 95% for a true share near 0.8 or 0.2 that happens to look unanimous in 16 draws
(at a true 0.75, 16 agreeing draws have a chance of 1%). Draw ``j`` of every point uses the same
suffix seed (common random numbers), so neighbouring points differ by what the records between them
fixed rather than by luck.

A decisive moment is a pair of neighbouring points whose shares differ by :data:`JUMP` or more
(a point's standard error is then at most 5.2 points, so a 25-point step is more than three standard
errors of the difference): it names the records between them and the faults decided there.

The budget counts the world's requests (deterministic, about proportional to CPU time: 10-17 us each
here): points are evaluated in the order above, then bisections, while one more point at its most
(``draws`` runs the size of the original) still fits; a curve cut short says so.
Knows the world, counterexample files and the findings register; draws nothing.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from checks import INVARIANTS, Validity, check_all
from checks import history as H
from checks.fused import index_of
from checks.history import Op
from register.explain import explain
from register.findings import Finding
from register.nonguarantees import NonGuarantee
from scenarios.schema import Scenario
from sim.explore.counterexample import Counterexample
from sim.world.conditioned import Decided, decisions, simulate_from

DRAWS = 93
"""Most suffix draws per point: the smallest n whose Wilson 95% interval is at most +-10 points at any
share (its widest, at k/n = 1/2, is +-9.96 points at n = 93 and +-10.01 at n = 92)."""
HALF_WIDTH = 0.10
"""A point stops drawing once its Wilson 95% interval is at most this either side (see the module)."""
_Z95 = 1.959963984540054
JUMP = 0.25
"""A decisive moment: neighbouring points whose shares differ by at least this."""
BETWEEN = 4
"""Evenly spaced points up to the violation's last witness record. Four, not eight: the decisive moments
fall on fault points and bisection finds them either way (the same moments on four of the 100-seed
report's counterexamples with 8 and with 4), while 4 costs 25-33% fewer simulations per curve and lets
curves that the report's time box cut short at 8 finish (2 of those 4)."""
SUFFIX_SEED_BASE = 7_919_000_000
"""Suffix seed of draw j: SUFFIX_SEED_BASE + j (the same for every point and counterexample)."""
_CHECKERS = {inv.name: inv for inv in INVARIANTS}
Progress = Callable[[int, int], None]
"""progress(points evaluated, points planned so far)."""


@dataclass(frozen=True, slots=True)
class Point:
    cut: int
    """Records of the counterexample's history kept; the suffix starts after record ``cut - 1``."""
    time_s: float
    """When the cut falls: the time of the last kept record (the fault's instant for a fault's points)."""
    why: str
    """'start', 'before fault', 'after fault', 'violated' (the last witness record kept), 'between', 'bisect'."""
    same: int
    """Suffix draws that ended in the same violation."""
    draws: int
    fault: str = ""
    """For a fault's points: the fault, as its script line."""

    @property
    def share(self) -> float:
        return self.same / self.draws if self.draws else 0.0


@dataclass(frozen=True, slots=True)
class Moment:
    """A decisive moment: the curve moves by at least :data:`JUMP` between two neighbouring points."""

    before: Point
    after: Point
    record: int
    """The record that names it: the fault's record when a fault was decided between the points, else the
    last record the later point keeps (the only one added when the points are one record apart)."""
    records: tuple[int, int]
    """The records added between the points: ``range(*records)``."""
    faults: tuple[str, ...]
    """The faults decided between the points, as script lines."""

    @property
    def rise(self) -> float:
        return self.after.share - self.before.share


@dataclass
class Curve:
    """A counterexample's causality curve, and what it cost."""

    invariant: str
    explanation: str
    """The id of the finding or non-guarantee that explains the violation, '' when none does."""
    history: list[Op] = field(repr=False)
    points: list[Point]
    moments: list[Moment]
    decided: list[Decided]
    end_cut: int
    complete: bool
    """False when the budget ran out before every planned point (and bisection) was evaluated."""
    simulations: int
    requests: int
    cpu_s: float
    draws: int = DRAWS
    reproduced: bool = True
    """The replay gave the file's digest and violated its invariant (else the curve is of what it gave)."""

    def document(self) -> dict[str, Any]:
        """Plain data for reports (``reports.causality``) and JSON."""
        return {
            "invariant": self.invariant,
            "explanation": self.explanation or "unexplained",
            "draws": self.draws,
            "jump": JUMP,
            "records": len(self.history),
            "end_cut": self.end_cut,
            "complete": self.complete,
            "reproduced": self.reproduced,
            "simulations": self.simulations,
            "requests": self.requests,
            "cpu_s": round(self.cpu_s, 2),
            "points": [
                {"cut": p.cut, "time_s": p.time_s, "why": p.why, "same": p.same, "draws": p.draws, "fault": p.fault}
                for p in self.points
            ],
            "moments": [
                {
                    "from_cut": m.before.cut,
                    "to_cut": m.after.cut,
                    "time_s": self.history[m.record].time_s if m.record < len(self.history) else m.after.time_s,
                    "record": m.record,
                    "records": list(m.records),
                    "faults": list(m.faults),
                    "before": m.before.share,
                    "after": m.after.share,
                }
                for m in self.moments
            ],
        }


Recurs = Callable[[list[Op]], bool]


def same_violation(invariant: str, entry: Finding | NonGuarantee | None) -> Recurs:
    """Whether a history shows the same violation: ``invariant`` violated and recognised by ``entry``'s
    recogniser (for a violation nothing explained: violated, and nothing explains it). The recogniser is
    asked directly rather than through ``explain``'s first match, so a re-run that also shows an earlier
    registered mechanism still counts when this one recurs."""
    checker = _CHECKERS[invariant]

    def recurs(history: list[Op]) -> bool:
        index = index_of(history)
        verdict = check_all(index, (checker,))[invariant]
        if verdict.valid is not Validity.INVALID:
            return False
        if entry is None:
            return explain(invariant, index, verdict) is None
        return entry.recognise(index, verdict)

    return recurs


@dataclass
class _Run:
    """One curve's inputs and running totals."""

    cx: Counterexample
    scenario: Scenario
    recurs: Recurs
    draws: int
    budget_requests: int | None
    sequential: bool = True
    """Stop a point's draws once its interval is narrow enough (else always ``draws``)."""
    simulations: int = 0
    requests: int = 0

    per_point: int = 0
    """Requests one point is expected to cost: ``draws`` runs the size of the original."""

    def spent(self) -> bool:
        """Whether one more point would overrun the budget (checked before a point, never during one)."""
        return self.budget_requests is not None and self.requests + self.per_point > self.budget_requests

    def share(self, cut: int) -> tuple[int, int]:
        """(same, draws) of the point at ``cut``: draws until its interval is narrow enough (see the module)."""
        cx, same, drawn = self.cx, 0, 0
        while drawn < self.draws and not (self.sequential and narrow_enough(same, drawn)):
            j = drawn
            result = simulate_from(
                self.scenario,
                cx.policy,
                cx.seed,
                flags=dict(cx.flags),
                script=cx.faults,
                reverse=cx.ties,
                records=cut,
                suffix_seed=SUFFIX_SEED_BASE + j,
                judge=False,
            )
            self.simulations += 1
            self.requests += int(result.stats["requests"])
            same += self.recurs(result.history)
            drawn += 1
        return same, drawn


def interval_width(same: int, draws: int) -> float:
    """Width of the Wilson 95% interval of ``same`` in ``draws`` (1 with no draws): the same interval as
    ``reports.stats.wilson``, which this layer may not import (its test compares the two)."""
    if draws <= 0:
        return 1.0
    p, z2 = same / draws, _Z95 * _Z95
    centre = (p + z2 / (2 * draws)) / (1 + z2 / draws)
    half = _Z95 / (1 + z2 / draws) * math.sqrt(p * (1 - p) / draws + z2 / (4 * draws * draws))
    lower = 0.0 if same == 0 else max(0.0, centre - half)
    upper = 1.0 if same == draws else min(1.0, centre + half)
    return upper - lower


def narrow_enough(same: int, draws: int) -> bool:
    """Whether a point of ``same`` in ``draws`` may stop: its interval is at most HALF_WIDTH either side."""
    return interval_width(same, draws) <= 2 * HALF_WIDTH


def curve(
    cx: Counterexample,
    *,
    draws: int = DRAWS,
    between: int = BETWEEN,
    budget_requests: int | None = None,
    bisect: bool = True,
    sequential: bool = True,
    progress: Progress | None = None,
) -> Curve:
    """The causality curve of ``cx`` (see the module): deterministic for the same arguments. ``draws`` is
    the most a point draws; ``sequential=False`` makes every point draw exactly that many."""
    started = time.process_time()
    scenario = cx.effective_scenario()
    original, decided = decisions(scenario, cx.policy, cx.seed, flags=dict(cx.flags), script=cx.faults, reverse=cx.ties)
    history = original.history
    verdict = original.verdicts[cx.invariant]
    reproduced = original.digest == cx.digest and verdict.valid is Validity.INVALID
    entry = explain(cx.invariant, history, verdict) if verdict.valid is Validity.INVALID else None
    end_cut = (max(verdict.witness) + 1) if verdict.witness else len(history)
    run = _Run(cx, scenario, same_violation(cx.invariant, entry), draws, budget_requests, sequential)
    run.per_point = draws * int(original.stats["requests"])
    planned = _plan(history, decided, end_cut, between)
    points: dict[int, Point] = {}
    tell = progress or (lambda done, total: None)
    complete = True
    for i, (cut, when, why, fault) in enumerate(planned):
        if run.spent():
            complete = False
            break
        points[cut] = Point(cut, when, why, *run.share(cut), fault)
        tell(i + 1, len(planned))
    while complete and bisect:
        window = _widest_jump(sorted(points.values(), key=lambda p: p.cut), decided)
        if window is None:
            break
        if run.spent():
            complete = False
            break
        cut = (window[0].cut + window[1].cut) // 2
        points[cut] = Point(cut, _time_of(history, cut), "bisect", *run.share(cut))
        tell(len(points), len(points))
    ordered = sorted(points.values(), key=lambda p: p.cut)
    return Curve(
        invariant=cx.invariant,
        explanation="" if entry is None else entry.id,
        history=history,
        points=ordered,
        moments=moments(ordered, decided, history),
        decided=decided,
        end_cut=end_cut,
        complete=complete,
        simulations=run.simulations,
        requests=run.requests,
        cpu_s=time.process_time() - started,
        draws=draws,
        reproduced=reproduced,
    )


def _time_of(history: Sequence[Op], cut: int) -> float:
    return history[min(cut, len(history)) - 1].time_s if cut > 0 and history else 0.0


Planned = tuple[int, float, str, str]
"""(cut, time, why, fault) of a point to evaluate."""


def _plan(history: Sequence[Op], decided: Sequence[Decided], end_cut: int, between: int) -> list[Planned]:
    """Every planned point, most telling first, one per cut."""
    planned: list[Planned] = [(0, 0.0, "start", ""), (end_cut, _time_of(history, end_cut), "violated", "")]
    for d in decided:
        if d.records < end_cut:
            text = d.fault.text()
            planned += [(d.records, d.time_s, "before fault", text), (d.records + 1, d.time_s, "after fault", text)]
    for j in range(1, between + 1):
        cut = round(j * end_cut / (between + 1))
        planned.append((cut, _time_of(history, cut), "between", ""))
    seen: set[int] = set()
    unique = []
    for entry in planned:
        if entry[0] not in seen:
            seen.add(entry[0])
            unique.append(entry)
    return unique


def _widest_jump(points: Sequence[Point], decided: Sequence[Decided]) -> tuple[Point, Point] | None:
    """The neighbouring points with the largest move of at least JUMP that are more than one record apart
    and have no fault decided between them (a fault's own points are already one decision apart)."""
    best: tuple[float, Point, Point] | None = None
    for a, b in itertools.pairwise(points):
        move = abs(b.share - a.share)
        if move < JUMP or b.cut - a.cut <= 1 or _faults_between(a, b, decided):
            continue
        if best is None or move > best[0]:
            best = (move, a, b)
    return None if best is None else (best[1], best[2])


def _faults_between(a: Point, b: Point, decided: Sequence[Decided]) -> list[Decided]:
    """Faults whose decision the later point keeps and the earlier one leaves to its suffix."""
    return [d for d in decided if a.cut <= d.records < b.cut]


def moments(points: Sequence[Point], decided: Sequence[Decided], history: Sequence[Op]) -> list[Moment]:
    """Every decisive moment of a curve (neighbouring points at least JUMP apart), in time order."""
    found = []
    for a, b in itertools.pairwise(points):
        if abs(b.share - a.share) < JUMP:
            continue
        faults = _faults_between(a, b, decided)
        record = _fault_record(history, faults[-1]) if faults else max(b.cut - 1, 0)
        found.append(Moment(a, b, record, (a.cut, b.cut), tuple(d.fault.text() for d in faults)))
    return found


def _fault_record(history: Sequence[Op], decided: Decided) -> int:
    """The record of the fault's effect: the first nemesis fault record of its family from its decision on
    (the decision itself leaves no record; a fault that took no effect names the next record)."""
    for op in history[decided.records :]:
        if op.op == H.FAULT and op.value.get("family") == decided.fault.family:
            return op.index
    return min(decided.records, len(history) - 1)
