"""The kernel's shortcuts change nothing: a wait taken at once (``Kernel.advance``) gives the same
history, statistics and event count as the simpy timeout it replaces."""

from __future__ import annotations

import pytest

from sim.world.kernel import Kernel, TieControl
from sim.world.simulate import simulate


@pytest.mark.parametrize(("scenario", "seed"), [("default", 3), ("default", 11), ("single_run", 0)])
def test_waits_taken_at_once_give_the_history_of_real_timeouts(scenario: str, seed: int) -> None:
    fast = simulate(scenario, "head", seed)
    observed = simulate(scenario, "head", seed, ties=TieControl())  # observed ties: every wait is an event
    assert fast.history == observed.history
    same = {key for key in fast.stats if key != "simpy_events_dispatched"}
    assert {key: fast.stats[key] for key in same} == {key: observed.stats[key] for key in same}
    # the shortcut is visible in what simpy really ran, never in the event count
    assert observed.stats["simpy_events_dispatched"] == observed.stats["simpy_events"]
    assert fast.stats["simpy_events_dispatched"] < fast.stats["simpy_events"]


def test_a_wait_is_taken_at_once_only_when_nothing_else_is_due_first() -> None:
    env = Kernel()
    log: list[tuple[str, float, bool]] = []

    def sleeper() -> object:
        yield env.timeout(1)
        taken = env.advance(2)  # nothing else is queued before 3
        log.append(("alone", env.now, taken))
        other = env.timeout(0.5)  # due at 3.5
        taken = env.advance(1)  # 4 > 3.5: must wait for real
        log.append(("blocked", env.now, taken))
        yield other
        yield env.timeout(1)

    env.process(sleeper())
    env.run()
    assert log == [("alone", 3.0, True), ("blocked", 3.0, False)]
    assert env.now == 4.5
    assert env.scheduled == 6  # Initialize, three timeouts, the process's end, and the wait taken at once
    assert env.taken_at_once == 1


def test_no_wait_is_taken_at_once_while_ties_are_observed() -> None:
    env = Kernel(TieControl())
    taken: list[bool] = []

    def sleeper() -> object:
        yield env.timeout(1)
        taken.append(env.advance(1))

    env.process(sleeper())
    env.run()
    assert taken == [False]
