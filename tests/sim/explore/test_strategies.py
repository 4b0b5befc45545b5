"""``scenarios.strategies``: fault profiles and schedules drawn by Hypothesis are well-formed scripts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scenarios.families import FAMILIES, FAULT_KINDS
from scenarios.script import Fault, parse_fault
from scenarios.strategies import faults, profile_then_schedule, profiles, schedules, uniform_schedules

families_subsets = st.lists(st.sampled_from(FAMILIES), min_size=1, unique=True)
max_ats = st.integers(1, 400)


def assert_well_formed(script: list[Fault], allowed: set[str], max_at: int, max_faults: int) -> None:
    indexes = [f.at for f in script]
    assert indexes == sorted(indexes), "sorted by request index"
    assert len(set(indexes)) == len(indexes), "at most one fault per request index"
    assert all(0 <= f.at < max_at for f in script), "every index below max_at"
    assert len(script) <= max_faults
    for fault in script:
        assert fault.family in allowed
        assert fault.kind in FAULT_KINDS[fault.family], fault


@given(families_subsets, max_ats, st.integers(0, 8), st.data())
def test_schedules_are_sorted_unique_by_index_below_max_at_and_of_valid_kinds(
    families: list[str], max_at: int, max_faults: int, data: st.DataObject
) -> None:
    script = data.draw(schedules(families, max_at, max_faults))
    assert_well_formed(script, set(families), max_at, max_faults)


@given(families_subsets, max_ats, st.data())
def test_a_single_fault_has_a_kind_of_its_family_and_an_index_below_max_at(
    families: list[str], max_at: int, data: st.DataObject
) -> None:
    fault = data.draw(faults(families, max_at))
    assert fault.family in families
    assert fault.kind in FAULT_KINDS[fault.family]
    assert 0 <= fault.at < max_at
    assert fault.anchor == ""


@given(families_subsets, max_ats, st.data())
def test_a_drawn_fault_survives_its_text_form(families: list[str], max_at: int, data: st.DataObject) -> None:
    fault = data.draw(faults(families, max_at))
    assert parse_fault(fault.text()) == fault


@given(families_subsets, st.data())
def test_profiles_are_non_empty_sorted_unique_subsets(families: list[str], data: st.DataObject) -> None:
    on = data.draw(profiles(families))
    assert on
    assert on == sorted(set(on))
    assert set(on) <= set(families)


@given(families_subsets, max_ats, st.data())
def test_profile_then_schedule_draws_only_from_the_families_it_switched_on(
    families: list[str], max_at: int, data: st.DataObject
) -> None:
    on, script = data.draw(profile_then_schedule(families, max_at, 6))
    assert set(on) <= set(families) and on
    assert_well_formed(script, set(on), max_at, 6)


@given(max_ats, st.data())
def test_uniform_schedules_may_use_every_family(max_at: int, data: st.DataObject) -> None:
    script = data.draw(uniform_schedules(max_at, 6))
    assert_well_formed(script, set(FAMILIES), max_at, 6)


def test_every_family_has_kinds_for_the_strategies() -> None:
    assert set(FAULT_KINDS) == set(FAMILIES)
    assert all(FAULT_KINDS[f] for f in FAMILIES)
