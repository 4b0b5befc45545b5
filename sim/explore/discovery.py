"""Mechanisms as the unit of discovery: which violations a search keeps, and when each was first met.

Two violations of one invariant can be two defects (F-18 behind F-01's ``non_idempotent_at_most_once``),
and one defect can violate several invariants. So a search names every violation it meets by its
mechanism (:func:`register.mechanism.mechanism_of`: the registered finding or recorded non-guarantee
whose recogniser accepts it, else the shape of its witness) and keeps the first violation of each
distinct mechanism as the one to shrink. A mechanism's key is the register entry's id (``F-18``,
``NG-queued-orphan``) whichever invariant showed it, or, for an unexplained violation, the invariant
and the witness shape. :class:`Discovery` records for each key the simulation and second of its first
meeting, the invariants it was seen violating and how many simulations showed it.

Pure bookkeeping over judged results; knows the register's mechanism, never the world.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from checks import Index
from register.mechanism import mechanism_of
from sim.world.simulate import SimulationResult

UNEXPLAINED_PREFIX = "unexplained: "
COST_PREFIX = "cost:"


def mechanism_key(invariant: str, label: str) -> str:
    """The key a mechanism is reported once under: a register id alone, or for an unexplained
    violation its invariant and witness shape (or the invariant alone when no label was recorded)."""
    if label and not label.startswith(UNEXPLAINED_PREFIX):
        return label
    return f"{invariant} {label}".rstrip()


def mechanism_tag(label: str) -> str:
    """What names a mechanism's file: its register id, or ``unexplained-`` and a short hash of the
    witness shape (stable across runs: a search that meets it again names the same file)."""
    if label and not label.startswith(UNEXPLAINED_PREFIX) and not label.startswith(COST_PREFIX):
        return label
    return "unexplained-" + hashlib.blake2b(label.encode(), digest_size=3).hexdigest()


@dataclass
class Met:
    """One mechanism as a search met it."""

    key: str
    label: str
    invariant: str
    """The invariant it was first seen violating."""
    simulations: int
    """The search's simulations up to and including the first one that showed it."""
    seconds: float
    """Search seconds until then."""
    count: int = 1
    """Simulations that showed it."""
    invariants: list[str] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        return {
            "mechanism": self.label,
            "invariant": self.invariant,
            "invariants": list(self.invariants),
            "first_simulation": self.simulations,
            "first_s": round(self.seconds, 3),
            "simulations_met": self.count,
        }


@dataclass
class Discovery:
    """Every mechanism a search met, in the order first met (see the module)."""

    met: dict[str, Met] = field(default_factory=dict)
    branched: int = 0
    """Simulations that were branches of earlier ones (the guided explorer's; 0 for the swarm)."""
    interrupted: bool = False
    """The search was ended by Ctrl-C (SIGINT): what it met so far is all there is."""

    def see(
        self, result: SimulationResult, simulations: int, seconds: float, wants: Callable[[str], bool]
    ) -> Iterator[tuple[str, Met, bool]]:
        """Name each violation of ``result`` whose invariant is wanted: yields (invariant, its mechanism's
        entry, whether this is the first meeting). Each mechanism counts once per simulation."""
        counted: set[str] = set()
        ix: Index | None = None
        for invariant in result.violations:
            if not wants(invariant):
                continue
            if invariant.startswith(COST_PREFIX):
                label = invariant  # a cost's mechanism is the cost itself (sim.explore.costs)
            else:
                ix = ix if ix is not None else result.indexed()
                label = mechanism_of(invariant, ix, result.verdicts[invariant]).label()
            key = mechanism_key(invariant, label)
            entry = self.met.get(key)
            first = entry is None
            if entry is None:
                entry = self.met[key] = Met(key, label, invariant, simulations, seconds, 0)
            if key not in counted:
                counted.add(key)
                entry.count += 1
            if invariant not in entry.invariants:
                entry.invariants.append(invariant)
            yield invariant, entry, first

    def merge(self, other: Discovery, renumber: Callable[[int], int]) -> None:
        """Fold another search's mechanisms into this one (a parallel worker's: ``renumber`` maps its
        simulation numbers to the whole search's); the earlier first meeting wins."""
        self.branched += other.branched
        self.interrupted = self.interrupted or other.interrupted
        for key, theirs in other.met.items():
            number = renumber(theirs.simulations)
            mine = self.met.get(key)
            if mine is None:
                self.met[key] = Met(
                    key, theirs.label, theirs.invariant, number, theirs.seconds, theirs.count, list(theirs.invariants)
                )
                continue
            if (number, theirs.seconds) < (mine.simulations, mine.seconds):
                mine.simulations, mine.seconds, mine.invariant = number, theirs.seconds, theirs.invariant
            mine.count += theirs.count
            mine.invariants.extend(i for i in theirs.invariants if i not in mine.invariants)

    def documents(self) -> list[dict[str, Any]]:
        ordered = sorted(self.met.values(), key=lambda m: (m.simulations, m.key))
        return [m.document() for m in ordered]


__all__ = ["UNEXPLAINED_PREFIX", "Discovery", "Met", "mechanism_key", "mechanism_tag"]
