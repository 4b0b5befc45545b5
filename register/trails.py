"""The bookkeeping every chain of :mod:`register.precursors` shares: a trail (one candidate binding of a
chain's steps to a run and the processes they name), the deepest and the earliest of a history's trails,
and the two readings of a record the chains use most (a statement's T-number, a store stall's length).

Ground truth only; knows the history's records, draws and runs nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from checks import history as H
from checks.history import Op

CLAIMS = ("T3", "T10")
REQUEUES = ("T11", "T13")


def number(op: Op) -> str:
    """A store record's T-number (``T5`` of ``T5 markPendingEffect``)."""
    return str(op.value.get("transition", "")).partition(" ")[0]


def stall(op: Op) -> float:
    """A store slow fault's length in seconds (0 when ``op`` is none)."""
    v = op.value
    if op.op != H.FAULT or v.get("family") != "store" or v.get("kind") != "slow":
        return 0.0
    raw = v.get("slow_s")
    return float(raw) if isinstance(raw, (int, float)) else 0.0


@dataclass
class Trail:
    """One candidate binding of a chain (a run and the processes its steps name)."""

    run: str
    process: str
    marks: list[int]
    until: float = 0.0
    """When the first step's stall ends (true seconds)."""
    other: str = ""
    done: bool = False
    extra: dict[str, float] = field(default_factory=dict)


def struck(history: Sequence[Op]) -> Iterator[tuple[Op, Op | None]]:
    """Each record of ``history`` with, for a fault, the record it struck: the last record of the process
    it targets (a store stall strikes that process's pending statement); None for any other record. The
    chains whose first step is a stalled statement of one kind read it from here."""
    last: dict[str, Op] = {}
    for op in history:
        if op.op == H.FAULT:
            yield op, last.get(str(op.value.get("target", "")))
        else:
            yield op, None
            last[op.process] = op


def deepest(trails: Sequence[Trail]) -> tuple[int, ...]:
    """The marks of the trail that got furthest (the earliest of equal ones)."""
    best: tuple[int, ...] = ()
    for trail in trails:
        if len(trail.marks) > len(best):
            best = tuple(trail.marks)
    return best


def earliest(trails: Sequence[Trail]) -> tuple[int, ...]:
    """Per level, the first record at which any trail reached it: a stopping time (decided by the history
    up to that record), which an unbiased splitting estimate needs (:mod:`sim.explore.splitting`)."""
    out: list[int] = []
    while True:
        at = [t.marks[len(out)] for t in trails if len(t.marks) > len(out)]
        if not at:
            return tuple(out)
        out.append(min(at))


__all__ = ["CLAIMS", "REQUEUES", "Trail", "deepest", "earliest", "number", "stall", "struck"]
