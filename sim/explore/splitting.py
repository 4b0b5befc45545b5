"""Rare rates with honest intervals: a two-level splitting estimator of a mechanism's rate.

A mechanism met a handful of times in a plain run has a rate nobody should quote as "1 of 33,000".
Splitting (multilevel splitting of rare-event simulation, here with one intermediate level) pays for
the first rare step once and then samples the rest many times from the state it reached:

- ``roots`` plain simulations of the scenario (seeds ``seed``, ``seed + 1``, ...: the process whose rate
  is wanted, with the scenario's own fault profile);
- a *level*: a record predicate marking the first rare step (by default :func:`outlives_lease`: the first
  fault that outlives the lease, a commit stall, a slow call or a clock offset of a lease or more);
- a root that never reaches the level contributes ``Y = 1`` if it shows the mechanism, else 0; a root that
  reaches it contributes the share of ``splits`` continuations that show it, each a prefix-conditioned run
  (:func:`sim.world.conditioned.simulate_from`: the root's history exactly up to and including the level's
  record, then the world's random stream drawn afresh, same-instant events in simpy's own order as a
  plain run has them).

Each continuation is a draw of the plain process conditioned on the state at the level, so ``E[Y]`` is
the mechanism's rate: the estimate (the mean of the roots' ``Y``, which are independent) is unbiased,
and its 95% interval is the t-interval over the roots (with a rule-of-three bound when nothing was met).
When it does not apply: a continuation leaves the scenario's *targeted* faults off (a prefix-conditioned
run keeps only those its prefix fired, :mod:`sim.world.conditioned`), so a scenario with ``[[script]]``
faults is refused (:func:`applies`), the reason is said, and only the plain interval is given.

Knows the world's conditioned runs and the register's mechanisms; draws nothing itself.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from checks.history import FAULT, Op
from model.constants import LEASE_S
from model.policy import Policy, resolve_policy
from register.mechanism import mechanism_of
from register.precursors import PRECURSORS, reach
from scenarios.schema import Scenario
from sim.world.conditioned import Cut, simulate_cuts, simulate_from
from sim.world.simulate import SimulationResult, simulate

Level = Callable[[Op], bool]
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 10: 2.228, 20: 2.086, 30: 2.042, 60: 2.0, 120: 1.98}


def outlives_lease(op: Op) -> bool:
    """A fault that outlives the lease: a commit stall, slow call or clock offset of a lease or more."""
    if op.op != FAULT:
        return False
    v = op.value
    raw = v.get("slow_s", v.get("duration_s", v.get("offset_s")))
    return isinstance(raw, (int, float)) and abs(float(raw)) >= LEASE_S


def applies(scenario: Scenario) -> str:
    """'' when the estimator applies to ``scenario``, else why not."""
    if scenario.script:
        return (
            "the scenario has targeted faults ([[script]]), which a prefix-conditioned continuation leaves off: "
            "its continuations would not be draws of the plain process"
        )
    return ""


def shows(result: SimulationResult, mechanism: str, invariants: Sequence[str] | None) -> bool:
    """Whether ``result`` shows ``mechanism`` (a register id, or 'unexplained: <shape>')."""
    wanted = [i for i in result.violations if invariants is None or i in invariants]
    if not wanted:
        return False
    ix = result.indexed()
    return any(mechanism_of(i, ix, result.verdicts[i]).label() == mechanism for i in wanted)


def _t(n: int) -> float:
    """The 97.5% quantile of Student's t with ``n`` degrees of freedom (from a small table, conservative)."""
    if n <= 0:
        return math.inf
    keys = [k for k in sorted(_T975) if k <= n]
    return _T975[keys[-1]] if keys else _T975[1]


def _sig(x: float) -> str:
    """Two significant digits, written out: 0.034 -> '0.034', 342.5 -> '340', 12345 -> '12,000'."""
    if x == 0:
        return "0"
    digits = 1 - math.floor(math.log10(abs(x)))
    return f"{round(x, digits):,.{max(0, digits)}f}"


significant = _sig
"""A rate written with two significant digits (the sentences' own), for other modules' sentences."""


def _suffix_seed(seed: int, root: int, split: int) -> int:
    digest = hashlib.blake2b(f"leaselab-splitting/{seed}/{root}/{split}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


@dataclass(frozen=True)
class Estimate:
    mechanism: str
    roots: int
    splits: int
    reached: int
    """Roots that reached the level."""
    simulations: int
    """Roots plus continuations: what the estimate cost."""
    rate: float
    low: float
    high: float
    plain_met: int
    """Roots that showed the mechanism themselves (the plain run inside the estimate)."""
    method: str = "two-level splitting"

    def sentence(self) -> str:
        per = 100_000
        return (
            f"{self.mechanism}: about {_sig(self.rate * per)} in {per:,} simulations "
            f"[{_sig(self.low * per)}, {_sig(self.high * per)}] ({self.method}, {self.roots:,} roots, "
            f"{self.reached:,} splits x {self.splits} continuations, {self.simulations:,} simulations; "
            f"plain: {self.plain_met} of {self.roots:,})"
        )

    def document(self) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism,
            "estimator": self.method,
            "roots": self.roots,
            "splits": self.splits,
            "reached_level": self.reached,
            "simulations": self.simulations,
            "rate": self.rate,
            "interval_95": [self.low, self.high],
            "plain_met": self.plain_met,
            "sentence": self.sentence(),
        }


def estimate(
    scenario: Scenario,
    policy: str | Policy,
    mechanism: str,
    *,
    roots: int,
    splits: int,
    seed: int = 0,
    invariants: Sequence[str] | None = None,
    level: Level = outlives_lease,
    progress: Callable[[int, int], None] | None = None,
) -> Estimate:
    """The two-level splitting estimate of ``mechanism``'s rate in plain simulations of ``scenario`` (see
    the module). Refuses a scenario the estimator does not apply to (:func:`applies`)."""
    why = applies(scenario)
    if why:
        raise ValueError(why)
    resolved = resolve_policy(policy)
    ys: list[float] = []
    reached = simulations = plain_met = 0
    for root in range(roots):
        result = simulate(scenario, resolved, seed + root)
        simulations += 1
        met = shows(result, mechanism, invariants)
        plain_met += met
        at = next((op.index for op in result.history if level(op)), None)
        if at is None:
            ys.append(1.0 if met else 0.0)
        else:
            reached += 1
            hits = 0
            for split in range(splits):
                continued = simulate_from(
                    scenario,
                    resolved,
                    seed + root,
                    script=result.fault_script,
                    records=at + 1,
                    suffix_seed=_suffix_seed(seed, root, split),
                    shuffle=False,
                )
                simulations += 1
                hits += shows(continued, mechanism, invariants)
            ys.append(hits / splits)
        if progress is not None:
            progress(root + 1, roots)
    n = len(ys)
    mean = sum(ys) / n
    if mean == 0.0:
        low, high = 0.0, min(1.0, 3.0 / n)  # rule of three over the roots
    else:
        var = sum((y - mean) ** 2 for y in ys) / (n - 1) if n > 1 else 0.0
        half = _t(n - 1) * math.sqrt(var / n)
        low, high = max(0.0, mean - half), min(1.0, mean + half)
    return Estimate(mechanism, roots, splits, reached, simulations, mean, low, high, plain_met)


def _chain_seed(seed: int, root: int, path: tuple[int, ...]) -> int:
    key = "/".join(str(i) for i in path)
    digest = hashlib.blake2b(f"leaselab-chain/{seed}/{root}/{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


@dataclass
class _Tally:
    simulations: int = 0
    reached: int = 0


def _value(
    scenario: Scenario,
    policy: Policy,
    seed: int,
    mechanism: str,
    invariants: Sequence[str] | None,
    result: SimulationResult,
    cuts: tuple[Cut, ...],
    level: int,
    splits: int,
    path: tuple[int, ...],
    tally: _Tally,
    root: int,
    base_seed: int,
) -> float:
    """The fixed-splitting value of a run that has been split at its first ``level`` levels: where it
    reaches the next level (the first record at which it does, a stopping time), the mean of ``splits``
    continuations' values from just after that record; else whether it shows the mechanism."""
    marks = reach(result.history, mechanism)
    if len(marks) <= level:
        return 1.0 if shows(result, mechanism, invariants) else 0.0
    cut = marks[level] + 1
    if cuts and cut <= cuts[-1][0]:
        return 1.0 if shows(result, mechanism, invariants) else 0.0
    tally.reached += 1
    total = 0.0
    for split in range(splits):
        here = (*path, split)
        more = (*cuts, (cut, _chain_seed(base_seed, root, here)))
        continued = simulate_cuts(scenario, policy, seed, script=result.fault_script, cuts=more)
        tally.simulations += 1
        total += _value(
            scenario,
            policy,
            seed,
            mechanism,
            invariants,
            continued,
            more,
            level + 1,
            splits,
            here,
            tally,
            root,
            base_seed,
        )
    return total / splits


Root = tuple[Scenario, Policy, int]
"""A root of a chain estimate: a scenario, a policy and a world seed (one plain simulation)."""


def estimate_chain(
    scenario: Scenario,
    policy: str | Policy,
    mechanism: str,
    *,
    roots: int,
    splits: int,
    seed: int = 0,
    invariants: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Estimate:
    """The multilevel splitting estimate of ``mechanism``'s rate in plain simulations of ``scenario``,
    its levels the steps of the finding's chain (:mod:`register.precursors`). Each root is a plain run
    (seed ``seed + i``); where a run first reaches its chain's next level, ``splits`` continuations are
    drawn from just after that record (:func:`sim.world.conditioned.simulate_cuts`: the exact prefix,
    then a fresh suffix of the plain process, the scenario's own profile, its targeted faults still
    ahead, simpy's own order of same-instant events), and each is split again at the level after, and so
    on. A root's value is the mean of its continuations' values (1 or 0 at the leaves), so its expectation
    is the mechanism's rate and the mean over independent roots is unbiased; the interval is the
    t-interval over the roots. Unlike :func:`estimate`, targeted faults are allowed: the continuations
    keep those still ahead."""
    resolved = resolve_policy(policy)
    planted = [(scenario, resolved, seed + root) for root in range(roots)]
    return estimate_chain_over(planted, mechanism, splits=splits, seed=seed, invariants=invariants, progress=progress)


def estimate_chain_over(
    roots: Sequence[Root],
    mechanism: str,
    *,
    splits: int,
    seed: int = 0,
    invariants: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    runs: Sequence[SimulationResult] | None = None,
) -> Estimate:
    """:func:`estimate_chain` over given roots: the rate in the process the roots are a uniform sample of
    (a sweep grid's simulations, say: each root one of its rows). ``runs``, when given, are the roots'
    plain runs already made (one per root, in order), so several mechanisms share them."""
    if mechanism not in PRECURSORS:
        raise ValueError(f"{mechanism} has no chain to split on (register/precursors.py)")
    if not roots:
        raise ValueError("a chain estimate needs at least one root")
    tally = _Tally()
    ys: list[float] = []
    plain_met = 0
    for number, (scenario, policy, world_seed) in enumerate(roots):
        result = runs[number] if runs is not None else simulate(scenario, policy, world_seed)
        tally.simulations += 1
        plain_met += shows(result, mechanism, invariants)
        ys.append(
            _value(scenario, policy, world_seed, mechanism, invariants, result, (), 0, splits, (), tally, number, seed)
        )
        if progress is not None:
            progress(number + 1, len(roots))
    mean, low, high = _interval(ys)
    return Estimate(
        mechanism,
        len(roots),
        splits,
        tally.reached,
        tally.simulations,
        mean,
        low,
        high,
        plain_met,
        "multilevel splitting",
    )


def _interval(ys: Sequence[float]) -> tuple[float, float, float]:
    """The mean of the roots' values and its 95% interval (t over the roots; rule of three at zero)."""
    n = len(ys)
    mean = sum(ys) / n
    if mean == 0.0:
        return 0.0, 0.0, min(1.0, 3.0 / n)
    var = sum((y - mean) ** 2 for y in ys) / (n - 1) if n > 1 else 0.0
    half = _t(n - 1) * math.sqrt(var / n)
    return mean, max(0.0, mean - half), min(1.0, mean + half)


__all__ = [
    "Estimate",
    "Level",
    "Root",
    "applies",
    "estimate",
    "estimate_chain",
    "estimate_chain_over",
    "outlives_lease",
    "shows",
    "significant",
]
