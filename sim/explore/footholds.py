"""Footholds: multilevel splitting along a finding's chain, for the guided explorer.

A rare mechanism is a chain of steps (:mod:`register.precursors`: F-18 is a stalled fence stamp, then
a requeue decided on a snapshot without that fence, then a requeue that stalls past the stamp, ...).
Plain random search pays for the chain multiplicatively. Here a run that takes a step of a chain
becomes a *foothold* at that level: the run is cut right after the step's record, and each *branch*
replays that prefix exactly and draws the rest afresh (:func:`sim.world.conditioned.simulate_cuts`:
a fresh suffix seed, the scenario's targeted faults still ahead, and the very next request decided
with every enabled fault family at :func:`sim.explore.profiles.raised` rates, the rest at the drawn
ones; a chain that names what its next step needs, :data:`register.precursors.NEEDS`, has that request
decided by that instead, :func:`sim.explore.profiles.for_need`). A branch that takes a further step is
a foothold one level deeper, cut again after that step: the chain is climbed a level at a time, and
each level's rare step is paid for once per foothold rather than once per the product of all.

Which foothold: the deepest one that has branches left (each gets :data:`BRANCHES_PER_LEVEL` times its
level, counted past the chain's common steps; one at a step nearly every run takes gets
:data:`COMMON_BRANCHES`: a foothold whose state cannot go on, e.g. a stall that ends before the reaper's
tick, is given up, one whose next step is timing alone after :data:`FRUITLESS` branches that went no
deeper), of the chain a bandit picks by what its branches yielded (Thompson sampling over the share of
branches that went a level deeper or met the finding). A chain that ends in a timing coincidence
(:data:`register.precursors.TIMED`, F-16) is branched where its branches can be *aimed* at it
(:mod:`sim.explore.aim`: a suffix seed chosen so the stamped write returns in the window before a reaper
tick), and otherwise seldom (:data:`UNAIMED_SHARE`): a fresh draw gives an aim sooner.

Every branch is replayable: it is the root's seed, profile, tempo and fault script with the list of
cuts (records kept, suffix seed), which a counterexample file carries (``cuts``) and ``replay`` runs.
Deterministic for a seed: every choice comes from the explorer's ``random.Random``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from model.policy import Policy
from register.precursors import COMMON, PRECURSORS, STEPS, TIMED, progress
from register.precursors import NEEDS as CHAIN_NEEDS
from scenarios.intensity import Tempo
from scenarios.schema import FaultsModel, Scenario
from scenarios.script import Fault
from sim.explore.aim import Aim, aim_at, seed_for
from sim.explore.profiles import BURST, can_strike, for_need, need_of, seed_with_need
from sim.world.conditioned import Cut, simulate_cuts
from sim.world.simulate import SimulationResult

BRANCHES_PER_LEVEL = 4
"""A foothold at level k gets at most k times this many branches (k counted past its chain's common
steps, :data:`register.precursors.COMMON`)."""
TIMED_BRANCHES = 64
"""A foothold at the end of a chain that leaves a timing coincidence (:data:`register.precursors.TIMED`)
gets at most this many: its branches are chosen by their estimated chance, not by going deeper."""
NEAR_SHARE = 0.2
"""The adaptive level of a timed chain: a branch is *near* when its gap is within the lowest fifth of the
gaps measured so far (or inside the window)."""
FRUITLESS = 4
"""A foothold whose next step is timing alone (need ``""``) is given up after this many branches none of
which went a step deeper: its state most likely cannot go on (F-15's requeue with no worker to claim
the run before the stall ends), and more branches only redraw the same timing."""
COMMON_BRANCHES = 2
"""Branches of a foothold at a step nearly every run takes (:data:`register.precursors.COMMON`)."""
UNAIMED_SHARE = 0.25
"""While none of a timed chain's footholds has an open aim (:mod:`sim.explore.aim`), the share of the
picks that fall to the chain that branch plainly (by near share at its last step, by step below it); the
rest go to fresh draws. A fresh draw gave a foothold with an aim about six times as often as a plain
branch did (7 of 54 against 3 of 146, F-16, seeds 10-19); median simulations to F-16 over seeds 10-69:
5 at 0, 0.1 and 0.25 (means 5.4, 5.5, 5.8); 6.5 branching plainly at every pick as before (with the
borrowed tempo of before: mean 11.2, the longest 70). Kept above 0 so that a world whose windows no aim
can read (another transport's) still climbs the chain."""
FRESH_SHARE = 0.2
"""While footholds have branches left, this share of simulations is still spent elsewhere (fresh
draws find new roots, which a foothold whose state is doomed cannot)."""


@dataclass
class Foothold:
    """A run cut right after the deepest step it took of one chain."""

    finding: str
    level: int
    seed: int
    profile: FaultsModel
    tempo: Tempo
    script: tuple[Fault, ...]
    cuts: tuple[Cut, ...]
    """The cuts the run was made with (empty for a fresh draw); a branch adds its own."""
    cut: int
    """Records a branch keeps."""
    marks: tuple[int, ...] = ()
    """The records that took the chain's steps (a timed chain's gap is measured from the last)."""
    branches: int = 0
    deeper: int = 0
    """Branches that went a step deeper (or met the finding)."""
    gaps: list[float] = field(default_factory=list)
    """A timed chain's: how close the run and each of its branches came to the coincidence (seconds), and"""
    width: float = 0.0
    """the coincidence's window over the spread of what a branch redraws (the run's own measure): the
    wider, the likelier a branch that comes near meets it."""
    aim: Aim | None = None
    """A timed foothold's: where its first branches are aimed at the coincidence (:mod:`sim.explore.aim`)."""

    @property
    def timed(self) -> bool:
        """At the last step of a chain that leaves a timing coincidence (:data:`register.precursors.TIMED`)."""
        return self.finding in TIMED and self.last

    @property
    def last(self) -> bool:
        """At its chain's last step (:data:`register.precursors.STEPS`)."""
        return self.level >= STEPS[self.finding]

    @property
    def need(self) -> str:
        """What the request right after this foothold's cut is decided at (:data:`register.precursors.NEEDS`)."""
        return CHAIN_NEEDS.get(self.finding, {}).get(self.level, "raise")

    @property
    def exhausted(self) -> bool:
        if self.timed:
            return self.branches >= TIMED_BRANCHES
        if self.level <= COMMON.get(self.finding, 0):
            return self.branches >= COMMON_BRANCHES
        if self.need == "" and not self.deeper and self.branches >= FRUITLESS:
            return True
        return self.branches >= BRANCHES_PER_LEVEL * (self.level - COMMON.get(self.finding, 0))


@dataclass(frozen=True, slots=True)
class Drawn:
    """What one simulation was, as a foothold or a candidate needs it."""

    seed: int
    profile: FaultsModel
    tempo: Tempo
    cuts: tuple[Cut, ...] = ()
    parent: Foothold | None = None
    aimed: bool = False
    """A branch whose suffix seed was chosen to meet the coincidence (not a measure of how near branches come)."""


@dataclass
class Footholds:
    """The footholds of a search, by chain, and the bandit's tallies."""

    findings: tuple[str, ...] = tuple(PRECURSORS)
    pool: dict[str, list[Foothold]] = field(default_factory=dict)
    tally: dict[str, list[int]] = field(default_factory=dict)
    """Per chain: [branches that went deeper or met the finding, branches that did not]."""
    branched: int = 0
    gaps: dict[str, list[float]] = field(default_factory=dict)
    """Per timed chain, every gap measured so far (what sets the adaptive level)."""
    spans: dict[str, tuple[float, float]] = field(default_factory=dict)
    """The scenario's tool latency spans as written, by tool (a timed foothold's aim needs them; none: no aim)."""
    named: tuple[str, ...] = ()
    """The chains whose common first steps (:data:`register.precursors.COMMON`) are footholds: those of the
    findings a search names. In an open search every fresh draw would be one (F-15's claim), and their
    branches would take the budget the other mechanisms need."""

    def __post_init__(self) -> None:
        for finding in self.findings:
            self.pool.setdefault(finding, [])
            self.tally.setdefault(finding, [0, 0])

    def close(self, met: Sequence[str]) -> None:
        """Stop climbing the chains of the findings in ``met`` (mechanism keys a simulation showed): a
        search reports each mechanism once, so branches toward one already met are spent elsewhere."""
        self.findings = tuple(f for f in self.findings if f not in met)

    def open(self, finding: str) -> list[Foothold]:
        return [f for f in self.pool[finding] if not f.exhausted]

    def pick(self, rng: random.Random) -> Foothold | None:
        """The foothold to branch from next (see the module), or None when none has branches left."""
        best: tuple[float, Foothold] | None = None
        for finding in self.findings:
            candidates = self.open(finding)
            if not candidates:
                continue
            deeper, not_deeper = self.tally[finding]
            score = rng.betavariate(1 + deeper, 1 + not_deeper)
            if best is None or score > best[0]:
                deepest = max(candidates, key=lambda f: (f.level, -f.branches))
                if finding in TIMED:
                    target = aimed(candidates)
                    if target is None and rng.random() >= UNAIMED_SHARE:
                        continue  # no aim: a fresh draw gives one sooner than a plain branch
                    if target is None and deepest.timed:
                        target = self.closest(finding, candidates, rng)
                    deepest = target or deepest
                best = (score, deepest)
        return None if best is None else best[1]

    def closest(self, finding: str, candidates: Sequence[Foothold], rng: random.Random) -> Foothold | None:
        """Of a timed chain's footholds at its last step, the one to branch from: Thompson sampling over
        each one's share of *near* branches (gaps within the adaptive level, :data:`NEAR_SHARE`), times
        its window's width (:class:`Foothold`). The level falls as the search finds closer gaps, so the
        footholds that keep coming close are branched again: adaptive multilevel splitting on a
        continuous distance, where no further step of the chain can be cut. None when no candidate was
        measured at the last step (the chain is then climbed as any other)."""
        measured = [f for f in candidates if f.timed and f.gaps]
        if not measured:
            return None
        seen = sorted(self.gaps.get(finding, ()))
        level = seen[int(NEAR_SHARE * (len(seen) - 1))] if seen else 0.0
        best: tuple[float, Foothold] | None = None
        for foothold in measured:
            near = sum(1 for g in foothold.gaps if g <= level)
            score = foothold.width * rng.betavariate(1 + near, 1 + len(foothold.gaps) - near)
            if best is None or score > best[0]:
                best = (score, foothold)
        return None if best is None else best[1]

    def _measure(self, foothold: Foothold, result: SimulationResult) -> None:
        """Add how close ``result`` came to ``foothold``'s (a timed chain's) and to the chain's."""
        measured = TIMED[foothold.finding](result.history, foothold.marks)
        if measured is None:
            return
        gap, width = measured
        if not foothold.gaps:
            foothold.width = width
        foothold.gaps.append(gap)
        self.gaps.setdefault(foothold.finding, []).append(gap)

    def _aim(self, result: SimulationResult, foothold: Foothold, tempo: Tempo, after: int | None = None) -> Aim | None:
        """Where ``foothold``'s branches can be aimed (:func:`sim.explore.aim.aim_at`: at its stamp or a
        later one, or at a stamp from record ``after`` on), its tools' spans at its tempo (as
        :func:`scenarios.intensity.with_tempo` scales them)."""
        if not self.spans:
            return None
        factor = tempo.latency_factor
        spans = {name: (lo * factor, hi * factor) for name, (lo, hi) in self.spans.items()}
        return aim_at(result.history, foothold.marks[-1] if after is None else after, spans)

    def _aimed_later(self, result: SimulationResult, drawn: Drawn, parent: Foothold, after: int) -> int:
        """A branch of a timed foothold that stamped again later (a lagging worker stamps many; another
        lagging one may stamp too) where the write can return at a tick: a foothold at that stamp, with
        its aim. A branch reaches no deeper level on a timed chain, so without this its later stamps
        would be measured but never aimed at. Returns 1 when added, else 0."""
        if not self.spans:
            return 0
        foothold = Foothold(
            parent.finding,
            parent.level,
            drawn.seed,
            drawn.profile,
            drawn.tempo,
            tuple(result.fault_script),
            drawn.cuts,
            0,
        )
        aim = self._aim(result, foothold, drawn.tempo, after)
        if aim is None:
            return 0
        foothold.cut, foothold.marks, foothold.aim = aim.stamp + 1, (aim.lag, aim.stamp), aim
        self._measure(foothold, result)
        self.pool[parent.finding].append(foothold)
        return 1

    def observe(self, result: SimulationResult, drawn: Drawn, met: Sequence[str]) -> int:
        """Add the footholds ``result`` gives (a step deeper than its parent's, on any chain) and score
        the parent's branch. Returns how many footholds were added."""
        added = 0
        parent = drawn.parent
        deeper = False
        last_cut = drawn.cuts[-1][0] if drawn.cuts else 0
        for reached in progress(result.history, self.findings):
            floor = parent.level if parent is not None and parent.finding == reached.finding else 0
            if reached.level <= floor or reached.cut <= last_cut:
                continue
            if reached.level <= COMMON.get(reached.finding, 0) and reached.finding not in self.named:
                continue
            deeper = deeper or (parent is not None and parent.finding == reached.finding)
            foothold = Foothold(
                reached.finding,
                reached.level,
                drawn.seed,
                drawn.profile,
                drawn.tempo,
                tuple(result.fault_script),
                drawn.cuts,
                reached.cut,
                reached.marks,
            )
            if not can_strike(foothold.profile, foothold.need):
                continue  # the fault its next step needs cannot strike under its profile
            if foothold.timed:
                self._measure(foothold, result)
                foothold.aim = self._aim(result, foothold, drawn.tempo)
            self.pool[reached.finding].append(foothold)
            added += 1
        if parent is not None and parent.timed and not drawn.aimed:
            self._measure(parent, result)
        if parent is not None and parent.timed and parent.finding in self.findings:
            added += self._aimed_later(result, drawn, parent, last_cut)
        if parent is not None:
            won = deeper or any(key == parent.finding or key.endswith(f"|{parent.finding}") for key in met)
            self.tally[parent.finding][0 if won else 1] += 1
            parent.deeper += won
        return added


def aimed(candidates: Sequence[Foothold]) -> Foothold | None:
    """Of a timed chain's footholds, one whose branches can still be aimed at the coincidence
    (:mod:`sim.explore.aim`): the least aimed so far, the earliest of equal ones. An aimed branch meets
    the finding at odds no plain one has, so these go before any ranked by how near they came."""
    best: tuple[int, Foothold] | None = None
    for foothold in candidates:
        aim = foothold.aim
        if foothold.timed and aim is not None and aim.open and (best is None or aim.aimed < best[0]):
            best = (aim.aimed, foothold)
    return None if best is None else best[1]


def branch(
    foothold: Foothold, scenario: Scenario, policy: Policy, rng: random.Random
) -> tuple[SimulationResult, Drawn]:
    """One branch of ``foothold`` (``scenario`` already at its tempo and profile): its prefix exactly,
    the rest drawn from a fresh suffix seed, the request right after the cut decided by what the
    foothold's next step needs; while the foothold has an open aim, cut at the aimed write's invoke with
    a suffix seed chosen to meet the coincidence (:mod:`sim.explore.aim`)."""
    foothold.branches += 1
    aim = foothold.aim if foothold.timed and foothold.aim is not None and foothold.aim.open else None
    if aim is not None:
        aim.aimed += 1
        cuts = (*foothold.cuts, (aim.cut, seed_for(aim, rng)))
    else:
        cuts = (*foothold.cuts, (foothold.cut, seed_with_need(rng.getrandbits(32), foothold.need)))
    result = replay(scenario, policy, foothold.seed, foothold.script, cuts, foothold.profile)
    return result, Drawn(foothold.seed, foothold.profile, foothold.tempo, cuts, foothold, aim is not None)


def replay(
    scenario: Scenario, policy: Policy, seed: int, script: Sequence[Fault], cuts: Sequence[Cut], profile: FaultsModel
) -> SimulationResult:
    """A branch again, from what a counterexample file holds (``scenario`` at its tempo and profile):
    after each cut, the request decided by the need its seed carries (:func:`need_of`), then the drawn rates."""
    return simulate_cuts(
        scenario,
        policy,
        seed,
        script=script,
        cuts=cuts,
        burst=BURST,
        suffix_for=lambda suffix_seed: for_need(profile, need_of(suffix_seed)),
    )


__all__ = [
    "BRANCHES_PER_LEVEL",
    "COMMON_BRANCHES",
    "FRESH_SHARE",
    "Drawn",
    "Foothold",
    "Footholds",
    "aimed",
    "branch",
    "replay",
]
