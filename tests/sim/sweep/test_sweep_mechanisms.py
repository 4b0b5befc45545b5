"""A sweep keeps one counterexample per policy and distinct mechanism, not per invariant: a second mechanism
behind an invariant already seen gets its own file, the one kept is the plan's first meeting whichever
worker finished first, and one process, two workers and a resumed run keep the same files."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from scenarios.loader import load_scenario
from sim.explore.counterexample import Counterexample, read
from sim.sweep.config import loads_config
from sim.sweep.directory import COUNTEREXAMPLES, SHARDS
from sim.sweep.job import MECHANISMS, _CounterexampleWriter, read_mechanisms, run_job
from sim.sweep.rows import Violation, name_mechanisms, run_task_output
from sim.sweep.task import SweepTask
from sim.world.simulate import simulate

SHARED = "terminal_row_no_stale_fence"
"""Violated under head on ``default`` by two recorded non-guarantees within its first 12 seeds."""
TWO = ("NG-clear-not-persisted", "NG-cancel-keeps-fence")
CONFIG = """
name = "two-mechanisms"
seeds = 12
seeds_per_task = 3

[[policy]]
label = "head"
preset = "head"

[[policy]]
label = "adr-111"
preset = "adr-111"

[[grid]]
name = "main"
scenarios = ["default"]
"""


# -- the coordinator's writer, on hand-built violations --------------------------------------------


def violation(invariant: str, mechanism: str, first: int, *, seconds: float = 1.0, policy: str = "head") -> Violation:
    cx = Counterexample(
        scenario="single_run",
        policy=policy,
        seed=first,
        invariant=invariant,
        digest=f"{first:032x}",
        faults=(),
        profile=load_scenario("single_run").faults,
        mechanism=mechanism,
    )
    return Violation(cx, None, f"task-{first}", mechanism, policy, 0, first, seconds)


def kept(root: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["policy"], e["key"]): e for e in read_mechanisms(root)}


def test_two_mechanisms_behind_one_invariant_get_a_file_each(tmp_path: Path) -> None:
    writer = _CounterexampleWriter(tmp_path)
    writer(violation(SHARED, TWO[0], 5))
    writer(violation(SHARED, TWO[1], 9))
    writer(violation(SHARED, TWO[0], 7))  # the same mechanism again: no second file
    files = sorted(p.relative_to(tmp_path) for p in tmp_path.glob("*/*.toml"))
    assert files == sorted(Path(SHARED) / f"head--{m}.toml" for m in TWO)
    assert [read(tmp_path / f).mechanism for f in files] == sorted(TWO)
    assert {k: e["first_simulation"] for k, e in kept(tmp_path).items()} == {("head", TWO[0]): 5, ("head", TWO[1]): 9}


def test_one_mechanism_over_two_invariants_is_kept_once_per_policy(tmp_path: Path) -> None:
    writer = _CounterexampleWriter(tmp_path)
    writer(violation("settles_by_owner", "NG-identity", 3))
    writer(violation("writes_fenced_under_lease", "NG-identity", 4))
    writer(violation("writes_fenced_under_lease", "NG-identity", 4, policy="adr-111"))
    assert sorted(kept(tmp_path)) == [("adr-111", "NG-identity"), ("head", "NG-identity")]
    assert kept(tmp_path)[("head", "NG-identity")]["invariant"] == "settles_by_owner"


def test_unexplained_shapes_are_told_apart_by_their_key(tmp_path: Path) -> None:
    writer = _CounterexampleWriter(tmp_path)
    a, b = "unexplained: store update T4 at a", "unexplained: store update T5 at b"
    writer(replace_label(violation(SHARED, f"{SHARED} {a}", 1), a))
    writer(replace_label(violation(SHARED, f"{SHARED} {b}", 2), b))
    names = sorted(p.name for p in (tmp_path / SHARED).glob("*.toml"))
    assert len(names) == 2 and all(n.startswith("head--unexplained-") for n in names)


def replace_label(v: Violation, label: str) -> Violation:
    return replace(v, counterexample=replace(v.counterexample, mechanism=label))


def test_the_plans_first_meeting_wins_whichever_arrives_first(tmp_path: Path) -> None:
    writer = _CounterexampleWriter(tmp_path)
    writer(violation("settles_by_owner", "NG-identity", 20, seconds=0.5))
    writer(violation("writes_fenced_under_lease", "NG-identity", 8, seconds=2.0))  # earlier in the plan, later in time
    entry = kept(tmp_path)[("head", "NG-identity")]
    assert (entry["first_simulation"], entry["invariant"], entry["first_s"]) == (8, "writes_fenced_under_lease", 0.5)
    assert not (tmp_path / "settles_by_owner").exists() or not list((tmp_path / "settles_by_owner").iterdir())
    assert read(tmp_path / entry["file"]).seed == 8
    writer(violation("settles_by_owner", "NG-identity", 9, seconds=0.1))  # a near miss: later in the plan
    writer.close()
    entry = kept(tmp_path)[("head", "NG-identity")]
    assert (entry["first_simulation"], entry["first_s"]) == (8, 0.1)
    assert read(tmp_path / entry["file"]).seed == 8


def test_a_resumed_writer_compares_against_what_an_earlier_run_kept(tmp_path: Path) -> None:
    _CounterexampleWriter(tmp_path)(violation(SHARED, TWO[0], 6))
    again = _CounterexampleWriter(tmp_path)
    again(violation(SHARED, TWO[0], 7))
    assert kept(tmp_path)[("head", TWO[0])]["first_simulation"] == 6
    assert again.written == {}
    again(violation(SHARED, TWO[0], 2))
    assert kept(tmp_path)[("head", TWO[0])]["first_simulation"] == 2 and len(again.written) == 1


def test_an_unreadable_index_is_one_error_naming_the_file(tmp_path: Path) -> None:
    from model.errors import LeaselabError

    (tmp_path / MECHANISMS).write_text("{not json", encoding="utf-8")
    with pytest.raises(LeaselabError) as caught:
        _CounterexampleWriter(tmp_path)
    assert MECHANISMS in str(caught.value.file)


# -- the worker -------------------------------------------------------------------------------------


def test_a_task_keeps_the_first_seed_of_each_mechanism_not_of_each_invariant() -> None:
    task = SweepTask("default", "head", 0, 12)
    output = run_task_output(task)
    keys = [v.mechanism for v in output.violations]
    assert len(keys) == len(set(keys))
    shared = {v.mechanism: v for v in output.violations if v.counterexample.invariant == SHARED}
    assert set(shared) >= set(TWO), "one invariant, two mechanisms, two counterexamples"
    for v in output.violations:  # each is the first seed that met its mechanism
        met = [s for s in task.seeds if v.mechanism in mechanism_keys(simulate(load_scenario("default"), "head", s))]
        assert v.offset == met[0] - task.seed_start and v.counterexample.seed == met[0]
        assert v.counterexample.mechanism and v.label == "head"


def mechanism_keys(result: Any) -> set[str]:
    from sim.explore.discovery import mechanism_key

    return {mechanism_key(m.invariant, m.label()) for m in name_mechanisms(result)}


def test_a_task_without_evidence_keeps_no_counterexample_and_the_same_rows() -> None:
    task = SweepTask("default", "head", 0, 4, explain=True)
    quiet = run_task_output(replace(task, evidence=False))
    loud = run_task_output(task)
    assert quiet.violations == [] and loud.violations
    assert quiet.rows == loud.rows


# -- end to end --------------------------------------------------------------------------------------


def first_meetings() -> dict[tuple[str, str], int]:
    """Each (policy, mechanism)'s first simulation in the plan's order, counted by hand: per seed block
    of 3, head's task then adr-111's (the configuration's order)."""
    scenario = load_scenario("default")
    first: dict[tuple[str, str], int] = {}
    planned = 0
    for start in range(0, 12, 3):
        for label in ("head", "adr-111"):
            for offset, seed in enumerate(range(start, start + 3)):
                for key in sorted(mechanism_keys(simulate(scenario, label, seed))):
                    first.setdefault((label, key), planned + offset + 1)
            planned += 3
    return first


def contents(out: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    root = out / COUNTEREXAMPLES
    index = [{k: v for k, v in e.items() if k != "first_s"} for e in read_mechanisms(root)]
    files = {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.toml"))}
    return index, files


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one") / "out"
    run_job(loads_config(CONFIG, source="two.toml"), out, workers=1)
    return out


def test_an_end_to_end_sweep_keeps_both_mechanisms_with_their_first_meeting(one_process: Path) -> None:
    entries = kept(one_process / COUNTEREXAMPLES)
    assert {("head", m) for m in TWO} <= set(entries)
    assert {k: e["first_simulation"] for k, e in entries.items()} == first_meetings()
    for (policy, _), entry in entries.items():
        cx = read(one_process / COUNTEREXAMPLES / entry["file"])
        assert entry["file"].startswith(f"{cx.invariant}/{policy}--")
        result = cx.run()
        assert result.digest == cx.digest and cx.invariant in result.violations
        assert entry["first_s"] >= 0
    listed = json.loads((one_process / COUNTEREXAMPLES / MECHANISMS).read_text())["mechanisms"]
    assert len(listed) == len(list((one_process / COUNTEREXAMPLES).glob("*/*.toml")))


def test_two_workers_and_a_resume_keep_the_same_counterexamples(one_process: Path, tmp_path: Path) -> None:
    config = loads_config(CONFIG, source="two.toml")
    two = tmp_path / "two"
    run_job(config, two, workers=2, window=8)
    assert contents(two) == contents(one_process)
    # a resume that redoes half the tasks (their shards lost): they meet again what the index has
    resumed = tmp_path / "resumed"
    run_job(config, resumed, workers=2)
    for shard in sorted((resumed / SHARDS).glob("*.parquet"))[::2]:
        shard.unlink()
    run_job(config, resumed, workers=1)
    assert contents(resumed) == contents(one_process)


# -- shrinking after the sweep ----------------------------------------------------------------------

HEAD_ONLY = CONFIG.replace('[[policy]]\nlabel = "adr-111"\npreset = "adr-111"\n', "")


def test_shrink_keeps_each_mechanism_and_is_the_same_with_two_workers(one_process: Path, tmp_path: Path) -> None:
    from register.mechanism import mechanism_of

    config = loads_config(HEAD_ONLY, source="two.toml")
    one, two = tmp_path / "one", tmp_path / "two"
    run_job(config, one, workers=1, shrink_tests=30)
    entries = kept(one / COUNTEREXAMPLES)
    assert {("head", m) for m in TWO} <= set(entries)
    assert all(e["shrunk"] for e in entries.values())
    assert any(e["faults"] < e["faults_found"] for e in entries.values()), "some script got shorter"
    for entry in entries.values():
        cx = read(one / COUNTEREXAMPLES / entry["file"])
        assert len(cx.faults) == entry["faults"] <= entry["faults_found"]
        assert "shrunk by ddmin keeping its mechanism" in cx.note
        result = cx.run()
        assert result.digest == cx.digest
        # the same mechanism as the sweep met: the two behind one invariant stay two
        assert mechanism_of(cx.invariant, result.indexed(), result.verdicts[cx.invariant]).label() == cx.mechanism
        assert cx.mechanism == read(one_process / COUNTEREXAMPLES / entry["file"]).mechanism
    run_job(config, two, workers=2, shrink_tests=30)
    assert contents(two) == contents(one)
    # a resumed sweep does not shrink again: the files are untouched
    before = {p: p.stat().st_mtime_ns for p in (one / COUNTEREXAMPLES).rglob("*.toml")}
    run_job(config, one, workers=1, shrink_tests=30)
    assert {p: p.stat().st_mtime_ns for p in (one / COUNTEREXAMPLES).rglob("*.toml")} == before


def test_without_shrink_the_files_are_the_sweeps_own_draws(one_process: Path) -> None:
    entries = kept(one_process / COUNTEREXAMPLES)
    assert entries and all("shrunk" not in e for e in entries.values())
    for entry in entries.values():
        assert "not shrunk" in read(one_process / COUNTEREXAMPLES / entry["file"]).note
