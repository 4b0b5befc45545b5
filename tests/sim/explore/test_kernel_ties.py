"""``sim.world.kernel.Kernel`` with a ``TieControl``: same-instant groups are recorded and can be reversed.

Tiny simpy programs: timeouts falling at one instant, with callbacks that record the order in which
simpy ran them.
"""

from __future__ import annotations

from collections.abc import Callable

from simpy.events import NORMAL, Event

from sim.world.kernel import Kernel, TieControl, TieKey


def callback_order(kernel: Kernel, delays: list[tuple[str, float]]) -> list[str]:
    order: list[str] = []

    def recorder(name: str) -> Callable[[Event], None]:
        return lambda _event: order.append(name)

    for name, delay in delays:
        kernel.timeout(delay).callbacks.append(recorder(name))
    kernel.run()
    return order


THREE_AT_5 = [("a", 5.0), ("b", 5.0), ("c", 5.0)]
KEY_5: TieKey = (5.0, int(NORMAL))


def test_without_a_tie_control_same_instant_events_run_first_in_first_out() -> None:
    assert callback_order(Kernel(), THREE_AT_5) == ["a", "b", "c"]


def test_an_observing_tie_control_keeps_simpy_order() -> None:
    assert callback_order(Kernel(TieControl()), THREE_AT_5) == ["a", "b", "c"]


def test_reversing_a_group_reverses_its_events() -> None:
    order = callback_order(Kernel(TieControl(reverse=frozenset({KEY_5}))), THREE_AT_5)
    assert order == ["c", "b", "a"]


def test_reversing_one_group_leaves_other_instants_alone() -> None:
    delays = [("a", 5.0), ("b", 5.0), ("x", 7.0), ("y", 7.0), ("early", 1.0)]
    order = callback_order(Kernel(TieControl(reverse=frozenset({KEY_5}))), delays)
    assert order == ["early", "b", "a", "x", "y"]


def test_reversing_an_instant_with_no_group_changes_nothing() -> None:
    order = callback_order(Kernel(TieControl(reverse=frozenset({(6.0, int(NORMAL))}))), THREE_AT_5)
    assert order == ["a", "b", "c"]


def test_the_control_records_every_group_and_lists_the_ties() -> None:
    control = TieControl()
    callback_order(Kernel(control), [("a", 5.0), ("b", 5.0), ("alone", 3.0), ("x", 7.0), ("y", 7.0), ("z", 7.0)])
    assert control.groups[KEY_5] == 2
    assert control.groups[(7.0, int(NORMAL))] == 3
    assert control.groups[(3.0, int(NORMAL))] == 1
    ties = control.ties()
    assert set(ties) == {KEY_5, (7.0, int(NORMAL))}
    assert (3.0, int(NORMAL)) not in ties


def test_a_reversing_control_still_records_the_groups() -> None:
    control = TieControl(reverse=frozenset({KEY_5}))
    callback_order(Kernel(control), THREE_AT_5)
    assert control.groups[KEY_5] == 3
    assert control.ties() == [KEY_5]


def test_the_scheduled_count_is_unchanged_by_observing() -> None:
    plain, observed = Kernel(), Kernel(TieControl(reverse=frozenset({KEY_5})))
    callback_order(plain, THREE_AT_5)
    callback_order(observed, THREE_AT_5)
    assert plain.scheduled == observed.scheduled == 3


def test_ties_are_listed_in_time_order() -> None:
    control = TieControl()
    callback_order(Kernel(control), [("late1", 10.0), ("late2", 10.0), ("early1", 5.0), ("early2", 5.0)])
    assert control.ties() == sorted(control.ties())
