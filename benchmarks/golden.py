"""Golden digests: one combined history digest per library scenario over a fixed seed list.

    .venv/bin/python benchmarks/golden.py      # prints the GOLDEN table of tests/sim/world/test_golden_digests.py

Speed work must not change a history; a change that must (a new record, a new field) regenerates
this table in the same commit and says why. Knows only ``simulate`` and the library.
"""

from __future__ import annotations

import hashlib

from scenarios.loader import library_names, load_scenario
from sim.world.simulate import simulate

POLICIES = ("adr-104", "head")
SEEDS = (0, 1, 2, 3)


def golden(name: str) -> str:
    """blake2b over the digests of every (policy, seed) pair, in that order."""
    scenario = load_scenario(name)
    parts = [simulate(scenario, policy, seed, judge=False).digest for policy in POLICIES for seed in SEEDS]
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()


def table() -> dict[str, str]:
    return {name: golden(name) for name in library_names()}


if __name__ == "__main__":
    for name, value in table().items():
        print(f'    "{name}": "{value}",')
