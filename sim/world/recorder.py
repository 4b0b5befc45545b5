"""The recorder: one append-only history per simulation, and its digest.

The only writer of :class:`checks.history.Op` records. Time is the simulation's true
time (processes may see skewed clocks; the history never does).

A reaper tick that finds nothing is one ``idle`` record rather than three (see
:meth:`Recorder.open_tick`): a reaper that ticks every second made most of the library's
records with such ticks (85% of them), and every record is hashed, indexed and
walked by every reader of the history.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import simpy

from checks.history import FAULT, IDLE, IDLE_OUTCOME, NEMESIS, READ, SEGMENT, Op, OpType, digest

INVOKE, OK, FAIL, INFO = OpType.INVOKE, OpType.OK, OpType.FAIL, OpType.INFO
_new = tuple.__new__

Add = Callable[[str, str, str, OpType, dict[str, Any]], int]


def _adder(history: list[Op], env: simpy.Environment, held: list[tuple[float, str, str, dict[str, Any]]]) -> Add:
    """The recorder's ``add``: a closure over the history and the clock, so each of the ~1000
    records of a simulation costs no attribute lookups on the recorder. ``held`` holds the records
    of an open tick not appended yet (time, process, op, value); any other record appends them
    first, at their own times, so the history is what it would have been without holding them."""
    append = history.append

    def add(process: str, op: str, run: str, type_: OpType, value: dict[str, Any]) -> int:
        if held:
            for time_s, held_process, held_op, held_value in held:
                type_held = INVOKE if held_op == SEGMENT else OK
                append(_new(Op, (len(history), time_s, held_process, held_op, "", type_held, held_value)))
            held.clear()
        index = len(history)
        # tuple.__new__ directly: the same Op as Op(...), without the NamedTuple's Python-level
        # __new__ and the ``now`` property.
        append(_new(Op, (index, env._now, process, op, run, type_, value)))
        return index

    return add


class Recorder:
    """Appends records stamped with the current simulated time."""

    __slots__ = ("_env", "_held", "add", "faults_fired", "folding", "history")

    add: Add
    """``add(process, op, run, type, value)``: append one record and return its index."""

    def __init__(self, env: simpy.Environment) -> None:
        self.history: list[Op] = []
        self.faults_fired: Counter[str] = Counter()
        self._env = env
        self._held: list[tuple[float, str, str, dict[str, Any]]] = []
        self.add = _adder(self.history, env, self._held)
        self.folding = True
        """Whether a reaper tick that found nothing is one ``idle`` record. False records its
        three records as before; the equivalence tests compare the two, and
        :func:`checks.history.unfolded` writes a folded history out in full."""

    def fault(self, family: str, kind: str, target: str, run: str, detail: dict[str, Any]) -> None:
        self.faults_fired[family] += 1
        self.add(NEMESIS, FAULT, run, INFO, {"family": family, "kind": kind, "target": target, **detail})

    # ---- reaper ticks: one ``idle`` record when a tick finds nothing ---------------------------------

    def open_tick(self, process: str, identity: str) -> None:
        """A reaper tick's segment invoke {entry: reap, identity}: held rather than appended, until
        either another record is added (which appends it first, at its own time) or the tick closes."""
        value = {"entry": "reap", "identity": identity}
        if self.folding:
            self._held.append((self._env._now, process, SEGMENT, value))
        else:
            self.add(process, SEGMENT, "", INVOKE, value)

    def hold_empty_read(self, process: str, value: dict[str, Any]) -> bool:
        """Hold the SelectStale read ``value`` that returned no row, when it is the first record of
        ``process``'s open tick; False (record it as usual) otherwise."""
        held = self._held
        if len(held) != 1 or held[0][1] != process:
            return False
        held.append((self._env._now, process, READ, value))
        return True

    def close_tick(self, process: str, value: dict[str, Any]) -> bool:
        """Close ``process``'s tick with its segment ok ``value``: one ``idle`` record when the tick
        found nothing (its invoke and its empty read held, nothing else added since, the zero
        outcome). False when the tick is recorded in full: the caller adds the ok as usual."""
        held = self._held
        if len(held) != 2 or held[0][1] != process or value["outcome"] != IDLE_OUTCOME:
            return False
        invoked_s, _, _, invoke = held[0]
        held.clear()
        self.add(process, IDLE, "", OK, {"identity": invoke["identity"], "invoked_s": invoked_s})
        return True

    def digest(self) -> str:
        return digest(self.history)
