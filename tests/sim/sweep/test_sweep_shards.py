"""Shards on disk are checked, never trusted: a truncated, corrupt, foreign or short shard, or one damaged
in its middle with its footer intact, is detected (by its checksum in the ledger, its footer, key and
row count) and redone on resume, and refused by ``load`` naming the shard and the command that repairs
it; an unwritable or full output directory is one line, exit 2, with every finished shard kept."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from leaselab.cli import app
from model.errors import LeaselabError
from sim.sweep.config import SweepConfig, loads_config
from sim.sweep.directory import SHARDS, load, locked
from sim.sweep.job import run_job
from sim.sweep.ledger import LEDGER, file_checksum, read_ledger
from sim.sweep.shards import shard_problem

runner = CliRunner()
CONFIG = """
name = "shards"
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
scenarios = ["single_run"]
"""
TASKS = 8


def config() -> SweepConfig:
    return loads_config(CONFIG, source="shards.toml")


def digests(out: Path) -> list[tuple[str, int, str]]:
    frame = load(out)
    return sorted(zip(frame["policy"], frame["seed"], frame["digest"], strict=True))


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("finished")
    run_job(config(), out, workers=1)
    return out


def copy_of(finished: Path, tmp_path: Path) -> tuple[Path, list[Path]]:
    out = tmp_path / "out"
    shutil.copytree(finished, out)
    return out, sorted((out / SHARDS).glob("*.parquet"))


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def garble(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-12:-4] = b"\xff" * 8  # the footer length and part of the footer
    path.write_bytes(bytes(data))


def foreign(path: Path) -> None:
    other = sorted(path.parent.glob("*.parquet"))
    shutil.copyfile(next(p for p in other if p != path), path)


def short(path: Path) -> None:
    table = pq.read_table(path)
    pq.write_table(table.slice(0, 1).replace_schema_metadata(table.schema.metadata), path)


def middle(path: Path) -> None:
    """Flip bytes in the middle of the data pages; the footer (and the key and row count it holds) stays."""
    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    at = (4 + len(data) - 8 - footer) // 2
    data[at : at + 16] = bytes(b ^ 0x5A for b in data[at : at + 16])
    path.write_bytes(bytes(data))


@pytest.mark.slow
@pytest.mark.parametrize("damage", [truncate, garble, foreign, short, middle])
def test_a_bad_shard_is_refused_by_load_and_redone_on_resume(finished: Path, tmp_path: Path, damage: object) -> None:
    out, paths = copy_of(finished, tmp_path)
    assert callable(damage)
    damage(paths[2])
    with pytest.raises(LeaselabError) as caught:
        load(out)
    assert str(paths[2]) in str(caught.value) and "\n" not in str(caught.value)
    result = run_job(config(), out, workers=1)
    assert (result.progress.redone, result.progress.skipped) == (1, TASKS - 1)
    assert digests(out) == digests(finished)


def test_a_shard_damaged_in_its_middle_passes_its_footer_check_but_not_its_checksum(
    finished: Path, tmp_path: Path
) -> None:
    out, paths = copy_of(finished, tmp_path)
    middle(paths[3])
    task = next(t for t in config().tasks() if paths[3].name == f"{t.key}.parquet")
    assert shard_problem(paths[3], task) == ""  # what a resume used to check: it would have been reused
    with pytest.raises(LeaselabError) as caught:
        load(out)
    message = str(caught.value)
    assert message.startswith(f"{paths[3]}: damaged shard: its content does not match")
    assert "(repair it with: leaselab sweep " in message and f"--out {out.resolve()})" in message


def test_a_shard_the_ledger_does_not_vouch_for_is_redone_and_the_ledger_keeps_one_line_per_shard(
    finished: Path, tmp_path: Path
) -> None:
    """A shard without a checksum (written before shards had them) is redone; a checksum without its
    shard (a kill between the two writes) only leaves its task to do. After the resume the ledger holds
    exactly one matching line per shard."""
    out, paths = copy_of(finished, tmp_path)
    recorded = read_ledger(out / SHARDS)
    del recorded[paths[0].name]
    paths[1].unlink()
    (out / SHARDS / LEDGER).write_text("".join(f"{d}  {n}\n" for n, d in recorded.items()) + "0" * 20)
    with pytest.raises(LeaselabError, match="no checksum was recorded for it"):
        load(out)
    result = run_job(config(), out, workers=1)
    assert (result.progress.redone, result.progress.skipped) == (1, TASKS - 2)
    lines = (out / SHARDS / LEDGER).read_text().splitlines()
    assert sorted(line.split()[1] for line in lines) == sorted(p.name for p in paths)
    assert all(read_ledger(out / SHARDS)[p.name] == file_checksum(p) for p in paths)
    assert digests(out) == digests(finished)


def test_leftover_temporary_files_of_a_killed_writer_are_never_read(finished: Path, tmp_path: Path) -> None:
    out, paths = copy_of(finished, tmp_path)
    half = paths[0].with_name(paths[0].name + ".tmp-999999")
    shutil.copyfile(paths[0], half)
    truncate(half)
    paths[0].unlink()
    result = run_job(config(), out, workers=1)
    assert (result.progress.skipped, result.progress.redone) == (TASKS - 1, 0)
    assert not half.exists()
    assert digests(out) == digests(finished)


def test_an_output_path_that_cannot_be_a_directory_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "sweep.toml").write_text(CONFIG, encoding="utf-8")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    result = runner.invoke(app, ["sweep", str(tmp_path / "sweep.toml"), "--out", str(blocker / "out")])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and str(blocker) in result.stderr


def test_a_full_disk_mid_sweep_is_one_line_exit_2_and_keeps_every_finished_shard(
    finished: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sweep.toml").write_text(CONFIG, encoding="utf-8")
    out = tmp_path / "out"
    real = Path.write_bytes
    written: list[Path] = []

    def full_after_three(self: Path, data: bytes) -> int:  # the coordinator's only byte writes are shards
        if len(written) >= 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(self)
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", full_after_three)
    result = runner.invoke(app, ["sweep", str(tmp_path / "sweep.toml"), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if not line.startswith("sweep shards: ")]
    assert len(errors) == 1  # progress lines aside, one line
    line = errors[0]
    assert line.startswith("leaselab: ") and "No space left on device" in line and "finished shards are kept" in line
    kept = sorted(p for p in (out / SHARDS).iterdir() if p.name != LEDGER)
    assert len(kept) == 3 and all(p.suffix == ".parquet" for p in kept)  # no temporary file left behind
    assert {p.name for p in kept} <= set(read_ledger(out / SHARDS))  # every shard on disk has its checksum
    monkeypatch.setattr(Path, "write_bytes", real)
    resumed = run_job(loads_config(CONFIG, source="x", base=tmp_path), out, workers=1)
    assert (resumed.progress.skipped, resumed.progress.redone) == (3, 0)
    assert digests(out) == digests(finished)


def test_a_second_sweep_on_a_directory_being_written_is_refused(tmp_path: Path) -> None:
    (tmp_path / "sweep.toml").write_text(CONFIG, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    with locked(out):
        result = runner.invoke(app, ["sweep", str(tmp_path / "sweep.toml"), "--out", str(out)])
    assert result.exit_code == 2
    assert "another sweep is writing this directory" in result.stderr
    assert not list(out.glob(f"{SHARDS}/*.parquet"))
