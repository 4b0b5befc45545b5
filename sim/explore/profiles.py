"""Swarm fault profiles: per seed, which fault families are on and how hard.

Swarm testing (Groce et al.): most simulations switch most families off, so each
family's rare interleavings are not drowned by the others. A drawn profile keeps the
scenario's own parameters (outage windows, kinds, ranges) and sets each enabled
family's probability to a base rate times a log-uniform factor.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from model.constants import LEASE_S
from scenarios.families import FAMILIES
from scenarios.intensity import Tempo
from scenarios.schema import FaultsModel

BASE_RATE: dict[str, float] = {
    "audit": 0.03,
    "store": 0.01,
    "crash": 0.01,
    "slow": 0.04,
    "duplicate": 0.1,
    "dispatch": 0.05,
    "clock_skew": 0.003,
    "identity": 0.003,
    "cancel": 0.003,
    "provider": 0.05,
    "deploy": 0.002,
}
FACTOR_RANGE = (1.0, 16.0)
"""An enabled family runs at its own (or base) rate times a log-uniform factor from this range.

Measured on the known defects from ``default`` (median simulations to the first violation over
5 seeds, ``benchmarks/PROFILE.md``): (0.25, 4) needed 379 in all, (0.25, 16) 194, (1, 16) 74,
(1, 32) 122, (2, 32) 85. A defect needs two or three faults on one run; below the scenario's own
rate they rarely meet, and far above it the run fails before the second one lands.
"""
TEMPO_SHARE = 0.5
"""The share of swarm draws that change the world's tempo (the rest run the scenario's timing)."""
LATENCY_FACTOR_RANGE = (1 / 30, 3.0)
STORE_LATENCY_RANGE_S = (0.002, 0.5)


def draw_tempo(rng: random.Random) -> Tempo:
    """A tempo: half the draws keep the scenario's timing; the others scale the call latencies by a
    log-uniform factor (calls 30x faster to 3x slower) and draw the statement latency log-uniform.

    Timing-only defects live in parts of the timing space a scenario as written never visits:
    renewals that share a wall-clock second need fast calls and slow statements (KB-6), a call
    outliving its lease needs slow ones. Three draws every time, so the stream does not branch.
    """
    keep, factor_u, store_u = rng.random(), rng.random(), rng.random()
    if keep >= TEMPO_SHARE:
        return Tempo()
    return Tempo(_log_uniform(LATENCY_FACTOR_RANGE, factor_u), _log_uniform(STORE_LATENCY_RANGE_S, store_u))


def _log_uniform(bounds: tuple[float, float], u: float) -> float:
    lo, hi = (math.log(b) for b in bounds)
    return math.exp(lo + (hi - lo) * u)


def draw_profile(
    rng: random.Random, base: FaultsModel, families: Sequence[str] = FAMILIES, on_probability: float = 0.5
) -> FaultsModel:
    """A profile: each allowed family on with ``on_probability``, at base rate x factor.

    At least one allowed family is on: a profile with none would spend a simulation on a
    fault-free run the search has already seen.
    """
    data: dict[str, Any] = base.model_dump()
    lo, hi = (math.log(f) for f in FACTOR_RANGE)
    enabled = []
    allowed = [f for f in FAMILIES if f in families]
    forced = allowed[min(int(rng.random() * len(allowed)), len(allowed) - 1)] if allowed else None
    for family in FAMILIES:
        on = rng.random() < on_probability or family == forced
        factor = math.exp(lo + (hi - lo) * rng.random())
        table = data[family]
        if family in families and on:
            enabled.append(family)
            own = table.get("probability", 0.0)
            table["probability"] = min(1.0, (own or BASE_RATE[family]) * factor)
            if family == "store":
                table["slow_probability"] = min(1.0, table["probability"] / 2)
        else:
            table["probability"] = 0.0
            if family == "store":
                table["slow_probability"] = 0.0
            if family == "audit":
                table["outages"] = []
    return FaultsModel.model_validate(data)


def without_probabilities(base: FaultsModel) -> FaultsModel:
    """The scenario's faults with every probability zero and no outages: targeted faults only."""
    data: dict[str, Any] = base.model_dump()
    for table in data.values():
        if "probability" in table:
            table["probability"] = 0.0
        if "slow_probability" in table:
            table["slow_probability"] = 0.0
    data["audit"]["outages"] = []
    return FaultsModel.model_validate(data)


def enabled_families(profile: FaultsModel) -> list[str]:
    data = profile.model_dump()
    return [f for f in FAMILIES if data[f].get("probability", 0.0) > 0 or (f == "audit" and data[f]["outages"])]


RAISE = 30.0
"""A guided branch decides the first :data:`BURST` requests after its cut with every enabled family at
this many times its drawn rate (:func:`raised`), at most :data:`RAISE_CAP`; then the drawn rates."""
RAISE_CAP = 0.9
BURST = 1
"""Requests decided at the raised rates after a cut. One: the step a chain still needs is most often
the very next decision (the stalled read's next read failing, the reaper's requeue stalling), and
raising more than that also fails what must then go through (the settle after that read). Measured
from F-15's deepest footholds (66 branches each): 22 met the finding at one request, 1 at two, 4 at
twenty, 1 with no raise."""


def raised(profile: FaultsModel) -> FaultsModel:
    """``profile`` with every enabled family's probability raised :data:`RAISE` times (at most
    :data:`RAISE_CAP`; the store's slow share kept): the fault rates a foothold's branches draw their
    suffix at (:mod:`sim.explore.footholds`). A family that is off stays off, so a branch meets only
    the faults its search allows. Deterministic: a counterexample file stores the profile, and its
    replay raises it again."""
    data: dict[str, Any] = profile.model_dump()
    for table in data.values():
        own = table.get("probability", 0.0)
        if not own:
            continue
        table["probability"] = min(RAISE_CAP, max(own, own * RAISE))
        if "slow_probability" in table:
            share = table["slow_probability"] / own
            table["slow_probability"] = table["probability"] * share
    return FaultsModel.model_validate(data)


NEEDS = ("raise", "", "slow", "fail")
"""What the request right after a cut is decided at (:func:`for_need`), by code: ``raise`` every enabled
family at :func:`raised` rates (code 0, what a cut always had before needs); ``""`` the drawn rates (the
step left needs no fault, and a raised one would more often break it); ``slow`` a store stall past the
lease; ``fail`` a store error. A chain says which its next step needs
(:data:`register.precursors.NEEDS`)."""


def for_need(profile: FaultsModel, need: str) -> FaultsModel:
    """The suffix profile after a cut whose next request must be ``need`` (:data:`NEEDS`). ``slow`` and
    ``fail`` raise the store family as :func:`raised` does, all of it to that one kind (a stall at least a lease long:
    shorter ones end before anyone's lease runs out); the other families as :func:`raised` does. A store
    family that is off stays off (:func:`can_strike` says whether the needed fault can strike)."""
    if need == "":
        return profile
    out = raised(profile)
    if need == "raise" or not can_strike(profile, need):
        return out
    data: dict[str, Any] = out.model_dump()
    store = data["store"]
    total = min(RAISE_CAP, store["probability"] + store["slow_probability"])
    if need == "fail":
        store["probability"], store["slow_probability"] = total, 0.0
    else:
        lo, hi = store["slow_s"]
        store["probability"], store["slow_probability"] = 0.0, total
        store["slow_s"] = (min(max(lo, LEASE_S), hi), hi)
    return FaultsModel.model_validate(data)


def can_strike(profile: FaultsModel, need: str) -> bool:
    """Whether the fault ``need`` names can strike under ``profile``: ``slow`` and ``fail`` need the
    store family on."""
    if need in ("slow", "fail"):
        return profile.store.probability + profile.store.slow_probability > 0
    return True


def seed_with_need(bits: int, need: str) -> int:
    """A cut's suffix seed: 32 random ``bits``, and above them the code of its ``need``
    (:data:`NEEDS`). The need travels with the cut, so a counterexample file
    (records kept, suffix seed) replays it; a seed of 32 bits, as every cut had before needs, is code 0,
    every enabled family raised."""
    return bits | NEEDS.index(need) << 32


def need_of(suffix_seed: int) -> str:
    """The need a cut's suffix seed carries (see :func:`seed_with_need`)."""
    return NEEDS[suffix_seed >> 32]
