"""``sim.explore.shrink.ddmin``: delta debugging to a 1-minimal failing sub-script.

The predicates are synthetic (no simulation): a script "fails" when it holds certain faults. Each
test counts the predicate's calls, so ``max_tests`` and the reported test count are checked against
what really ran.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hypothesis import given
from hypothesis import strategies as st

from scenarios.script import Fault
from sim.explore.shrink import ddmin


def script(n: int) -> list[Fault]:
    """``n`` distinct faults (distinct indexes)."""
    return [Fault(i, "crash", "after") for i in range(n)]


A, B, C, D, E, F, G, H = script(8)
EIGHT = [A, B, C, D, E, F, G, H]


class Counting:
    """A predicate that counts its calls and remembers every candidate it was asked about."""

    def __init__(self, fails: Callable[[Sequence[Fault]], bool]) -> None:
        self.fails = fails
        self.calls = 0
        self.asked: list[list[Fault]] = []

    def __call__(self, candidate: Sequence[Fault]) -> bool:
        self.calls += 1
        self.asked.append(list(candidate))
        return self.fails(candidate)


def needs(*required: Fault) -> Counting:
    return Counting(lambda candidate: all(f in candidate for f in required))


def is_one_minimal(result: list[Fault], fails: Callable[[Sequence[Fault]], bool]) -> bool:
    return all(not fails(result[:i] + result[i + 1 :]) for i in range(len(result)))


def test_a_single_needed_fault_is_found() -> None:
    fails = needs(C)
    minimal, tests = ddmin(EIGHT, fails)
    assert minimal == [C]
    assert tests == fails.calls


def test_two_needed_faults_are_found_in_script_order() -> None:
    fails = needs(A, C)
    minimal, tests = ddmin(EIGHT, fails)
    assert minimal == [A, C]
    assert tests == fails.calls


def test_two_needed_faults_far_apart_are_found() -> None:
    fails = needs(B, H)
    minimal, _ = ddmin(EIGHT, fails)
    assert minimal == [B, H]


def test_a_predicate_that_always_fails_gives_the_empty_script_after_one_test() -> None:
    fails = Counting(lambda candidate: True)
    minimal, tests = ddmin(EIGHT, fails)
    assert minimal == []
    assert (tests, fails.calls) == (1, 1)
    assert fails.asked == [[]]


def test_a_one_fault_script_is_kept_when_the_empty_script_passes() -> None:
    fails = needs(D)
    assert ddmin([D], fails) == ([D], 1)


def test_the_result_is_one_minimal_when_the_budget_suffices() -> None:
    fails = needs(A, D, G)
    minimal, _ = ddmin(EIGHT, fails, max_tests=400)
    assert minimal == [A, D, G]
    assert is_one_minimal(minimal, fails.fails)


def test_max_tests_bounds_the_predicate_calls() -> None:
    big = script(64)
    needed = (big[3], big[17], big[40], big[41], big[63])
    for max_tests in (1, 2, 3, 5, 8, 13):
        fails = needs(*needed)
        minimal, tests = ddmin(big, fails, max_tests=max_tests)
        assert fails.calls <= max_tests, max_tests
        assert tests == fails.calls
        assert all(f in minimal for f in needed)  # stopped early: minimal so far, still failing


def test_candidates_are_always_sub_scripts_in_order() -> None:
    fails = needs(B, E, F)
    ddmin(EIGHT, fails)
    for candidate in fails.asked:
        positions = [EIGHT.index(f) for f in candidate]
        assert positions == sorted(set(positions))


# ---- properties ---------------------------------------------------------------------------------


@st.composite
def problems(draw: st.DrawFn) -> tuple[list[Fault], list[frozenset[int]], int]:
    """A script, a predicate "fails when it holds every fault of one of these groups" (or of an
    arbitrary, non-monotone set of failing subsets), and a test budget."""
    n = draw(st.integers(1, 16))
    groups = draw(st.lists(st.frozensets(st.integers(0, n - 1), min_size=1, max_size=4), min_size=1, max_size=3))
    max_tests = draw(st.integers(1, 200))
    return script(n), groups, max_tests


@given(problems())
def test_ddmin_never_returns_a_passing_script_and_respects_its_budget(
    problem: tuple[list[Fault], list[frozenset[int]], int],
) -> None:
    faults, groups, max_tests = problem

    def raw(candidate: Sequence[Fault]) -> bool:
        ats = {f.at for f in candidate}
        return any(group <= ats for group in groups)

    fails = Counting(raw)
    minimal, tests = ddmin(faults, fails, max_tests=max_tests)
    assert raw(minimal)
    assert set(minimal) <= set(faults)
    assert tests == fails.calls
    assert fails.calls <= max(1, max_tests)
    if fails.calls < max_tests:  # it stopped on its own, not on the budget
        assert is_one_minimal(minimal, raw)


@given(st.integers(1, 14), st.sets(st.integers(0, 2**14 - 1), min_size=1), st.integers(1, 60))
def test_ddmin_keeps_failing_for_non_monotone_predicates(n: int, failing_masks: set[int], max_tests: int) -> None:
    faults = script(n)
    full = 2**n - 1
    failing = {m & full for m in failing_masks} | {full}  # the whole script fails

    def raw(candidate: Sequence[Fault]) -> bool:
        return sum(1 << f.at for f in candidate) in failing

    minimal, _ = ddmin(faults, Counting(raw), max_tests=max_tests)
    assert raw(minimal)
