"""Censored medians and speed-ups of the search benchmark.

A search that does not find its defect within its budget counts as that budget (censored); a
median over such runs is a lower bound, and a speed-up built from one is a bound too. Pure
arithmetic: it knows nothing of searches, simulations or the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Median:
    """A median over runs; ``censored`` when a middle run did not find the defect (a lower bound)."""

    value: float
    censored: bool


def censored_median(values: Sequence[tuple[float, bool]]) -> Median:
    """The median of ``(value, found)`` pairs, sorting the runs that did not find it last."""
    if not values:
        raise ValueError("a median needs at least one run")
    ordered = sorted(values, key=lambda pair: (not pair[1], pair[0]))
    n = len(ordered)
    middle = ordered[(n - 1) // 2 : n // 2 + 1]
    return Median(sum(v for v, _ in middle) / len(middle), any(not found for _, found in middle))


@dataclass(frozen=True, slots=True)
class Speedup:
    """hypothesis / swarm; ``bound`` is ``exact``, ``lower`` (hypothesis censored), ``upper`` (swarm
    censored) or ``unknown`` (both censored)."""

    ratio: float
    bound: str

    @staticmethod
    def of(hypothesis: Median, swarm: Median) -> Speedup:
        ratio = hypothesis.value / swarm.value if swarm.value > 0 else math.inf
        if hypothesis.censored and swarm.censored:
            return Speedup(ratio, "unknown")
        if hypothesis.censored:
            return Speedup(ratio, "lower")
        if swarm.censored:
            return Speedup(ratio, "upper")
        return Speedup(ratio, "exact")

    def at_least(self, target: float) -> bool:
        """Proven at least ``target``: exact, or a lower bound already past it."""
        return self.bound in ("exact", "lower") and self.ratio >= target

    def json_ratio(self) -> float | None:
        return round(self.ratio, 2) if math.isfinite(self.ratio) and self.bound != "unknown" else None
