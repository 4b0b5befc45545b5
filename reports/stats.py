"""Statistics of the reliability report: proportions with 95% intervals, and paired differences.

Pure functions of counts (no pandas, no simulator): the report's tables call them once per
cell, and tests check them against hand-computed values.

- :func:`wilson` is the Wilson score interval for k violations in n simulations. It behaves at
  k = 0 and k = n, where the Wald interval collapses to a point.
- :func:`rule_of_three` is the 95% upper bound 3/n when no violation was seen in n simulations
  (the exact one-sided bound is 1 - 0.05**(1/n), of which 3/n is the usual approximation).
- :func:`paired_difference` compares two policies run on the *same* seeds. Simulations are
  paired (same scenario, intensity and seed, so the same workload and fault draws up to the
  point where the designs diverge), so the two rates are correlated and an unpaired interval
  would be too wide. We use Newcombe's hybrid score interval for a difference of paired
  proportions (Newcombe 1998, "Improved confidence intervals for the difference between
  binomial proportions based on paired data", Statistics in Medicine 17:2635, method 10):
  the Wilson limits of each marginal rate combined with the phi correlation of the 2x2 table.
  Unlike Wald it stays inside [-1, 1], is not degenerate when there are no discordant pairs,
  and needs no iteration (unlike Tango's score interval).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054
DASH = "\u2013"
"""The en dash of ranges and empty cells."""


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval (lower, upper) for k successes in n trials; (0, 1) when n = 0."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    lower = 0.0 if k == 0 else max(0.0, centre - half)
    upper = 1.0 if k == n else min(1.0, centre + half)
    return lower, upper


def ratio_interval(numerators: Sequence[float], denominators: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """A 95% interval for ``sum(numerators) / sum(denominators)`` when each pair is one simulation (a
    cluster: the runs of one simulation share its faults, so they are not independent). The ratio
    estimator's variance by the delta method, ``n / (n - 1) * sum((y_i - r x_i)^2) / X^2``; clipped at
    0 below. (nan, nan) with fewer than two simulations or no denominator."""
    n = len(numerators)
    total = float(sum(denominators))
    if n < 2 or total <= 0:
        return (math.nan, math.nan)
    rate = float(sum(numerators)) / total
    spread = sum((float(y) - rate * float(x)) ** 2 for y, x in zip(numerators, denominators, strict=True))
    half = z * math.sqrt(n / (n - 1) * spread) / total
    return (max(0.0, rate - half), rate + half)


def rule_of_three(n: int) -> float:
    """The 95% upper bound on a rate of which none was seen in n trials: 3/n (1 when n < 3)."""
    return 1.0 if n <= 3 else 3.0 / n


@dataclass(frozen=True, slots=True)
class PairedDifference:
    """Rate of A minus rate of B on n paired simulations, with its 95% interval.

    ``only_a`` counts pairs where A violated and B did not, ``only_b`` the reverse (the
    discordant pairs); ``both`` pairs where both violated.
    """

    n: int
    both: int
    only_a: int
    only_b: int
    difference: float
    lower: float
    upper: float

    @property
    def rate_a(self) -> float:
        return (self.both + self.only_a) / self.n if self.n else 0.0

    @property
    def rate_b(self) -> float:
        return (self.both + self.only_b) / self.n if self.n else 0.0

    @property
    def significant(self) -> bool:
        """True when the interval excludes 0."""
        return self.lower > 0 or self.upper < 0


def paired_difference(both: int, only_a: int, only_b: int, n: int, z: float = Z95) -> PairedDifference:
    """Newcombe's method 10 interval for p_A - p_B on n pairs (see the module docstring)."""
    neither = n - both - only_a - only_b
    if min(both, only_a, only_b, neither) < 0:
        raise ValueError(f"inconsistent 2x2 table: both={both}, only_a={only_a}, only_b={only_b}, n={n}")
    if n == 0:
        return PairedDifference(0, 0, 0, 0, 0.0, -1.0, 1.0)
    a_count, b_count = both + only_a, both + only_b
    p1, p2 = a_count / n, b_count / n
    l1, u1 = wilson(a_count, n, z)
    l2, u2 = wilson(b_count, n, z)
    denominator = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = _phi(both, only_a, only_b, neither, n, denominator)
    delta = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    epsilon = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    difference = p1 - p2
    return PairedDifference(
        n, both, only_a, only_b, difference, max(-1.0, difference - delta), min(1.0, difference + epsilon)
    )


def _phi(both: int, only_a: int, only_b: int, neither: int, n: int, denominator: int) -> float:
    """Newcombe's phi of the 2x2 table, with his continuity correction of a positive association."""
    if denominator <= 0:
        return 0.0
    cross = both * neither - only_a * only_b
    corrected = max(cross - n / 2, 0.0) if cross > 0 else float(cross)
    return corrected / math.sqrt(denominator)


def percent(rate: float) -> str:
    """A rate as a short percentage: '0%', '0.35%', '12.5%', '100%'."""
    value = rate * 100
    if value == 0 or value == 100:
        return f"{value:.0f}%"
    if abs(value) < 1:
        return f"{value:.2f}%"
    return f"{value:.1f}%"
