"""Sweep configuration files: a good file expands to the paired task grid; each bad field is one line
naming the file and the field; the built-in ADR review loads from the package."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from model.errors import LeaselabError
from model.policy import FLAG_DOCS
from scenarios.families import MAX_SKEW_S, MAX_STORE_DELAY_S
from scenarios.loader import library_names, load_scenario
from sim.review.builtin import builtin_review
from sim.sweep.config import load_config, loads_config
from sim.sweep.engine import run_task
from sim.sweep.rows import cell_scenario
from sim.sweep.task import SweepTask

GOOD = """
name = "t"
seeds = 7
seeds_per_task = 3

[[policy]]
label = "adr-104"
preset = "adr-104"

[[policy]]
label = "head+idempotency_keys"
preset = "head"
flags = { idempotency_keys = true }

[[grid]]
name = "main"
scenarios = ["single_run", "mine.toml"]
intensities = [0.5, 2.0]
latency_ratios = [0.5, 1.0, 3.0]
transports = ["sync", "async"]

[[grid]]
name = "solo"
scenarios = ["default"]
policies = ["adr-104"]
seeds = 2
"""

SCENARIO = """
name = "mine"
[[runs]]
kind = "queued"
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "mine.toml").write_text(SCENARIO, encoding="utf-8")
    path = tmp_path / "sweep.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_expands_to_every_cell_with_seeds_paired_across_policies(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD))
    tasks = config.tasks()
    main = [t for t in tasks if t.grid == "main"]
    # 2 scenarios x 2 intensities x 3 ratios x 2 transports x 3 seed blocks (3+3+1) x 2 policies
    assert len(main) == 2 * 2 * 3 * 2 * 3 * 2
    assert sum(t.seed_count for t in main) == 2 * 2 * 3 * 2 * 7 * 2
    seeds: dict[tuple[object, ...], dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    for t in main:
        seeds[(t.scenario, t.intensity, t.latency_ratio, t.transport)][t.policy_label].update(t.seeds)
    for by_policy in seeds.values():
        assert set(by_policy) == {"adr-104", "head+idempotency_keys"}
        assert all(s == set(range(7)) for s in by_policy.values())
    solo = [t for t in tasks if t.grid == "solo"]
    assert [(t.policy_label, t.seed_start, t.seed_count) for t in solo] == [("adr-104", 0, 2)]
    assert len({t.key for t in tasks}) == len(tasks)
    # a relative scenario path resolves against the configuration file, not the working directory
    assert str(tmp_path / "mine.toml") in {t.scenario for t in main}
    flagged = next(t for t in main if t.policy_label == "head+idempotency_keys")
    assert (flagged.policy, flagged.flags) == ("head", (("idempotency_keys", True),))


def test_keys_are_stable_and_ignore_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, GOOD)
    first = [t.key for t in load_config(path).tasks()]
    monkeypatch.chdir(tmp_path.parent)
    assert [t.key for t in load_config(path).tasks()] == first


def _replace(old: str, new: str) -> str:
    assert old in GOOD, old
    return GOOD.replace(old, new, 1)


BAD = [
    ('name = "t"\n', "", "name", "required field missing"),
    ("seeds = 7\n", "seeds = 0\n", "seeds", "must be >= 1"),
    ("seeds = 7\n", "seeds = 7\nseed = 3\n", "seed", "unknown key"),
    ('preset = "adr-104"', 'preset = "adr-999"', "policy.0.preset", "unknown preset 'adr-999'"),
    ("{ idempotency_keys = true }", "{ idempotency_kyes = true }", "policy.1.flags.idempotency_kyes", "unknown flag"),
    ('label = "adr-104"', 'label = "adr 104"', "policy.0.label", "does not match ^[A-Za-z0-9_.+=-]+$"),
    ("[0.5, 2.0]", "[0.5, -2.0]", "grid.0.intensities.1", "must be >= 0.0, got -2.0"),
    ("[0.5, 1.0, 3.0]", "[0.5, 0.0]", "grid.0.latency_ratios.1", "must be > 0.0"),
    ('["sync", "async"]', '["sync", "pigeon"]', "grid.0.transports.1", "must be one of: sync, async"),
    ('policies = ["adr-104"]', 'policies = ["adr-105"]', "grid.1.policies.0", "no [[policy]] is labelled"),
    ('["single_run", "mine.toml"]', '["single_run", "nope"]', "grid.0.scenarios.1", "unknown scenario 'nope'"),
    ('["single_run", "mine.toml"]', '["single_run", "gone.toml"]', "grid.0.scenarios.1", "no such scenario"),
    ('["single_run", "mine.toml"]', '"everything"', "grid.0.scenarios", "library"),
    ("[0.5, 2.0]", "[0.5, 0.5]", "grid.0.intensities", "listed twice"),
    ('label = "adr-104"', 'label = "head+idempotency_keys"', "policy", "share a label"),
    ('name = "solo"', 'name = "main"', "grid", "share a name"),
    ("seeds_per_task = 3\n", "seeds_per_task = 3\n[[grid.x]]\n", "", "bad TOML"),
]


@pytest.mark.parametrize(("old", "new", "field", "words"), BAD, ids=[f"{b[2] or 'toml'}-{b[3]}" for b in BAD])
def test_each_bad_field_is_one_line_naming_file_and_field(
    tmp_path: Path, old: str, new: str, field: str, words: str
) -> None:
    path = write(tmp_path, _replace(old, new))
    with pytest.raises(LeaselabError) as caught:
        load_config(path)
    error = caught.value
    line = str(error)
    assert "\n" not in line
    assert error.file == str(path)
    assert line.startswith(f"{path}: {field}: " if field else f"{path}: ")
    assert words in line


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(LeaselabError, match="no such sweep configuration"):
        load_config(tmp_path / "absent.toml")


def test_the_builtin_review_covers_every_preset_proposal_and_grid() -> None:
    config = builtin_review()
    labels = {p.label for p in config.policy}
    proposals = {"operation_deadline", "idempotency_keys"}
    assert proposals <= set(FLAG_DOCS)
    assert {"adr-104", "adr-111", "adr-112", "adr-122", "head"} | {f"head+{f}" for f in proposals} <= labels
    grids = {g.name: g for g in config.grid}
    assert set(grids) == {"main", "intensity", "latency", "deployment"}
    assert grids["deployment"].fault_ranges == "deployment" and grids["deployment"].policies == ["head"]
    assert grids["deployment"].scenario_specs() == library_names()
    assert all(g.fault_ranges == "library" for name, g in grids.items() if name != "deployment")
    assert grids["main"].scenario_specs() == library_names()
    assert grids["main"].intensities == [0.5, 1.0, 2.0]
    assert len(grids["intensity"].intensities) >= 5
    assert min(grids["intensity"].intensities) == 0.0 and max(grids["intensity"].intensities) == 4.0
    assert len(grids["latency"].latency_ratios) >= 5
    assert grids["latency"].scenario_specs() == grids["intensity"].scenario_specs()
    tasks = config.tasks()
    assert {t.grid for t in tasks} == set(grids)
    assert len({t.key for t in tasks}) == len(tasks)


def test_a_deployment_grid_widens_every_scenario_and_says_so_in_its_rows() -> None:
    config = loads_config(
        'name = "t"\nseeds = 2\n[[policy]]\nlabel = "head"\npreset = "head"\n'
        '[[grid]]\nname = "wide"\nscenarios = ["single_run"]\nfault_ranges = "deployment"\n'
        '[[grid]]\nname = "main"\nscenarios = ["single_run"]\n'
    )
    wide, library = config.tasks()
    assert (wide.fault_ranges, library.fault_ranges) == ("deployment", "")
    scenario, changed = cell_scenario(wide)
    assert scenario.faults.clock_skew.max_skew_s == MAX_SKEW_S and not changed
    assert scenario.faults.store.slow_s[1] == MAX_STORE_DELAY_S
    assert cell_scenario(library)[0] == load_scenario("single_run")
    assert wide.key != library.key.replace("main", "wide")
    assert run_task(wide)[0]["fault_ranges"] == "deployment" and run_task(library)[0]["fault_ranges"] == "library"


def test_a_library_task_keeps_the_shard_key_it_had_before_fault_ranges_existed() -> None:
    """Resuming a sweep directory written before the field existed must reuse its shards."""
    task = SweepTask("single_run", "head", 0, 5)
    assert task.key == "main__single_run__head__x1__r0__as__0__d43f8230f170603a"


def test_unknown_fault_ranges_are_one_line() -> None:
    with pytest.raises(LeaselabError) as caught:
        loads_config(
            'name = "t"\nseeds = 2\n[[policy]]\nlabel = "head"\npreset = "head"\n'
            '[[grid]]\nname = "g"\nscenarios = ["single_run"]\nfault_ranges = "wide"\n',
            source="c.toml",
        )
    assert str(caught.value).startswith("c.toml: grid.0.fault_ranges: ")


def test_a_collations_axis_runs_each_cell_under_each_collation_and_says_so_in_its_rows() -> None:
    config = loads_config(
        'name = "t"\nseeds = 2\n[[policy]]\nlabel = "head"\npreset = "head"\n'
        '[[grid]]\nname = "main"\nscenarios = ["single_run"]\ncollations = ["binary", "unicode_ci"]\n'
    )
    binary, collated = config.tasks()
    assert (binary.collation, collated.collation) == ("binary", "unicode_ci")
    assert config.size() == (2, 4)
    assert cell_scenario(collated) == (
        load_scenario("single_run").model_copy(
            update={"world": load_scenario("single_run").world.model_copy(update={"identity_collation": "unicode_ci"})}
        ),
        True,
    )
    assert cell_scenario(binary) == (load_scenario("single_run"), False)
    rows = run_task(collated)
    assert [r["collation"] for r in rows] == ["unicode_ci", "unicode_ci"]
    assert run_task(binary)[0]["collation"] == "binary"
    assert len({binary.key, collated.key, SweepTask("single_run", "head", 0, 2).key}) == 3


def test_a_grid_without_collations_keeps_its_task_keys_and_fingerprint() -> None:
    """Resuming a sweep directory written before the axis existed must reuse its shards."""
    text = 'name = "t"\nseeds = 5\nseeds_per_task = 5\n[[policy]]\nlabel = "head"\npreset = "head"\n'
    config = loads_config(text + '[[grid]]\nname = "main"\nscenarios = ["single_run"]\n')
    (task,) = config.tasks()
    assert task.key == "main__single_run__head__x1__r0__as__0__d43f8230f170603a"
    assert config.fingerprint() == "7d093695622f3458db097955c08c6270"  # as before the axis existed
    spec = "tests/properties/scenarios/single_run_sync.toml"
    with_file = loads_config(
        text + f'[[grid]]\nname = "main"\nscenarios = ["{spec}"]\n', base=Path(__file__).parents[3]
    )
    assert with_file.fingerprint() == "35aefff891c20d7b8cc04dbba13de944"  # its world's new inputs left out
    listed = loads_config(text + '[[grid]]\nname = "main"\nscenarios = ["single_run"]\ncollations = ["binary"]\n')
    assert listed.fingerprint() != config.fingerprint()


def test_a_listed_collation_twice_or_unknown_is_one_line() -> None:
    for value, problem in (('["binary", "binary"]', "listed twice"), ('["nocase"]', "")):
        with pytest.raises(LeaselabError) as caught:
            loads_config(
                'name = "t"\nseeds = 2\n[[policy]]\nlabel = "head"\npreset = "head"\n'
                f'[[grid]]\nname = "g"\nscenarios = ["single_run"]\ncollations = {value}\n',
                source="c.toml",
            )
        assert str(caught.value).startswith("c.toml: grid.0.collations") and problem in str(caught.value)
