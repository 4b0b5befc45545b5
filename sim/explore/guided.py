"""The guided explorer: fresh swarm draws plus branches that keep a milestone's rare faults.

Plain random search pays for a chain of rare events multiplicatively: a mechanism that needs two
unlikely faults (F-18: a commit stall of the worker's fence stamp past its lease, then one of the
reaper's requeue) costs about 1/(p1 p2) draws. This explorer pays for the first once, then branches
from it (multilevel splitting, in the spirit of checkpoint-and-branch search):

- every judged history is reduced to abstract *features* (:func:`features`): each fault by family,
  kind, the kind of statement or call it struck (T-number, site, actor) and its size against the
  lease; consecutive pairs of those; each store statement's outcome on the row (matched, changed,
  status, whether a fence stood); segment outcomes; final row states; the coverage properties
  reached; the mechanisms of its violations;
- a history that shows a feature no earlier one showed is a *milestone*. Its decisive faults are the
  faults behind its new features (for a new fault feature, that fault; for a new pair, both; for a new
  state, every fault fired before the record that showed it);
- a *branch* picks a milestone (weighted by how rare its features still are, less for each branch
  already taken from it), keeps its decisive faults (or all of its faults up to them, or all) at their
  anchors (run, request type, occurrence: :meth:`sim.world.faults.FaultPlan.keep`) and draws a fresh
  world seed: every latency, every other fault and the order of events are drawn afresh around the
  kept ones. A branch that shows new features is a milestone in turn, so chains are climbed a level
  at a time;
- the share of simulations spent on branches adapts to what they yield: new features per simulation,
  branches against fresh draws (exponential averages), kept between :data:`BRANCH_SHARE`.

Why anchors and a fresh seed rather than an exact prefix (:mod:`sim.world.conditioned`): a branch is
then an ordinary profile-mode simulation whose fired faults, in script mode, replay it exactly from its
own seed, so everything found is shrunk, written and replayed like a swarm find (an exact prefix re-draws
the world's stream at the cut, which no fault script can replay). The exact prefix-conditioned runs are
what the rate estimator uses (:mod:`sim.explore.splitting`).

Deterministic for a seed and ``simulations``: the fresh draws are the swarm's (:func:`explorer_draws`),
every other choice comes from one ``random.Random`` of the seed, and nothing depends on time but the
wall-clock budget. Knows the world and the register's mechanisms through the swarm's bookkeeping.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from checks import history as H
from checks.history import Op, OpType
from model.constants import LEASE_S
from scenarios.intensity import Tempo, with_tempo
from scenarios.schema import FaultsModel, Scenario
from scenarios.script import Fault
from sim.explore.base import Budget, Clock, ExploreReport, Progress, Target
from sim.explore.discovery import Discovery
from sim.explore.footholds import FRESH_SHARE, Drawn, Footholds
from sim.explore.footholds import branch as branch_from
from sim.explore.swarm import Candidate, explorer_draws, finish, keep_new
from sim.world.simulate import SimulationResult, simulate

BRANCH_SHARE = (0.25, 0.85)
"""The least and most share of simulations spent on branches once the warm-up is over."""
WARMUP = 50
"""Fresh draws before the first branch: the milestones need something to be rare against."""
DECAY = 0.98
"""Weight of the past in the yield averages that set the branch share."""
PAIRS = 8
"""Pairs are formed among a history's first PAIRS faults (a chain worth climbing is short)."""
TOURNAMENT = 8
"""Milestones drawn per branch, of which the rarest (least branched) is taken (:meth:`Pool.pick`)."""


@dataclass
class Milestone:
    """A history that showed new features, as a branch needs it."""

    seed: int
    profile: FaultsModel
    tempo: Tempo
    faults: tuple[Fault, ...]
    decisive: tuple[int, ...]
    """Positions in ``faults`` of the faults behind its new features."""
    new: tuple[str, ...]
    """The features it was first to show."""
    branches: int = 0


def _size(family: str, value: Mapping[str, object]) -> str:
    """A fault's size against the lease, in a few buckets (what decides whether it outlives a lease)."""
    raw = value.get("slow_s", value.get("duration_s", value.get("offset_s")))
    if not isinstance(raw, (int, float)):
        return ""
    ratio = abs(float(raw)) / LEASE_S
    bucket = "<1/2" if ratio < 0.5 else "<1" if ratio < 1 else "<2" if ratio < 2 else ">=2"
    sign = "-" if family == "clock_skew" and float(raw) < 0 else ""
    return f" {sign}{bucket}L"


def _struck(op: Op | None) -> str:
    if op is None:
        return "?"
    v = op.value
    if op.op == H.STORE:
        return f"{str(v.get('transition', '')).partition(' ')[0]} {v.get('site', '')} {v.get('actor', '')}"
    if op.op == H.READ:
        return f"read {v.get('what', '')} {v.get('site', '')}"
    if op.op in (H.TOOL, H.PROVIDER):
        return f"{op.op} {v.get('effect', v.get('true_effect', ''))}"
    return op.op


def features(history: Sequence[Op]) -> tuple[list[str], list[tuple[str, int]]]:
    """The abstract features of one history (see the module), and for each fault record in order its
    feature and the record's index."""
    found: list[str] = []
    faults: list[tuple[str, int]] = []
    last: dict[str, Op] = {}
    for op in history:
        v = op.value
        kind = op.op
        if kind == H.FAULT:
            family = str(v.get("family", ""))
            feature = f"F {family}/{v.get('kind', '')} @ {_struck(last.get(str(v.get('target', ''))))}"
            feature += _size(family, v)
            faults.append((feature, op.index))
            found.append(feature)
            continue
        if kind == H.STORE and op.type is not OpType.INVOKE:
            row = v.get("row")
            state = ""
            if isinstance(row, dict):
                state = f" {row.get('status', '')} fence={bool(row.get('pending_effect'))}"
            number = str(v.get("transition", "")).partition(" ")[0]
            found.append(
                f"S {number} {v.get('site', '')} {v.get('actor', '')} {op.type.value}"
                f" m={v.get('matched', '')} c={v.get('changed', '')}{state}"
            )
        elif kind == H.SEGMENT and op.type is not OpType.INVOKE:
            outcome = v.get("outcome")
            found.append(f"G {v.get('entry', '')} {outcome if isinstance(outcome, str) else op.type.value}")
        elif kind == H.FINAL:
            row = v.get("row")
            if isinstance(row, dict):
                found.append(f"R {row.get('status', '')} {row.get('termination_reason', '')}")
        last[op.process] = op
    shown = [f for f, _ in faults[:PAIRS]]
    found.extend(f"P {a} -> {b}" for a, b in itertools.pairwise(shown))
    return found, faults


class Pool:
    """The features seen so far, with counts, and the milestones (see the module)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.milestones: list[Milestone] = []

    def observe(
        self, result: SimulationResult, drawn: tuple[int, FaultsModel, Tempo], mechanisms: Sequence[str]
    ) -> int:
        """Count ``result``'s features; make it a milestone if it showed new ones. Returns how many were new."""
        found, fault_records = features(result.history)
        found.extend(f"M {m}" for m in mechanisms)
        found.extend(f"C {name}" for name, reached in result.coverage.items() if reached)
        new: list[str] = []
        for feature in dict.fromkeys(found):
            seen = self.counts.get(feature, 0)
            if seen == 0:
                new.append(feature)
            self.counts[feature] = seen + 1
        script = result.fault_script
        if not new or not script:
            return len(new)
        decisive = _decisive(new, fault_records, len(script), result.history)
        self.milestones.append(Milestone(drawn[0], drawn[1], drawn[2], tuple(script), decisive, tuple(new)))
        return len(new)

    def weight(self, milestone: Milestone) -> float:
        rarest = min(self.counts.get(f, 1) for f in milestone.new)
        return 1.0 / (rarest * math.sqrt(1 + milestone.branches))

    def pick(self, rng: random.Random) -> Milestone:
        """A tournament: of :data:`TOURNAMENT` milestones drawn uniformly, the one of most weight (the
        earliest of equal ones). Constant work per branch, however many milestones there are."""
        drawn = [self.milestones[int(rng.random() * len(self.milestones))] for _ in range(TOURNAMENT)]
        return max(drawn, key=self.weight)


def _decisive(
    new: Sequence[str], fault_records: Sequence[tuple[str, int]], fired: int, history: Sequence[Op]
) -> tuple[int, ...]:
    """Positions of the faults behind ``new`` (fault records pair with fired faults in order; when their
    counts differ, every fault is decisive)."""
    if len(fault_records) != fired:
        return tuple(range(fired))
    chosen: set[int] = set()
    by_feature: dict[str, list[int]] = {}
    for position, (feature, _) in enumerate(fault_records):
        by_feature.setdefault(feature, []).append(position)
    shown = [f for f, _ in fault_records[:PAIRS]]
    for feature in new:
        if feature in by_feature:
            chosen.add(by_feature[feature][0])
        elif feature.startswith("P "):
            for position, (a, b) in enumerate(itertools.pairwise(shown)):
                if feature == f"P {a} -> {b}":
                    chosen.update((position, position + 1))
                    break
        else:
            index = _first_record(history, feature)
            chosen.update(p for p, (_, record) in enumerate(fault_records) if index is None or record < index)
    return tuple(sorted(chosen)) or tuple(range(fired))


def _first_record(history: Sequence[Op], feature: str) -> int | None:
    """The record at which a state feature first showed (None: not a record's, e.g. coverage)."""
    if feature[:2] not in ("S ", "G ", "R "):
        return None
    for op in history:
        found, _ = features([op])
        if feature in found:
            return op.index
    return None


def branch_faults(milestone: Milestone, rng: random.Random) -> tuple[Fault, ...]:
    """What a branch keeps: the decisive faults (half the time), every fault up to the last of them (a
    third), or every fault of the milestone."""
    u = rng.random()
    if u < 0.5:
        return tuple(milestone.faults[i] for i in milestone.decisive)
    if u < 0.83:
        return milestone.faults[: max(milestone.decisive) + 1]
    return milestone.faults


def guided_search(
    target: Target,
    budget: Budget,
    clock: Clock,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
    discovery: Discovery | None = None,
) -> tuple[list[Candidate], int]:
    """The guided search (see the module); the swarm's :func:`sim.explore.swarm.search` signature."""
    base, policy = target.scenario, target.policy
    candidates: list[Candidate] = []
    found = discovery if discovery is not None else Discovery()
    pool = Pool()
    rng = random.Random(budget.seed * 2_654_435_761 + 97)
    draws = explorer_draws(target, budget.seed)
    timed: dict[Tempo, Scenario] = {}
    yields = {"fresh": 1.0, "branch": 1.0}
    simulations = branched = 0
    holds = Footholds(
        chains(budget),
        spans={tool.name: tool.latency_s for tool in base.tools},
        named=chains(budget) if budget.stop_at_first and budget.mechanisms else (),
    )
    try:
        while clock.elapsed() < budget.seconds and (budget.simulations is None or simulations < budget.simulations):
            if stop is not None and stop():
                break
            foothold = holds.pick(rng) if holds.findings and rng.random() >= FRESH_SHARE else None
            if foothold is not None:
                at = with_tempo(base, foothold.tempo).with_faults(foothold.profile)
                climbed, drawn = branch_from(foothold, at, policy, rng)
                climbed = target.judged(climbed)
                simulations += 1
                holds.branched += 1
                shown: list[str] = []
                stopping = keep_new(
                    found,
                    candidates,
                    budget,
                    climbed,
                    (drawn.seed, drawn.profile, drawn.tempo),
                    clock.elapsed(),
                    simulations,
                    shown,
                    drawn.cuts,
                )
                holds.observe(climbed, drawn, shown)
                holds.close(shown)
                if progress is not None:
                    progress(simulations, len(candidates))
                if stopping:
                    break
                continue
            share = yields["branch"] / (yields["branch"] + yields["fresh"])
            share = min(BRANCH_SHARE[1], max(BRANCH_SHARE[0], share))
            branch = simulations >= WARMUP and bool(pool.milestones) and rng.random() < share
            keep: tuple[Fault, ...] = ()
            if branch:
                milestone = pool.pick(rng)
                milestone.branches += 1
                keep = branch_faults(milestone, rng)
                seed, profile, tempo = rng.getrandbits(32), milestone.profile, milestone.tempo
                branched += 1
            else:
                seed, profile, tempo = next(draws)
            scenario = timed.get(tempo)
            if scenario is None:
                scenario = with_tempo(base, tempo)
                if len(timed) < 256:
                    timed[tempo] = scenario
            result = target.judged(simulate(scenario.with_faults(profile), policy, seed, keep=keep))
            simulations += 1
            met: list[str] = []
            stopping = keep_new(
                found, candidates, budget, result, (seed, profile, tempo), clock.elapsed(), simulations, met
            )
            new = pool.observe(result, (seed, profile, tempo), met)
            holds.observe(result, Drawn(seed, profile, tempo), met)
            holds.close(met)
            side = "branch" if branch else "fresh"
            yields[side] = DECAY * yields[side] + (1 - DECAY) * 10.0 * new
            if progress is not None:
                progress(simulations, len(candidates))
            if stopping:
                break
    except KeyboardInterrupt:
        found.interrupted = True  # Ctrl-C: the simulation in flight is dropped, the rest is kept
    found.branched = branched + holds.branched
    return candidates, simulations


CLIMBED = ("F-15", "F-16", "F-18", "F-21", "F-13", "F-20", "F-19")
"""The chains the explorer climbs. F-16's last step (a lagging stamp) leaves a timing coincidence that
no further step splits: its branches are aimed at it where the stamp's write can return at a tick
(:mod:`sim.explore.aim`), and ranked by how close they came to it where not
(:meth:`sim.explore.footholds.Footholds.closest`). Climbed by steps alone it did worse than not at all
(median 738 simulations to F-16 over 10 seeds, against 577 for the milestone search and 1,664 for the
swarm)."""


def chains(budget: Budget) -> tuple[str, ...]:
    """The chains a search climbs (:data:`CLIMBED`): those of the named mechanisms when the search stops
    at them; otherwise every one but :data:`NAMED_ONLY`. With none, the search is the milestone search
    alone, draw for draw."""
    if budget.stop_at_first and budget.mechanisms is not None:
        return tuple(f for f in CLIMBED if f in budget.mechanisms)
    return tuple(f for f in CLIMBED if f not in NAMED_ONLY)


NAMED_ONLY = ("F-16", "F-21", "F-13", "F-20", "F-19")
"""Chains climbed only by a search that names their finding. F-16's footholds are many (about half the
fresh draws at deployment ranges take its last step) and each may take
:data:`sim.explore.footholds.TIMED_BRANCHES` branches,
so an open search climbing it spent its budget there: `default` at deployment ranges, every family,
1,500 simulations, seeds 0 and 1, met 23 mechanisms at each seed, against 24 and 25 without it (F-16
itself lost at both seeds, F-10 and F-13 at one). The chains of F-13, F-19, F-20 and F-21 are climbed
only when named too: an open search's draws stay as they were measured. F-22's chain
(:mod:`register.precursors`) is not climbed: what is rare is after its steps (the holder stamping a fence
between the reaper's snapshot and its dead-letter), and climbing it met F-22 at none of seeds 0-9 within
2,000 simulations against one for the milestone search alone (climbing from a spent budget and a reaper
ahead as its first steps: 1 of seeds 10-16)."""


class GuidedExplorer:
    """Search (fresh draws and branches), then shrink the first violation of each mechanism, as the swarm."""

    name = "guided"

    def explore(self, target: Target, budget: Budget, progress: Progress | None = None) -> ExploreReport:
        report = ExploreReport(self.name, target)
        clock = Clock()
        found = Discovery()
        candidates, report.simulations = guided_search(target, budget, clock, progress, discovery=found)
        report.extra["search_s"] = round(clock.elapsed(), 3)
        report.extra["branched"] = found.branched
        finish(report, candidates, budget, found)
        report.elapsed_s = clock.elapsed()
        return report
