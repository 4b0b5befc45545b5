"""What a sweep directory may hold: a sweep never writes into a report's directory (nor a report into a
sweep's, nor a sweep where shards lie that no manifest describes); verdict columns are nullable
booleans; a sweep is planned lazily, so a sweep of 10^8 seeds starts at once and counts its totals."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from leaselab.cli import app
from model.errors import LeaselabError
from sim.review.builtin import builtin_review
from sim.sweep.config import SweepConfig, loads_config
from sim.sweep.directory import MANIFEST, REPORT, SHARDS, load, prepare, repair_command
from sim.sweep.engine import SweepProgress
from sim.sweep.job import run_job
from sim.sweep.shards import shard_table

runner = CliRunner()
CONFIG = """
name = "kinds"
seeds = 2
seeds_per_task = 2

[[policy]]
label = "adr-111"
preset = "adr-111"

[[grid]]
name = "main"
scenarios = ["single_run"]
"""


def config(text: str = CONFIG) -> SweepConfig:
    return loads_config(text, source="kinds.toml")


def sweep_cli(tmp_path: Path, out: Path) -> tuple[int, str]:
    path = tmp_path / "kinds.toml"
    path.write_text(CONFIG, encoding="utf-8")
    result = runner.invoke(app, ["sweep", str(path), "--out", str(out), "--exit-zero"])
    return result.exit_code, result.stderr


def test_a_sweep_into_a_reports_directory_is_refused_and_touches_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    prepare(out, builtin_review(), kind=REPORT, command=f"leaselab report --out {out}")
    (out / SHARDS / "x.parquet").write_bytes(b"the report's shard")
    before = sorted(p.name for p in out.rglob("*"))
    code, stderr = sweep_cli(tmp_path, out)
    assert code == 2
    assert stderr.splitlines() == [f"leaselab: {out}: holds a report ('adr-review') (give sweep 'kinds' its own --out)"]
    assert sorted(p.name for p in out.rglob("*")) == before
    assert json.loads((out / MANIFEST).read_text())["kind"] == REPORT


@pytest.mark.parametrize("left", ["report.json", "index.html", "shards/review-stamp.json", "shards/a.parquet"])
def test_a_directory_with_a_report_or_stray_shards_but_no_manifest_is_refused(tmp_path: Path, left: str) -> None:
    out = tmp_path / "old"
    (out / SHARDS).mkdir(parents=True)
    (out / left).write_text("{}", encoding="utf-8")
    code, stderr = sweep_cli(tmp_path, out)
    assert code == 2 and len(stderr.splitlines()) == 1 and f"leaselab: {out}: holds " in stderr
    assert not (out / MANIFEST).exists()


def test_a_report_into_a_sweeps_directory_is_refused_and_keeps_its_shards(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    run_job(config(), out, workers=1)
    shards = sorted((out / SHARDS).iterdir())
    with pytest.raises(LeaselabError, match="holds a sweep \\('kinds'\\)") as caught:
        prepare(out, builtin_review(), kind=REPORT, command="leaselab report")
    assert "give the report its own --out" in str(caught.value)
    assert sorted((out / SHARDS).iterdir()) == shards
    assert load(out)["policy"].tolist() == ["adr-111", "adr-111"]


def test_the_manifest_records_the_kind_and_the_command_pointed_where_the_directory_is(tmp_path: Path) -> None:
    out = tmp_path / "a"
    run_job(config(), out, workers=1)
    manifest = json.loads((out / MANIFEST).read_text())
    assert (manifest["kind"], manifest["format"]) == ("sweep", 2)
    assert manifest["command"] == f"leaselab sweep {Path('kinds.toml').resolve()} --out {out.resolve()}"
    moved = out.rename(tmp_path / "b b")
    assert repair_command(moved) == f"leaselab sweep {Path('kinds.toml').resolve()} --out '{moved}'"


def test_a_format_1_directory_is_resumed_and_its_unvouched_shards_redone(tmp_path: Path) -> None:
    """A sweep directory from before checksums: its manifest has no kind (it is a sweep) and its shards
    no checksums, so they are redone once; the manifest is brought to format 2."""
    out = tmp_path / "old"
    run_job(config(), out, workers=1)
    manifest = json.loads((out / MANIFEST).read_text())
    for key in ("kind", "command"):
        del manifest[key]
    (out / MANIFEST).write_text(json.dumps({**manifest, "format": 1}))
    (out / SHARDS / "_checksums.sha256").unlink()
    again = run_job(config(), out, workers=1)
    assert (again.progress.redone, again.progress.skipped) == (1, 0)
    assert json.loads((out / MANIFEST).read_text())["format"] == 2


# ---- verdicts are nullable booleans ------------------------------------------------------------


def test_verdict_columns_are_booleans_with_null_for_unknown_even_when_every_verdict_is_unknown() -> None:
    rows = [
        {"seed": 0, "inv.a": True, "inv.b": None, "cov.x": True},
        {"seed": 1, "inv.a": False, "inv.b": None, "cov.x": False},
    ]
    table = shard_table(rows, {})
    assert table.schema.field("inv.a").type == pa.bool_()
    assert table.schema.field("inv.b").type == pa.bool_()  # not pyarrow's null type
    assert table.column("inv.a").to_pylist() == [True, False]
    assert table.column("inv.b").to_pylist() == [None, None]


def test_load_gives_verdicts_as_nullable_booleans_and_the_shards_as_parquet_booleans(tmp_path: Path) -> None:
    out = tmp_path / "s"
    run_job(config(), out, workers=1)
    frame = load(out)
    verdicts = [c for c in frame.columns if c.startswith("inv.")]
    assert verdicts and all(str(frame[c].dtype) == "boolean" for c in verdicts)
    assert frame["inv.writes_fenced_under_lease"].tolist() == [False, False]  # adr-111 on single_run
    assert frame["inv.every_write_accounted"].tolist() == [True, True]
    shard = next((out / SHARDS).glob("*.parquet"))
    assert all(pq.read_schema(shard).field(c).type == pa.bool_() for c in verdicts)


# ---- lazy planning -----------------------------------------------------------------------------

grids = st.fixed_dictionaries(
    {
        "scenarios": st.lists(st.sampled_from(["single_run", "happy_path", "default"]), min_size=1, unique=True),
        "intensities": st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=1, unique=True),
        "latency_ratios": st.lists(st.sampled_from([0.5, 2.0]), unique=True),
        "transports": st.lists(st.sampled_from(["sync", "async"]), unique=True),
        "seeds": st.none() | st.integers(1, 40),
        "policies": st.sampled_from([[], ["a"], ["a", "b"]]),
    }
)


@settings(max_examples=40, deadline=None)
@given(st.lists(grids, min_size=1, max_size=3), st.integers(1, 30), st.integers(1, 9))
def test_the_size_by_arithmetic_is_the_size_of_the_plan(
    grid_list: list[dict[str, object]], seeds: int, step: int
) -> None:
    document = {
        "name": "size",
        "seeds": seeds,
        "seeds_per_task": step,
        "policy": [{"label": "a", "preset": "head"}, {"label": "b", "preset": "adr-111"}],
        "grid": [{"name": f"g{i}", **{k: v for k, v in g.items() if v is not None}} for i, g in enumerate(grid_list)],
    }
    planned = SweepConfig.model_validate(document)
    tasks = planned.tasks()
    assert planned.size() == (len(tasks), sum(t.seed_count for t in tasks))
    assert list(planned.iter_tasks()) == tasks


def test_the_built_in_review_is_sized_without_planning() -> None:
    review = builtin_review()
    tasks = review.tasks()
    assert review.size() == (len(tasks), sum(t.seed_count for t in tasks))


class Started(Exception):
    """Raised from the progress callback once the first shard of a huge sweep is written."""


def test_a_sweep_of_10_8_seeds_starts_without_planning_every_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(self: SweepConfig) -> list[object]:
        raise AssertionError("the whole plan was built")

    monkeypatch.setattr(SweepConfig, "tasks", never)
    huge = config(CONFIG.replace("seeds = 2\n", "seeds = 100000000\n").replace("per_task = 2", "per_task = 25"))
    seen: list[SweepProgress] = []

    def first_shard(progress: SweepProgress) -> None:
        seen.append(SweepProgress(progress.total, progress.done, simulations_total=progress.simulations_total))
        if progress.done:
            raise Started

    with pytest.raises(Started):
        run_job(huge, tmp_path / "huge", workers=1, window=1, on_progress=first_shard)
    assert (seen[0].total, seen[0].simulations_total) == (4_000_000, 100_000_000)
    assert seen[-1].done == 1 and len(list((tmp_path / "huge" / SHARDS).glob("*.parquet"))) == 1
