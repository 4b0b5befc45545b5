"""How long an external call takes: the provider's and the tools' latency, or a ``slow`` fault's.

One function shared by the provider and the tool server, so that both draw from the
simulation's random stream the same way: a ``slow`` fault fixes the duration (a multiple of
the lease, no draw); otherwise it is uniform over the declared range (no draw for a point).
"""

from __future__ import annotations

import random

from model.constants import LEASE_S
from sim.world.faults import Fault


def call_duration(rng: random.Random, span: tuple[float, float], fault: Fault | None) -> float:
    if fault is not None and fault.family == "slow":
        return LEASE_S * fault.value
    lo, hi = span
    return lo if hi == lo else lo + (hi - lo) * rng.random()
