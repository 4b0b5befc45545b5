"""The simpy environment the world runs on, open to reordering same-instant events.

simpy runs events that fall at the same instant first-in-first-out. The exhaustive
explorer needs the other orders too: with a :class:`TieControl` the kernel records
every group of events scheduled for one (time, priority) and can run one chosen
group in reverse order, or (:meth:`Kernel.shuffle_ties`, the suffix of a
prefix-conditioned run) every group in an order drawn from the world's random
stream. Without one, scheduling is simpy's own (no override on the
hot path), and a process's wait that would be the very next event is taken at once
(:meth:`Kernel.advance`: same clock, same event numbers, no event object).
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush
from types import MethodType
from typing import Any

import simpy
from simpy.core import EmptySchedule, SimTime, StopSimulation
from simpy.events import NORMAL, AnyOf, Event, EventPriority, Process, ProcessGenerator, Timeout

TieKey = tuple[float, int]
_new = object.__new__


@dataclass
class TieControl:
    """Observes same-instant groups; runs each group in ``reverse`` backwards, or, once ``shuffle``
    is set (:meth:`Kernel.shuffle_ties`), every group in an order drawn from that random stream."""

    reverse: frozenset[TieKey] = frozenset()
    groups: dict[TieKey, int] = field(default_factory=dict)
    shuffle: random.Random | None = None

    def ties(self) -> list[TieKey]:
        """Instants at which two or more events were scheduled, in time order."""
        return sorted(key for key, count in self.groups.items() if count > 1)


class Kernel(simpy.Environment):
    """A simpy Environment that can reorder same-instant events and says how many it scheduled."""

    def __init__(self, ties: TieControl | None = None) -> None:
        super().__init__()
        self.ties = ties
        self.processes: list[Process] = []
        self._alone = False
        """True while the event being processed has one callback (a process resuming): see advance()."""
        self.taken_at_once = 0
        """Waits :meth:`advance` took without a simpy event: ``scheduled`` counts them, simpy never ran them."""
        # simpy binds these to the instance only for Environment itself (``bind_early`` reads
        # the class's own __dict__); bound once here, each call skips a descriptor lookup.
        self.event = MethodType(Event, self)  # type: ignore[method-assign]
        self.any_of = MethodType(AnyOf, self)  # type: ignore[method-assign]
        if ties is not None:
            self.schedule = self._schedule_observed  # type: ignore[method-assign]
            self.timeout = MethodType(Timeout, self)  # type: ignore[method-assign]
        else:
            self.timeout = self._timeout  # type: ignore[method-assign]

    def _timeout(self, delay: SimTime = 0, value: Any | None = None) -> Timeout:
        """``Timeout(self, delay, value)`` built in one frame: the same event, scheduled as
        simpy's own ``schedule`` would (the world waits ~500 times a simulation)."""
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        event: Timeout = _new(Timeout)
        event.env = self
        event.callbacks = []
        event._value = value
        event._delay = delay
        event._ok = True
        heappush(self._queue, (self._now + delay, NORMAL, next(self._eid), event))
        return event

    def run(self, until: SimTime | Event | None = None) -> Any | None:
        """simpy's ``run`` with its ``step`` inlined into the loop: the same events in the same
        order, the same handling of ``until``, failures and StopSimulation, one call fewer per event."""
        if until is not None:
            if not isinstance(until, Event):
                return super().run(until)
            if until.callbacks is None:
                return until.value
            until.callbacks.append(StopSimulation.callback)
        queue = self._queue
        inline = self.ties is None
        try:
            while True:
                try:
                    self._now, _, _, event = heappop(queue)
                except IndexError:
                    raise EmptySchedule from None
                callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
                try:
                    if len(callbacks) == 1 and inline:
                        self._alone = True  # see advance()
                        callback = callbacks[0]
                        callback(event)
                        self._alone = False
                    else:
                        for callback in callbacks:
                            callback(event)
                except StopSimulation:
                    self._alone = False
                    event.callbacks = callbacks[callbacks.index(callback) + 1 :]
                    self.schedule(event, EventPriority(-1))
                    raise
                if not event._ok and not hasattr(event, "_defused"):
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    raise exc
        except StopSimulation as stop:
            return stop.args[0]
        except EmptySchedule:
            if until is not None:
                assert not until.triggered
                raise RuntimeError(f'No scheduled events left but "until" event was not triggered: {until}') from None
        finally:
            self._alone = False
        return None

    def advance(self, delay: SimTime) -> bool:
        """Take a wait of ``delay`` at once, when simpy would run nothing else before it ends.

        A process that waits yields a timeout; simpy numbers and queues it, pops it when it is
        the earliest event, moves the clock and resumes the process. When (a) the running
        process was resumed by the only callback of the event being processed (nothing else
        runs at this instant after it), and (b) every queued event is due strictly later than
        ``now + delay`` (so the timeout would be the very next event, ties included), that
        outcome is certain: this moves the clock and consumes the event number the timeout
        would have taken (``scheduled`` counts it), and the caller goes on without yielding.
        Returns False, and changes nothing, otherwise: the caller yields ``timeout(delay)``.
        Never taken while same-instant groups are observed (a :class:`TieControl`).
        """
        if not self._alone or delay < 0:
            return False
        at = self._now + delay
        queue = self._queue
        if queue and queue[0][0] <= at:
            return False
        next(self._eid)
        self._now = at
        self.taken_at_once += 1
        return True

    def process(self, generator: ProcessGenerator) -> Process:
        """simpy's ``process``, remembering the process so :meth:`release` can drop it."""
        started = Process(self, generator)
        self.processes.append(started)
        return started

    def release(self) -> None:
        """Drop every pending event and every process's generator once the run is over.

        A simpy environment is one big reference cycle (the environment binds its own
        methods; a waiting process and its event point at each other; suspended generator
        frames hold the world). Left alone, a finished simulation's thousands of objects
        wait for the cyclic collector, which then walks them all. Dropping the generators
        and the queue breaks the cycles through the world, so the history and the world
        are freed by reference counting the moment the caller lets go of them. Closing a
        suspended generator here is what the collector would do to it later.
        """
        for started in self.processes:
            started._generator = None  # type: ignore[assignment]
        self.processes.clear()
        self._queue.clear()

    @property
    def scheduled(self) -> int:
        """Events scheduled so far (simpy numbers them from 0)."""
        probe = next(self._eid)
        self._eid = itertools.count(probe)
        return probe

    def _schedule_observed(self, event: Event, priority: EventPriority = NORMAL, delay: SimTime = 0) -> None:
        ties = self.ties
        assert ties is not None
        at = self._now + delay
        key = (float(at), int(priority))
        ties.groups[key] = ties.groups.get(key, 0) + 1
        eid = next(self._eid)
        queue: list[Any] = self._queue
        if ties.shuffle is not None:
            heappush(queue, (at, priority, _drawn_order(ties.shuffle, eid), event))
            return
        heappush(queue, (at, priority, -eid if key in ties.reverse else eid, event))

    def shuffle_ties(self, rng: random.Random) -> None:
        """From now on run the events of every same-instant group in an order drawn from ``rng``,
        including those already queued (a prefix-conditioned run's suffix, :mod:`sim.world.conditioned`).
        Needs a :class:`TieControl` (scheduling observed). The queue list is re-keyed in place: the
        running loop holds it."""
        ties = self.ties
        if ties is None:
            raise ValueError("shuffle_ties needs a kernel built with a TieControl")
        ties.shuffle = rng
        queue: list[Any] = self._queue
        entries = sorted(queue, key=lambda entry: (entry[0], entry[1], entry[2]))
        queue[:] = [(at, priority, _drawn_order(rng, abs(order)), event) for at, priority, order, event in entries]
        heapify(queue)


def _drawn_order(rng: random.Random, eid: int) -> int:
    """A random rank among same-instant events, unique (the event number breaks the rare equal draw,
    so the heap never compares two events)."""
    return (rng.getrandbits(32) << 32) | (eid & 0xFFFFFFFF)
