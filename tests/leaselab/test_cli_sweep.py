"""``leaselab sweep CONFIG --out DIR``: shards pyarrow reads directly, a manifest, replayable
counterexamples, resume, a refused foreign configuration, and the library face (sweep / load)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner, Result

import leaselab
from leaselab.cli import app
from sim.explore.counterexample import INVARIANT_NAMES
from sim.sweep.config import load_config
from sim.world.simulate import simulate

runner = CliRunner()

CONFIG = """
name = "cli-tiny"
seeds = 4
seeds_per_task = 2

[[policy]]
label = "adr-111"
preset = "adr-111"

[[policy]]
label = "head+idempotency_keys"
preset = "head"
flags = { idempotency_keys = true }

[[grid]]
name = "main"
scenarios = ["worker_crash_mid_write", "single_run"]
intensities = [1.0, 2.0]

[[grid]]
name = "latency"
scenarios = ["single_run"]
latency_ratios = [2.0]
policies = ["adr-111"]
"""
# main: 2 scenarios x 2 intensities x 2 blocks x 2 policies = 16 tasks; latency: 1 x 1 x 2 x 1 = 2 tasks
TASKS, SIMULATIONS = 18, 36


def config_file(tmp_path: Path, text: str = CONFIG) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(text, encoding="utf-8")
    return path


def sweep(*args: str) -> Result:
    result = runner.invoke(app, ["sweep", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.mark.slow
def test_a_sweep_writes_shards_pyarrow_reads_directly_and_resumes_without_work(tmp_path: Path) -> None:
    config, out = config_file(tmp_path), tmp_path / "out"
    first = sweep(str(config), "--out", str(out), "--workers", "2", "--json", "--exit-zero")
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert (summary["tasks"], summary["simulations"], summary["shards_reused"]) == (TASKS, SIMULATIONS, 0)
    shards = sorted((out / "shards").glob("*.parquet"))
    assert len(shards) == TASKS
    table = ds.dataset(out / "shards", format="parquet").to_table(columns=["grid", "policy", "seed", "digest"])
    assert table.num_rows == SIMULATIONS
    one = pq.read_table(shards[0])
    assert one.num_rows == 2 and "stat.settle_latencies_s" in one.column_names
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["name"] == "cli-tiny" and manifest["versions"]["leaselab"]
    assert manifest["fingerprint"] == load_config(config).fingerprint()
    again = sweep(str(config), "--out", str(out), "--json", "--exit-zero")
    assert again.exit_code == 0, again.output
    resumed = json.loads(again.stdout)
    assert (resumed["shards_reused"], resumed["simulations_this_run"]) == (TASKS, 0)
    assert resumed["violating_simulations"] == summary["violating_simulations"]
    assert summary["violating_simulations"]  # adr-111 loses writes in worker_crash_mid_write


def test_counterexamples_replay_with_leaselab_replay(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert sweep(str(config_file(tmp_path)), "--out", str(out), "--workers", "1", "--exit-zero").exit_code == 0
    kept = json.loads((out / "counterexamples" / "mechanisms.json").read_text())["mechanisms"]
    files = sorted(out / "counterexamples" / e["file"] for e in kept)
    on_disk = (out / "counterexamples").glob("*/*.toml")
    assert files and files == sorted(p for p in on_disk if p.parent.name != "scenarios")
    # one written with a latency override must carry its own scenario file
    overridden = [out / "counterexamples" / e["file"] for e in kept if e["scenario_file"]]
    for path in [files[0], *overridden[:1]]:
        replayed = runner.invoke(app, ["replay", str(path)])
        assert replayed.exit_code == 1, replayed.output  # 1 = the violation reproduced
        assert "reproduced" in replayed.stdout


def test_the_printed_counterexample_paths_and_replay_command_work_as_pasted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = sweep(str(config_file(tmp_path)), "--out", str(out), "--workers", "1", "--exit-zero")
    assert result.exit_code == 0
    arrows = [ln.rsplit(" -> ", 1)[1] for ln in result.stdout.splitlines() if " -> " in ln]
    assert arrows and all(Path(p).is_file() and p.startswith(str(out)) for p in arrows)
    (command,) = [ln for ln in result.stdout.splitlines() if ln.startswith("replay one (exit 1 reproduced): ")]
    words = command.split(": ", 1)[1].split()
    assert words[:2] == ["leaselab", "replay"] and words[2] == arrows[0]
    replayed = runner.invoke(app, words[1:])
    assert replayed.exit_code == 1 and "reproduced" in replayed.stdout


def test_resuming_with_another_configuration_is_refused_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert sweep(str(config_file(tmp_path)), "--out", str(out), "--workers", "1", "--exit-zero").exit_code == 0
    other = config_file(tmp_path, CONFIG.replace("seeds = 4", "seeds = 6"))
    refused = sweep(str(other), "--out", str(out))
    assert refused.exit_code == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "sweep.json" in lines[0] and "different configuration" in lines[0]


def test_a_bad_configuration_is_one_line_naming_file_and_field(tmp_path: Path) -> None:
    bad = config_file(tmp_path, CONFIG.replace("intensities = [1.0, 2.0]", "intensities = [1.0, -2.0]"))
    result = sweep(str(bad), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert result.stderr.strip() == result.stderr.strip().splitlines()[0]
    assert f"{bad}: grid.0.intensities.1:" in result.stderr
    assert not (tmp_path / "out").exists()


def test_the_library_face_sweeps_and_loads_the_same_rows(tmp_path: Path) -> None:
    out = tmp_path / "out"
    frame = leaselab.sweep(config_file(tmp_path), out=out)
    assert len(frame) == SIMULATIONS
    assert not frame.duplicated(["grid", "scenario", "policy", "intensity", "latency_ratio", "seed"]).any()
    loaded = leaselab.load(out)
    assert sorted(loaded["digest"]) == sorted(frame["digest"])
    row = loaded[(loaded["policy"] == "head+idempotency_keys") & (loaded["intensity"] == 1.0)].iloc[0]
    direct = simulate(str(row["scenario"]), "head", int(row["seed"]), flags={"idempotency_keys": True})
    assert row["digest"] == direct.digest
    assert row["flags"] == "idempotency_keys=true" and row["preset"] == "head"


def test_keep_histories_keeps_every_record(tmp_path: Path) -> None:
    one = CONFIG.replace('scenarios = ["worker_crash_mid_write", "single_run"]', 'scenarios = ["single_run"]')
    out = tmp_path / "out"
    result = sweep(str(config_file(tmp_path, one)), "--out", str(out), "--keep-histories", "--workers", "1")
    assert result.exit_code == 0, result.output
    histories = sorted((out / "histories").glob("*.parquet"))
    assert len(histories) == len(list((out / "shards").glob("*.parquet")))
    task = next(
        t
        for t in load_config(tmp_path / "sweep.toml").tasks()
        if (t.grid, t.policy_label, t.intensity, t.seed_start) == ("main", "adr-111", 1.0, 0)
    )
    table = pq.read_table(out / "histories" / f"{task.key}.parquet").to_pandas()
    assert sorted(set(table["seed"])) == [0, 1]
    expected = simulate("single_run", "adr-111", 1).history
    kept = table[table["seed"] == 1]
    assert len(kept) == len(expected)
    assert list(kept["op"]) == [op.op for op in expected]
    assert json.loads(kept["value"].iloc[-1]) == json.loads(json.dumps(expected[-1].value))


@pytest.mark.parametrize("missing", ["absent.toml"])
def test_a_missing_configuration_is_exit_2(tmp_path: Path, missing: str) -> None:
    result = sweep(str(tmp_path / missing), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2 and "no such sweep configuration" in result.stderr


@pytest.mark.slow
def test_resuming_under_other_package_versions_warns_and_continues(tmp_path: Path) -> None:
    config, out = config_file(tmp_path), tmp_path / "out"
    assert sweep(str(config), "--out", str(out), "--workers", "1", "--exit-zero").exit_code == 0
    manifest = json.loads((out / "sweep.json").read_text())
    manifest["versions"]["simpy"] = "0.0.1"
    (out / "sweep.json").write_text(json.dumps(manifest))
    again = sweep(str(config), "--out", str(out), "--exit-zero")
    assert again.exit_code == 0, again.output
    assert "warning" in again.stderr and "simpy was 0.0.1" in again.stderr


def test_load_reads_a_bare_directory_of_shards(tmp_path: Path) -> None:
    plan = leaselab.SweepPlan(["single_run"], ["head", "adr-111"], seeds=3, seeds_per_task=2)
    done = leaselab.run_sweep(plan, tmp_path / "shards", workers=1)
    frame = leaselab.load(tmp_path / "shards")
    assert len(frame) == 6 and len(done.paths) == 4
    assert sorted(set(frame["policy"])) == ["adr-111", "head"]
    assert frame.filter(like="dl.").dtypes.map(str).eq("int64").all()


def test_exit_1_when_an_invariant_of_the_last_policy_failed_unless_exit_zero(tmp_path: Path) -> None:
    """The configuration's last policy is judged, or the one --policy names; the summary says which
    invariants failed in how many of its simulations."""
    config, out = config_file(tmp_path, ONE_CELL), tmp_path / "out"
    judged_last = sweep(str(config), "--out", str(out), "--json")
    assert judged_last.exit_code == 1, judged_last.output
    summary = json.loads(judged_last.stdout)
    unjudged = summary["judged"].pop("unjudged")
    assert summary["judged"] == {
        "policy": "adr-111",
        "simulations": 2,
        "failed": {"writes_fenced_under_lease": 2},
        "held": len(INVARIANT_NAMES) - 1 - len(unjudged),
        "explained_by": {"writes_fenced_under_lease": {"": 2}},
    }
    # two simulations of one small cell leave invariants with no case to judge: not counted as held
    assert "requeue_budget_respected" in unjudged and "writes_fenced_under_lease" not in unjudged
    assert summary["violating_simulations"] == {"writes_fenced_under_lease": 2}
    collected = sweep(str(config), "--out", str(out), "--exit-zero")
    assert collected.exit_code == 0, collected.output
    assert collected.stdout.splitlines()[0] == "adr-111: 1 invariant failed; exit 0 (--exit-zero)"
    assert collected.stdout.splitlines()[2:4] == [
        "  writes_fenced_under_lease: violated in 2 of 2 simulations of adr-111 "
        "(100% [34.2%\u2013100%]) [UNREGISTERED 2]",
        "1 distinct mechanism of adr-111, one counterexample each:",
    ]
    assert collected.stdout.splitlines()[-2].startswith("  unexplained [")
    assert collected.stdout.splitlines()[-1].startswith("replay one (exit 1 reproduced): leaselab replay ")
    held = sweep(str(config), "--out", str(out), "--policy", "head")
    assert held.exit_code == 0, held.output
    first = held.stdout.splitlines()[0]
    assert first.startswith("head: ") and first.endswith("; exit 0"), first
    assert "every invariant held" not in first  # some judged no case in two simulations
    assert " invariants held in 2 simulations; " in first and " judged no case (" in first
    unknown = sweep(str(config), "--out", str(tmp_path / "other"), "--policy", "nope")
    assert unknown.exit_code == 2
    assert unknown.stderr.splitlines() == [
        "leaselab: --policy: no policy labelled 'nope' in sweep 'one-cell' (valid: head, adr-111)"
    ]
    assert not (tmp_path / "other").exists()


ONE_CELL = """
name = "one-cell"
seeds = 2
seeds_per_task = 2

[[policy]]
label = "head"
preset = "head"

[[policy]]
label = "adr-111"
preset = "adr-111"

[[grid]]
name = "main"
scenarios = ["single_run"]
"""
"""single_run, seeds 0 and 1: adr-111 (the last policy) fails writes_fenced_under_lease in both, head holds."""
