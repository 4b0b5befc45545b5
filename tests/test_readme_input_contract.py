"""The README's input contract table is what the CLI prints: each row is re-run here, in a directory of
its own so that file names are as short as a user's, and its message must appear in the README word
for word. A reworded message fails this test until the table is regenerated
(``python tests/test_readme_input_contract.py`` prints it)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BASE_REPLAY = (ROOT / "register" / "entries" / "F-09-lagging-clock-expired-lease.toml").read_text(encoding="utf-8")
SCENARIO = 'name = "s"\n[[tools]]\nname = "t"\neffect = "non_idempotent_write"\n[[runs]]\nscript = [["t"], []]\n'
CONFIG = (
    'name = "c"\nseeds = 2\n[[policy]]\nlabel = "head"\npreset = "head"\n'
    '[[grid]]\nname = "g"\nscenarios = ["happy_path"]\nintensities = [1.0]\n'
)


def replay_with(key: str, value: str) -> str:
    text, count = re.subn(rf"^{key} = .*$", f"{key} = {value}", BASE_REPLAY, count=1, flags=re.M)
    assert count == 1
    return text


@dataclass(frozen=True)
class Row:
    surface: str
    kind: str
    args: tuple[str, ...]
    files: dict[str, str | bytes] = field(default_factory=dict)
    exit_code: int = 2


def scenario(kind: str, content: str | bytes) -> Row:
    return Row("scenario", kind, ("run", "s.toml"), {"s.toml": content})


def config(kind: str, old: str, new: str, **files: str) -> Row:
    assert old in CONFIG
    return Row("sweep config", kind, ("sweep", "c.toml", "--out", "o"), {"c.toml": CONFIG.replace(old, new), **files})


def replay(kind: str, content: str, exit_code: int = 2) -> Row:
    return Row("replay file", kind, ("replay", "r.toml"), {"r.toml": content}, exit_code)


def cli(kind: str, *args: str, **files: str) -> Row:
    return Row("command line", kind, args, {name.replace("_", "."): text for name, text in files.items()})


FAULT = '[[script]]\nfamily = "{}"\nvalue = {}\n'
ROWS = [
    scenario("UTF-16 text", SCENARIO.encode("utf-16")),
    scenario("binary", b"\x89PNG\r\n\x1a\n\x00\x00"),
    scenario("Latin-1 text", 'name = "caf\u00e9"\n'.encode("latin-1")),
    scenario("over 1 MiB", SCENARIO + "#" * (1 << 20)),
    scenario("nested 3,000 deep", "x = " + "[" * 3000 + "]" * 3000),
    scenario("TOML syntax", 'name = "s\n'),
    scenario("no runs", 'name = "s"\n'),
    scenario("bool for an integer", SCENARIO + "[world]\nworkers = true\n"),
    scenario("string for an integer", SCENARIO + '[world]\nworkers = "3"\n'),
    scenario("NaN", SCENARIO + FAULT.format("store", "nan")),
    scenario("out of range", SCENARIO + FAULT.format("store", "-5.0")),
    scenario("unused value", SCENARIO + FAULT.format("crash", "1.0")),
    scenario("probability", SCENARIO + "[faults.audit]\nprobability = 1.5\n"),
    scenario("misspelt key", SCENARIO + "[faults.audit]\nprobabilty = 0.1\n"),
    scenario("unknown key", SCENARIO + "[faults.audit]\nrate = 0.1\n"),
    scenario("not a choice", SCENARIO + '[faults.provider]\nclasses = ["x"]\n'),
    scenario("undeclared tool", SCENARIO.replace('["t"]', '["u"]')),
    config("string for an integer", "seeds = 2", 'seeds = "10"'),
    config("above the range", "seeds = 2", "seeds = 200000000"),
    config("infinity", "[1.0]", "[inf]"),
    config("unknown flag", '"head"\n[[grid]]', '"head"\nflags = { write_fences = true }\n[[grid]]'),
    config("misspelt table", "[[grid]]", "[[gird]]"),
    config("bad scenario", '"happy_path"', '"s.toml"', **{"s.toml": 'name = "s"\n'}),
    replay("no version", BASE_REPLAY.replace("version = 1\n", "")),
    replay("another version", replay_with("version", "2")),
    replay("unknown key", "colour = 1\n" + BASE_REPLAY),
    replay("negative seed", replay_with("seed", "-1")),
    replay("negative fault index", BASE_REPLAY.replace('"34 clock', '"-34 clock')),
    replay("fault value NaN", re.sub(r"offset -[0-9.]+", "offset nan", BASE_REPLAY)),
    replay("infinite tempo", replay_with("latency_factor", "inf")),
    replay("huge tempo", replay_with("latency_factor", "1e300")),
    replay("unknown invariant", replay_with("invariant", '"writes_fenced"')),
    replay("real divergence (exit 3)", replay_with("seed", "7"), exit_code=3),
    cli("--out is a file", "explore", "--out", "found.txt", found_txt="kept\n"),
    cli("--out under a file", "verify", "single_run", "--out", "found.txt/cx", found_txt="kept\n"),
    cli("negative seed", "run", "happy_path", "--seed", "-1"),
    cli("infinite budget", "explore", "--budget-s", "inf"),
    cli("too many workers", "sweep", "c.toml", "--out", "o", "--workers", "100000"),
    cli("unknown policy", "run", "happy_path", "--policy", "adr-999"),
    cli("unknown flag", "run", "happy_path", "--flag", "write_fences=off"),
    cli("unknown scenario", "run", "happy_pth"),
]


@contextmanager
def inside(folder: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def line_of(row: Row, folder: Path) -> str:
    """The one stderr line the CLI prints for ``row`` (asserting its exit code), with files written in ``folder``."""
    from leaselab.cli import app

    for name, content in row.files.items():
        path = folder / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    with inside(folder):
        result = CliRunner().invoke(app, list(row.args))
    assert result.exit_code == row.exit_code, (result.exit_code, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 if row.exit_code == 2 else lines, result.stderr
    line = lines[0]
    if row.exit_code == 3:  # the divergence names the causes at length; the table shows its start
        line = line.split(". Usual causes")[0] + ". Usual causes: ..."
    return line


def table_row(row: Row, line: str) -> str:
    return f"| {row.surface} | {row.kind} | `{' '.join(('leaselab', *row.args))}` | `` {line} `` |"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.surface}-{r.kind}")
def test_the_readme_table_shows_what_the_cli_prints(row: Row, tmp_path: Path) -> None:
    expected = table_row(row, line_of(row, tmp_path))
    assert expected in README.read_text(encoding="utf-8"), f"regenerate the README table; missing:\n{expected}"


def test_every_line_of_the_table_is_under_200_characters(tmp_path: Path) -> None:
    for i, row in enumerate(ROWS):
        folder = tmp_path / str(i)
        folder.mkdir()
        assert len(line_of(row, folder)) < 200


if __name__ == "__main__":  # print the table for the README
    import tempfile

    sys.path.insert(0, str(ROOT))
    print("| input | bad input | command | what it prints (exit 2 unless said) |")
    print("|---|---|---|---|")
    for row in ROWS:
        with tempfile.TemporaryDirectory() as folder:
            print(table_row(row, line_of(row, Path(folder))))
