"""Delta debugging of a fault script (Zeller's ddmin) to a 1-minimal script that still violates.

The test is one simulation in script mode with the same seed and profile; a script is
kept when the same invariant is still violated. Every candidate costs one simulation,
and the search stops at ``max_tests`` (the result is then minimal so far).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scenarios.script import Fault

Test = Callable[[Sequence[Fault]], bool]


def ddmin(script: Sequence[Fault], fails: Test, *, max_tests: int = 400) -> tuple[list[Fault], int]:
    """The smallest failing sub-script found, and the number of simulations spent."""
    current = list(script)
    tests = 0
    if fails([]):
        return [], 1
    tests += 1
    granularity = 2
    while len(current) >= 2 and tests < max_tests:
        size = max(1, len(current) // granularity)
        chunks = [current[i : i + size] for i in range(0, len(current), size)]
        reduced = False
        for i in range(len(chunks)):
            if tests >= max_tests:
                break
            complement = [f for j, chunk in enumerate(chunks) if j != i for f in chunk]
            tests += 1
            if fails(complement):
                current = complement
                granularity = max(granularity - 1, 2)
                reduced = True
                break
        if not reduced:
            if granularity >= len(current):
                break
            granularity = min(len(current), granularity * 2)
    return current, tests
