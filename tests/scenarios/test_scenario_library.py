"""The named scenario library under scenarios/library."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios.loader import LIBRARY_DIR, library, library_names, load_file
from scenarios.schema import Scenario

FILES = sorted(LIBRARY_DIR.glob("*.toml"))


def test_the_library_is_not_empty_and_has_the_default_scenario() -> None:
    assert FILES
    assert "default" in library_names()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_library_file_loads(path: Path) -> None:
    assert isinstance(load_file(path), Scenario)


def test_library_lists_one_entry_per_file() -> None:
    assert [entry.path for entry in library()] == FILES


def test_library_names_equal_the_file_stems() -> None:
    assert all(entry.name == entry.path.stem for entry in library())


def test_library_names_are_unique() -> None:
    names = [entry.name for entry in library()]
    assert len(names) == len(set(names))


def test_library_names_match_library_names() -> None:
    assert [entry.name for entry in library()] == library_names()


def test_every_library_entry_has_a_one_line_description() -> None:
    for entry in library():
        assert entry.description.strip(), entry.name
        assert "\n" not in entry.description, entry.name


def test_every_library_entry_carries_the_description_of_its_file() -> None:
    for entry in library():
        assert entry.description == load_file(entry.path).description


def test_library_entries_are_sorted_by_name() -> None:
    names = [entry.name for entry in library()]
    assert names == sorted(names)


def test_the_default_scenario_switches_every_fault_family_on() -> None:
    faults = load_file(LIBRARY_DIR / "default.toml").faults
    assert all(getattr(faults, family).probability > 0 for family in type(faults).model_fields)
