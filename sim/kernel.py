"""The simpy environment the world runs on, instrumented and open to reordering.

It counts the events it schedules (for the benchmark) and lets an explorer choose the
order of events that fall at the same instant: simpy alone always runs them
first-in-first-out; a ``tie_key`` function may rank them otherwise.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from heapq import heappush
from typing import Any

import simpy
from simpy.core import SimTime
from simpy.events import NORMAL, Event, EventPriority

TieKey = Callable[[int], int]


class Kernel(simpy.Environment):
    """A simpy Environment that can reorder same-instant events and says how many it scheduled.

    Without a ``tie_key`` scheduling is simpy's own (no override on the hot path).
    """

    def __init__(self, tie_key: TieKey | None = None) -> None:
        super().__init__()
        self.tie_key = tie_key
        if tie_key is not None:
            self.schedule = self._schedule_ranked  # type: ignore[method-assign]

    @property
    def scheduled(self) -> int:
        """Events scheduled so far (simpy numbers them from 0)."""
        probe = next(self._eid)
        self._eid = itertools.count(probe)
        return probe

    def _schedule_ranked(self, event: Event, priority: EventPriority = NORMAL, delay: SimTime = 0) -> None:
        assert self.tie_key is not None
        eid = next(self._eid)
        queue: list[Any] = self._queue
        heappush(queue, (self._now + delay, priority, (self.tie_key(eid), eid), event))


def run_until(env: Kernel, until: Any) -> None:
    env.run(until=until)
