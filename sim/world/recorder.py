"""The recorder: one append-only history per simulation, and its digest.

The only writer of :class:`model.history.Op` records. Time is the simulation's true
time (processes may see skewed clocks; the history never does).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import simpy

from model.history import FAULT, NEMESIS, Op, OpType, digest

INVOKE, OK, FAIL, INFO = OpType.INVOKE, OpType.OK, OpType.FAIL, OpType.INFO
_new = tuple.__new__


def _adder(history: list[Op], env: simpy.Environment) -> Callable[[str, str, str, OpType, dict[str, Any]], int]:
    """The recorder's ``add``: a closure over the history and the clock, so each of the ~1000
    records of a simulation costs no attribute lookups on the recorder."""
    append = history.append

    def add(process: str, op: str, run: str, type_: OpType, value: dict[str, Any]) -> int:
        index = len(history)
        # tuple.__new__ directly: the same Op as Op(...), without the NamedTuple's Python-level
        # __new__ and the ``now`` property.
        append(_new(Op, (index, env._now, process, op, run, type_, value)))
        return index

    return add


class Recorder:
    """Appends records stamped with the current simulated time."""

    __slots__ = ("add", "faults_fired", "history")

    add: Callable[[str, str, str, OpType, dict[str, Any]], int]
    """``add(process, op, run, type, value)``: append one record and return its index."""

    def __init__(self, env: simpy.Environment) -> None:
        self.history: list[Op] = []
        self.faults_fired: Counter[str] = Counter()
        self.add = _adder(self.history, env)

    def fault(self, family: str, kind: str, target: str, run: str, detail: dict[str, Any]) -> None:
        self.faults_fired[family] += 1
        self.add(NEMESIS, FAULT, run, INFO, {"family": family, "kind": kind, "target": target, **detail})

    def digest(self) -> str:
        return digest(self.history)
