"""The scenario loader: a malformed scenario is one LeaselabError naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from model.errors import LeaselabError
from scenarios.loader import LIBRARY_DIR, library_names, load_file, load_scenario
from scenarios.schema import Scenario

MINIMAL = 'name = "x"\n[[runs]]\n'


def write(tmp_path: Path, text: str, name: str = "broken.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(path: Path) -> LeaselabError:
    with pytest.raises(LeaselabError) as caught:
        load_scenario(path)
    return caught.value


def assert_names(error: LeaselabError, path: Path, *fields: str) -> None:
    message = str(error)
    assert "\n" not in message
    assert error.file == str(path)
    assert message.startswith(str(path))
    for field in fields:
        assert field in message


def test_a_minimal_scenario_loads_with_defaults(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, MINIMAL, "ok.toml"))
    assert scenario.name == "x"
    assert len(scenario.runs) == 1
    assert scenario.runs[0].kind == "queued"
    assert scenario.faults.audit.probability == 0.0


def test_a_scenario_object_is_returned_as_is() -> None:
    scenario = Scenario.model_validate({"name": "x", "runs": [{}]})
    assert load_scenario(scenario) is scenario


def test_bad_toml_names_the_file_and_the_position(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x\n[[runs]]\n')
    error = load_error(path)
    assert_names(error, path, "bad TOML", "line 1")


def test_an_unknown_top_level_key_names_the_file_and_the_key(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL.replace("[[runs]]", "runz = 1\n[[runs]]"))
    error = load_error(path)
    assert error.field == "runz"
    assert_names(error, path, "runz", "unknown key")


def test_an_unknown_nested_key_names_its_full_path(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + "[faults.audit]\nprobabilty = 0.1\n")
    error = load_error(path)
    assert error.field == "faults.audit.probabilty"
    assert_names(error, path, "faults.audit.probabilty", "unknown key")


def test_an_unknown_key_in_an_array_table_names_its_index(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[[runs]]\ncont = 2\n')
    error = load_error(path)
    assert error.field == "runs.0.cont"


def test_a_wrong_type_names_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + '[world]\nworkers = "three"\n')
    error = load_error(path)
    assert error.field == "world.workers"
    assert_names(error, path, "world.workers", "integer")


def test_a_probability_above_one_names_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + "[faults.audit]\nprobability = 1.5\n")
    error = load_error(path)
    assert error.field == "faults.audit.probability"
    assert_names(error, path, "faults.audit.probability", "must be <= 1", "got 1.5")


def test_a_negative_count_names_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[[runs]]\ncount = -1\n')
    error = load_error(path)
    assert error.field == "runs.0.count"
    assert_names(error, path, "runs.0.count")


def test_a_negative_duration_names_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + "[world]\nredeliver_s = -5.0\n")
    error = load_error(path)
    assert error.field == "world.redeliver_s"


def test_an_unknown_tool_effect_names_the_field_and_the_valid_effects(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[[tools]]\nname = "t"\neffect = "writes_a_lot"\n[[runs]]\n')
    error = load_error(path)
    assert error.field == "tools.0.effect"
    assert_names(error, path, "tools.0.effect", "read_only", "non_idempotent_write")


def test_a_run_script_naming_an_unknown_tool_names_the_run_and_the_tool(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[[tools]]\nname = "t"\n[[runs]]\nscript = [["t"], ["nope"], []]\n')
    error = load_error(path)
    assert_names(error, path, "runs.0.script", "unknown tool 'nope'")


def test_an_offered_list_naming_an_unknown_tool_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[[tools]]\nname = "t"\n[[runs]]\noffered = ["t", "nope"]\n')
    error = load_error(path)
    assert_names(error, path, "runs.0.offered", "unknown tool 'nope'")


def test_a_duplicate_tool_name_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[[tools]]\nname = "t"\n[[tools]]\nname = "t"\n[[runs]]\n')
    assert_names(load_error(path), path, "duplicate tool name")


def test_a_reversed_arrival_range_names_the_run_and_the_range(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[[runs]]\narrival_s = [10.0, 1.0]\n')
    error = load_error(path)
    assert_names(error, path, "runs.0", "arrival_s", "low <= high")


def test_a_reversed_world_range_names_the_range(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + "[world]\nrestart_delay_s = [10.0, 1.0]\n")
    assert_names(load_error(path), path, "world", "restart_delay_s")


def test_a_reversed_tool_latency_names_the_tool_and_the_range(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[[tools]]\nname = "t"\nlatency_s = [3.0, 1.0]\n[[runs]]\n')
    assert_names(load_error(path), path, "tools.0", "latency_s")


@pytest.mark.parametrize(
    ("table", "line"),
    [
        ("faults.audit", "outages = [[1260.0, 1200.0]]"),
        ("faults.store", "slow_s = [30.0, 1.0]"),
        ("faults.slow", "lease_factor = [2.5, 1.05]"),
        ("faults.duplicate", "late_s = [900.0, 0.0]"),
    ],
)
def test_a_reversed_fault_range_is_an_error(tmp_path: Path, table: str, line: str) -> None:
    path = write(tmp_path, MINIMAL + f"[{table}]\n{line}\n")
    assert_names(load_error(path), path, table)


def test_a_targeted_fault_naming_an_unknown_tool_is_an_error(tmp_path: Path) -> None:
    text = 'name = "x"\n[[tools]]\nname = "t"\n[[runs]]\n[[script]]\nfamily = "audit"\non = "event"\ntool = "nope"\n'
    path = write(tmp_path, text)
    assert_names(load_error(path), path, "script.0", "nope")


def test_a_targeted_fault_with_an_unknown_kind_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + '[[script]]\nfamily = "provider"\nkind = "timeout"\non = "provider"\n')
    error = load_error(path)
    assert error.field == "script.0.kind"
    assert_names(error, path, "script.0.kind", "one of", "connection")


def test_an_unknown_fault_family_in_the_script_names_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + '[[script]]\nfamily = "meteor"\n')
    error = load_error(path)
    assert error.field == "script.0.family"


def test_an_empty_run_list_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\nruns = []\n')
    error = load_error(path)
    assert error.field == "runs"


def test_a_missing_name_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "[[runs]]\n")
    error = load_error(path)
    assert error.field == "name"


def test_a_missing_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.toml"
    error = load_error(path)
    assert_names(error, path, "no such scenario file")


def test_an_unknown_library_name_names_the_nearest_and_where_all_are_listed() -> None:
    with pytest.raises(LeaselabError) as caught:
        load_scenario("happy_pth")
    message = str(caught.value)
    assert "\n" not in message and len(message) < 190
    assert "unknown scenario 'happy_pth'" in message
    listed = f"({len(library_names())} in all: `leaselab scenarios`; or a .toml path)"
    assert f"did you mean 'happy_path'? {listed}" in message


def test_a_library_name_loads_the_library_file() -> None:
    assert load_scenario("happy_path") == load_file(LIBRARY_DIR / "happy_path.toml")


def test_the_loader_never_raises_a_raw_validation_error(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = 3\n[[runs]]\nkind = "sideways"\n')
    with pytest.raises(LeaselabError):
        load_file(path)
