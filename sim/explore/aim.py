"""Aiming a timed foothold's branches at its coincidence: a suffix seed chosen so the write returns in time.

F-16's last step (a fence stamped by a lagging clock) leaves one timing coincidence
(:func:`register.precursors.lagging_stamp_gap`): the stamped write must return within one statement
latency ``L`` before a reaper tick. A branch cut at the stamp redraws the write's duration uniformly over
the tool's latency span, so it lands in a window with chance ``L`` per tick in reach over the span: from
about 1 in 100 to 1 in 100,000 (a tick a minute, ``L`` from 2 ms to half a second, spans up to minutes).

Two facts of the world make that draw steerable. The tool server draws the duration right after it
records the call's invoke, from the world's one stream, and a cut re-seeds that stream the moment its last
kept record is appended (:func:`sim.world.conditioned.simulate_cuts`): a cut right after the invoke makes
the duration the suffix seed's *first* draw, ``lo + (hi - lo) * Random(seed).random()``. And the reaper's
ticks ahead of the cut are already placed: a sleeping reaper's wake-up is scheduled, and an idle tick
lasts one statement. So a branch's suffix seed can be screened, a few microseconds a candidate, until its
first draw returns the write inside a window: rejection sampling of the duration conditioned on the
window, paid in draws of ``random.Random`` instead of simulations.

An aimed branch is an ordinary branch: its cuts (records, suffix seed) replay it exactly, and its history
is one the world makes (the duration lies in the tool's span). It is not a draw of the plain process: the
search uses it to meet the finding sooner, never to estimate a rate (the splitting estimator,
:mod:`sim.explore.splitting`, draws its suffix seeds plainly); its importance weight would be the
windows' share of the span. Knows the history's records and the world's order of draws; runs nothing.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from checks import history as H
from checks.history import Op, OpType
from checks.index import epoch_in
from register.precursors import lagging_stamps, reaper_ticks, stamp_latency

AIMED_BRANCHES = 4
"""Aimed branches per foothold. An aim mostly meets at the first (F-16, seeds 10-19: 12 of 12 aimed
branches met it, where 1 of 96 plain branches from 12 stamps in reach of a tick did); one that misses
four times has a window its world does not honour (a raised fault on the next request that ends the lag,
a tick moved by one that found work)."""
SCREENED = 1 << 17
"""Candidate suffix seeds tried for one aimed branch before it is drawn plainly (about 0.7 s at most; a
window of 10 ms in a span of 90 s takes about 9,000, one of 2 ms in 270 s about 135,000)."""


@dataclass
class Aim:
    """Where a timed foothold's branches can be aimed: a lagging stamp whose write can return at a tick."""

    lag: int
    """The record of the clock fault the stamp lagged by."""
    stamp: int
    """The lagging stamp's record."""
    cut: int
    """Records an aimed branch keeps: through the stamped write's invoke."""
    invoked_s: float
    span: tuple[float, float]
    """The tool's latency span at the foothold's tempo."""
    windows: tuple[tuple[float, float], ...]
    """When the write may return to meet the finding (true seconds), one per reaper tick in reach."""
    aimed: int = 0

    @property
    def open(self) -> bool:
        return self.aimed < AIMED_BRANCHES

    def bands(self) -> list[tuple[float, float]]:
        """The windows as ranges of the duration's uniform draw."""
        lo, width = self.span[0], self.span[1] - self.span[0]
        return [((a - self.invoked_s - lo) / width, (b - self.invoked_s - lo) / width) for a, b in self.windows]


def _write_invoke(history: Sequence[Op], stamp: Op) -> Op | None:
    """The stamped write's invoke (the stamping process's next record), when its duration is drawn there:
    not for a call a slow fault fixed, nor one replayed from its idempotency key."""
    mine = (op for op in history[stamp.index + 1 :] if op.process == stamp.process)
    invoke = next(mine, None)
    if invoke is None or invoke.op != H.TOOL or invoke.type is not OpType.INVOKE:
        return None
    after = next(mine, None)
    if after is not None and after.op == H.TOOL and after.value.get("replayed"):
        return None
    slowed = any(
        op.op == H.FAULT and op.value.get("family") == "slow" and op.value.get("target") == stamp.process
        for op in history[invoke.index + 1 : invoke.index + 4]
    )
    return None if slowed else invoke


def aim_at(history: Sequence[Op], after: int, spans: Mapping[str, tuple[float, float]]) -> Aim | None:
    """The first lagging stamp at or after record ``after`` whose write, drawn over its tool's latency
    span (``spans``, at the history's tempo), can return in the window of a reaper tick; None when none can."""
    for lag, index in lagging_stamps(history):
        stamp = history[index]
        row = stamp.value.get("row")
        if index < after or not (isinstance(row, dict) and row.get("has_request")):
            continue  # a run with no stored request (an interactive one) is rightly dead-lettered not_retryable
        invoke = _write_invoke(history, stamp)
        span = spans.get(str(invoke.value.get("tool", ""))) if invoke is not None else None
        if invoke is None or span is None or span[1] <= span[0]:
            continue
        tick = first_stale_tick(history, stamp, invoke.index + 1)
        latency = stamp_latency(history, stamp)
        lo, hi = invoke.time_s + span[0], invoke.time_s + span[1]
        if tick is not None and tick - latency < hi and tick > lo:
            window = (max(tick - latency, lo), min(tick, hi))
            return Aim(lag, index, invoke.index + 1, invoke.time_s, span, (window,))
    return None


def first_stale_tick(history: Sequence[Op], stamp: Op, cut: int) -> float | None:
    """The first reaper tick after ``stamp`` whose clock reads the stamped lease as past (T12 selects
    ``0 < lease_expires < now``, ``now`` read when the tick begins): the only one whose window can meet
    F-16, since that tick dead-letters the run (on the fence, while the write is out, before the window;
    the run is settled after). The reaper's clock as the faults before ``cut`` left it (healed in the
    quiet phase); None when no tick in ``history`` would select the run."""
    row = stamp.value.get("row")
    lease = row.get("lease_expires") if isinstance(row, dict) else None
    if not isinstance(lease, (int, float)) or lease <= 0:
        return None
    epoch = epoch_in(history)
    skew = 0.0
    for op in history[:cut]:
        if (
            op.op == H.FAULT
            and op.value.get("family") == "clock_skew"
            and str(op.value.get("target", "")).startswith("reaper")
        ):
            offset = op.value.get("offset_s")
            skew = float(offset) if isinstance(offset, (int, float)) else 0.0
    quiet = next((op.time_s for op in history if op.op == H.PHASE and op.value.get("phase") == "quiet"), math.inf)
    for tick in reaper_ticks(history, stamp.time_s):
        if lease < epoch + math.floor(tick + (skew if tick < quiet else 0.0)):
            return tick
    return None


def seed_for(aim: Aim, rng: random.Random) -> int:
    """A suffix seed whose first draw returns the aimed write inside one of its windows: the first of
    :data:`SCREENED` consecutive candidates from a random start that does, or the start itself (a plain
    branch) when none does. (Sparing the next request the branch's raised fault rates too, by its draw,
    was tried and dropped: no gain over seeds 10-69, and with several families enabled a draw above
    any one cap still strikes.)"""
    start = rng.getrandbits(32)
    bands = aim.bands()
    draw = random.Random()
    for i in range(SCREENED):
        seed = (start + i) & 0xFFFFFFFF
        draw.seed(seed)
        u = draw.random()
        if any(a < u < b for a, b in bands):
            return seed
    return start


__all__ = ["AIMED_BRANCHES", "SCREENED", "Aim", "aim_at", "first_stale_tick", "seed_for"]
