"""``leaselab scenarios [--json]``: the named scenario library."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from leaselab.cli import app
from scenarios.loader import LIBRARY_DIR, library, library_names

runner = CliRunner()


def listing() -> list[dict[str, str]]:
    result = runner.invoke(app, ["scenarios", "--json"])
    assert result.exit_code == 0, result.output
    document: list[dict[str, str]] = json.loads(result.stdout)
    return document


def test_scenarios_json_lists_every_library_scenario_by_name() -> None:
    assert [entry["name"] for entry in listing()] == library_names()


def test_scenarios_json_entries_have_exactly_name_description_and_path() -> None:
    assert all(list(entry) == ["name", "description", "path"] for entry in listing())


def test_scenarios_json_equals_the_library() -> None:
    expected = [{"name": e.name, "description": e.description, "path": str(e.path)} for e in library()]
    assert listing() == expected


def test_scenarios_json_paths_are_library_files_named_after_the_scenario() -> None:
    for entry in listing():
        path = Path(entry["path"])
        assert path.is_file()
        assert path.parent == LIBRARY_DIR
        assert path.name == f"{entry['name']}.toml"


def test_scenarios_json_descriptions_are_not_empty() -> None:
    assert all(entry["description"].strip() for entry in listing())


def test_scenarios_text_shows_each_name_with_its_description_and_path() -> None:
    result = runner.invoke(app, ["scenarios"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    for entry in library():
        index = next(i for i, line in enumerate(lines) if line.split()[0] == entry.name)
        assert entry.description in lines[index]
        assert lines[index + 1].strip() == str(entry.path)


def test_scenarios_text_has_two_lines_per_scenario() -> None:
    result = runner.invoke(app, ["scenarios"])
    assert len(result.stdout.splitlines()) == 2 * len(library_names())
