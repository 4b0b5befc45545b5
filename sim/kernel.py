"""The simpy environment the world runs on, instrumented and open to reordering.

It counts the events it schedules (for the benchmark) and lets an explorer choose the
order of events that fall at the same instant: simpy alone always runs them
first-in-first-out; a ``tie_key`` function may rank them otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappush
from typing import Any

import simpy
from simpy.core import SimTime
from simpy.events import NORMAL, Event, EventPriority

TieKey = Callable[[int], int]


class Kernel(simpy.Environment):
    """A simpy Environment that counts scheduled events and can reorder ties."""

    def __init__(self, tie_key: TieKey | None = None) -> None:
        super().__init__()
        self.scheduled = 0
        self.tie_key = tie_key

    def schedule(self, event: Event, priority: EventPriority = NORMAL, delay: SimTime = 0) -> None:
        self.scheduled += 1
        if self.tie_key is None:
            heappush(self._queue, (self._now + delay, priority, next(self._eid), event))
            return
        eid = next(self._eid)
        queue: list[Any] = self._queue
        heappush(queue, (self._now + delay, priority, (self.tie_key(eid), eid), event))


def run_until(env: Kernel, until: Any) -> None:
    env.run(until=until)
