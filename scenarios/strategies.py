"""Hypothesis strategies for fault profiles and fault schedules (profile first, then schedule).

A *profile* here is the set of fault families a schedule may draw from; a *schedule*
is a fault script: faults at global request indexes. Both shrink: Hypothesis removes
families and faults and lowers indexes and values, so a failing example shrinks to a
minimal script. ``uniform_schedules`` is the baseline a user would write by hand
(every family at once, positions uniform); the benchmark compares the two.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from scenarios.families import FAMILIES, FAULT_KINDS
from scenarios.script import Fault

KINDS = FAULT_KINDS


def _value(family: str) -> st.SearchStrategy[float]:
    if family == "slow":
        return st.floats(1.05, 2.5)
    if family == "store":
        return st.floats(1.0, 30.0)
    if family == "duplicate":
        return st.floats(0.0, 600.0)
    if family == "clock_skew":
        return st.floats(-120.0, 120.0)
    if family == "deploy":
        return st.floats(0.0, 0.999)
    return st.just(0.0)


def faults(families: Sequence[str], max_at: int) -> st.SearchStrategy[Fault]:
    """One fault of one of ``families`` at a request index below ``max_at``."""
    return st.sampled_from(list(families)).flatmap(
        lambda family: st.builds(
            Fault,
            at=st.integers(0, max(0, max_at - 1)),
            family=st.just(family),
            kind=st.sampled_from(KINDS[family]),
            value=_value(family),
        )
    )


def schedules(families: Sequence[str], max_at: int, max_faults: int = 6) -> st.SearchStrategy[list[Fault]]:
    """A fault script: at most one fault per request index, in index order."""
    return st.lists(faults(families, max_at), max_size=max_faults, unique_by=lambda f: f.at).map(
        lambda fs: sorted(fs, key=lambda f: f.at)
    )


def profiles(families: Sequence[str] = FAMILIES) -> st.SearchStrategy[list[str]]:
    """Which families are on: a non-empty subset, shrinking toward fewer."""
    return st.lists(st.sampled_from(list(families)), min_size=1, max_size=len(families), unique=True).map(sorted)


def profile_then_schedule(
    families: Sequence[str], max_at: int, max_faults: int = 6
) -> st.SearchStrategy[tuple[list[str], list[Fault]]]:
    return profiles(families).flatmap(lambda on: st.tuples(st.just(on), schedules(on, max_at, max_faults)))


def uniform_schedules(max_at: int, max_faults: int = 6) -> st.SearchStrategy[list[Fault]]:
    """The hand-written baseline: every family at once, positions uniform."""
    return schedules(FAMILIES, max_at, max_faults)
