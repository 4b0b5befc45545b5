"""Every kind of bad input a user met, by hand, through the CLI: exit 2, one line under 200 characters
naming the file and the field and what is allowed, no traceback, nothing on stdout, nothing already
written lost. The generated mutations are in ``tests/properties/test_malformed_inputs.py``; the
contract itself is the ``refused`` fixture (``tests/conftest.py``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from leaselab.cli import app
from scenarios.user_files import MAX_DEPTH

Refused = Callable[..., str]
ROOT = Path(__file__).resolve().parents[2]
STORED = ROOT / "register" / "entries" / "F-09-lagging-clock-expired-lease.toml"
"""A stored counterexample with a tempo and a clock_skew fault: the base of the replay cases."""
SCENARIO = 'name = "x"\n[[tools]]\nname = "t"\neffect = "non_idempotent_write"\n[[runs]]\nscript = [["t"], []]\n'
CONFIG = """name = "c"
seeds = 2
seeds_per_task = 2
[[policy]]
label = "head"
preset = "head"
flags = { write_fence = true }
[[grid]]
name = "g"
scenarios = ["happy_path"]
intensities = [1.0]
"""
runner = CliRunner()


def write(tmp_path: Path, content: str | bytes, name: str = "in.toml") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def set_key(text: str, key: str, value: str) -> str:
    new, count = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, count=1, flags=re.M)
    assert count == 1, key
    return new


# ---- scenario files ------------------------------------------------------------------------------


def test_the_base_scenario_is_valid(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", str(write(tmp_path, SCENARIO))])
    assert result.exit_code in (0, 1) and result.stderr == ""


@pytest.mark.parametrize(
    ("case", "content", "says"),
    [
        ("utf-16 with a BOM", SCENARIO.encode("utf-16"), "is UTF-16 or UTF-32 text; TOML must be UTF-8"),
        ("utf-16 without a BOM", SCENARIO.encode("utf-16-le"), "has a NUL byte at offset 1"),
        ("binary", bytes([0x89, 0x50, 0x4E, 0x47, 0xFF, 0x01]) * 40, "is not UTF-8 text (byte 0x89 at offset 0)"),
        ("latin-1", ('description = "caf\u00e9"\n' + SCENARIO).encode("latin-1"), "is not UTF-8 text (byte 0xe9"),
        ("over 1 MiB", SCENARIO + "#" * (1 << 20) + "\n", "larger than 1 MiB"),
        ("bad TOML", 'name = "x\n', "bad TOML: "),
        ("an integer of 5000 digits", SCENARIO + "[world]\nworkers = " + "9" * 5000 + "\n", "bad TOML: "),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 30 else "",
)
def test_a_scenario_that_is_not_utf8_toml_is_one_line(
    refused: Refused, tmp_path: Path, case: str, content: str | bytes, says: str
) -> None:
    path = write(tmp_path, content)
    line = refused("run", str(path), names=f"{path}: ")
    assert says in line, line


@pytest.mark.parametrize(
    "nesting",
    [
        "x = " + "[" * 3000 + "]" * 3000,
        "x = " + "{a = " * 3000 + "1" + "}" * 3000,
        "x = " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        "a." * 40 + "a = 1",
    ],
    ids=["3000 arrays", "3000 inline tables", "17 arrays", "40 dotted keys"],
)
def test_deep_nesting_is_refused_in_one_line_not_a_recursion_error(
    refused: Refused, tmp_path: Path, nesting: str
) -> None:
    path = write(tmp_path, nesting + "\n" + SCENARIO)
    line = refused("run", str(path), names=f"{path}: ")
    assert f"nested deeper than {MAX_DEPTH} levels" in line


def test_sixteen_levels_are_still_read(tmp_path: Path) -> None:
    depth = MAX_DEPTH - 1  # the top-level table is the first level
    path = write(tmp_path, "x = " + "[" * depth + "]" * depth + "\n" + SCENARIO)
    result = runner.invoke(app, ["run", str(path)])
    assert result.exit_code == 2 and "x: unknown key" in result.stderr  # read, then refused by the schema


@pytest.mark.parametrize(
    ("family", "value", "says"),
    [
        ("store", "nan", "script.0.value: must be a finite number, not nan"),
        ("store", "inf", "script.0.value: must be a finite number, not inf"),
        ("clock_skew", "-inf", "script.0.value: must be a finite number, not -inf"),
        ("store", "-5.0", "store value (seconds a slow statement waits) must be from 0 to 1800, not -5.0"),
        ("duplicate", "-0.5", "duplicate value (seconds until the copy) must be from 0 to 1e+07, not -0.5"),
        ("clock_skew", "3601.0", "clock_skew value (clock offset in seconds) must be from -3600 to 3600, not 3601.0"),
        ("identity", "1.5", "identity value (which process, as a fraction) must be from 0 to 1, not 1.5"),
        ("crash", "2.0", "crash takes no value: write 0 or leave it out, not 2.0"),
    ],
)
def test_a_scripted_fault_value_out_of_its_range_is_one_line(
    refused: Refused, tmp_path: Path, family: str, value: str, says: str
) -> None:
    path = write(tmp_path, SCENARIO + f'[[script]]\nfamily = "{family}"\nvalue = {value}\n')
    line = refused("run", str(path), names=f"{path}: script.0.value: ")
    assert says in line, line


def test_a_scripted_fault_value_in_range_runs(tmp_path: Path) -> None:
    path = write(tmp_path, SCENARIO + '[[script]]\nfamily = "clock_skew"\nvalue = -120.0\n')
    assert runner.invoke(app, ["run", str(path)]).exit_code in (0, 1)


@pytest.mark.parametrize(
    ("text", "field", "says"),
    [
        ('name = "x"\n', "runs", "needs at least one [[runs]] table (with none, every invariant holds over"),
        ('name = "x"\nruns = []\n', "runs", "needs at least one [[runs]] table (with none, every invariant"),
        (SCENARIO + "[world]\nworkers = true\n", "world.workers", "must be an integer, not a boolean"),
        (SCENARIO.replace("[[runs]]", '[[runs]]\ncount = "10"'), "runs.0.count", "must be an integer, not a string"),
        (SCENARIO + "[world]\nworkers = 2.0\n", "world.workers", "must be an integer, not a number"),
        (SCENARIO + "[world]\nchaos_s = nan\n", "world.chaos_s", "must be a finite number, not nan"),
        (SCENARIO + "[world]\nchaos_s = 1e300\n", "world.chaos_s", "must be <= 10000000.0, got 1e+300"),
        (SCENARIO + "[faults.audit]\nprobability = true\n", "faults.audit.probability", "must be a number, not a"),
        (SCENARIO + '[faults.slow]\nlease_factor = [1.0, "2"]\n', "faults.slow.lease_factor.1", "must be a number"),
        (SCENARIO + "[faults.slow]\nlease_factor = [1.0, 101.0]\n", "faults.slow.lease_factor.1", "must be <= 100"),
        (SCENARIO + "[faults.audit]\nprobabilty = 0.1\n", "faults.audit.probabilty", "did you mean 'probability'?"),
        (SCENARIO + "[faults.audit]\nchance = 0.1\n", "faults.audit.chance", "allowed: probability, outages"),
        (SCENARIO + '[faults.provider]\nclasses = ["nope"]\n', "faults.provider.classes.0", "must be one of: conn"),
        (SCENARIO + "[[script]]\nfamily = 'store'\ntransition = 'T99'\n", "script.0.transition", "names no trans"),
        (SCENARIO + '[[script]]\nfamily = "store"\nat = -1\n', "script.0.at", "must be >= 0, got -1"),
        (SCENARIO + "remote = 1\n", "runs.0.remote", "unknown key; allowed: kind, count, arrival_s"),
    ],
)
def test_a_scenario_field_of_the_wrong_type_or_range_names_the_field_and_what_is_allowed(
    refused: Refused, tmp_path: Path, text: str, field: str, says: str
) -> None:
    path = write(tmp_path, text)
    line = refused("run", str(path), names=f"{path}: {field}: ")
    assert says in line, line


def test_a_long_unknown_name_is_cut_not_echoed_whole(refused: Refused, tmp_path: Path) -> None:
    path = write(tmp_path, SCENARIO.replace('script = [["t"], []]', f'script = [["{"t" * 5000}"]]'))
    line = refused("run", str(path), names=f"{path}: runs.0.script: unknown tool 'ttt")
    assert "...: declare it in [[tools]]" not in line and "..." in line


def test_a_directory_as_scenario_is_one_line(refused: Refused, tmp_path: Path) -> None:
    (tmp_path / "d.toml").mkdir()
    refused("run", str(tmp_path / "d.toml"), names=f"{tmp_path / 'd.toml'}: is a directory, not a scenario file")


# ---- sweep configurations ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "field", "says"),
    [
        ("seeds = 2\n", 'seeds = "10"\n', "seeds", "must be an integer, not a string"),
        ("seeds = 2\n", "seeds = true\n", "seeds", "must be an integer, not a boolean"),
        ("seeds = 2\n", "seeds = 100000001\n", "seeds", "must be <= 100000000"),
        ("seeds_per_task = 2\n", "seeds_per_task = -1\n", "seeds_per_task", "must be >= 1, got -1"),
        ("intensities = [1.0]", "intensities = [nan]", "grid.0.intensities.0", "must be a finite number, not nan"),
        ("intensities = [1.0]", "intensities = [inf]", "grid.0.intensities.0", "must be a finite number, not inf"),
        ("write_fence = true", 'write_fence = "off"', "policy.0.flags.write_fence", "must be true or false"),
        ("write_fence = true", "write_fences = true", "policy.0.flags.write_fences", "did you mean 'write_fence'?"),
        ('preset = "head"', 'preset = "adr-999"', "policy.0.preset", "one of: adr-104, adr-111"),
        ('name = "g"\n', 'name = "g"\nworkers = true\n', "grid.0.workers", "unknown key; allowed: name, scenarios"),
        ("[[grid]]", "[[gird]]", "gird", "unknown key; did you mean 'grid'?"),
        ("[[grid]]", "[[zzzz]]", "zzzz", "unknown key; allowed: name, seeds, seeds_per_task, policy, grid"),
    ],
)
def test_a_bad_sweep_configuration_is_one_line_and_creates_nothing(
    refused: Refused, tmp_path: Path, old: str, new: str, field: str, says: str
) -> None:
    assert old in CONFIG
    path = write(tmp_path, CONFIG.replace(old, new, 1), "sweep.toml")
    out = tmp_path / "out"
    line = refused("sweep", str(path), "--out", str(out), names=f"{path}: {field}: ")
    assert says in line, line
    assert not out.exists()


def test_a_sweep_configuration_in_utf16_or_nested_too_deep_is_one_line(refused: Refused, tmp_path: Path) -> None:
    utf16 = write(tmp_path, CONFIG.encode("utf-16"), "u16.toml")
    refused("sweep", str(utf16), "--out", str(tmp_path / "o"), names=f"{utf16}: is UTF-16")
    deep = write(tmp_path, "x = " + "[" * 500 + "]" * 500 + "\n" + CONFIG, "deep.toml")
    refused("sweep", str(deep), "--out", str(tmp_path / "o"), names=f"{deep}: nested deeper than")
    assert not (tmp_path / "o").exists()


def test_a_binary_scenario_named_by_a_configuration_names_the_grid_entry(refused: Refused, tmp_path: Path) -> None:
    write(tmp_path, b"\x00\x01\x02binary", "bin.toml")
    path = write(tmp_path, CONFIG.replace('["happy_path"]', '["bin.toml"]'), "sweep.toml")
    line = refused("sweep", str(path), "--out", str(tmp_path / "o"), names=f"{path}: grid.0.scenarios.0: ")
    assert "has a NUL byte at offset 0" in line


# ---- counterexample (replay) files ---------------------------------------------------------------


def stored() -> str:
    return STORED.read_text(encoding="utf-8")


def test_the_stored_base_replays_with_its_digest() -> None:
    result = runner.invoke(app, ["replay", str(STORED)])
    assert result.exit_code == 1 and "reproduced:" in result.stdout


@pytest.mark.parametrize(
    ("edit", "field", "says"),
    [
        (lambda t: t.replace("version = 1\n", ""), "version", "no format version: if leaselab wrote this file, add 'v"),
        (lambda t: set_key(t, "version", "2"), "version", "format version 2 is not one this leaselab reads"),
        (lambda t: set_key(t, "version", "true"), "version", "format version true is not one"),
        (lambda t: "colour = 1\n" + t, "colour", "unknown key; allowed: version, scenario, policy, seed"),
        (lambda t: t.replace("[tempo]\n", "[tempo]\nspeed = 2.0\n"), "tempo.speed", "allowed: latency_factor, store"),
        (lambda t: set_key(t, "seed", "-1"), "seed", "must be >= 0, got -1"),
        (lambda t: set_key(t, "seed", str(2**64)), "seed", "must be <= 9223372036854775807"),
        (lambda t: set_key(t, "seed", '"5"'), "seed", "must be an integer, not a string"),
        (lambda t: re.sub(r'"34 clock', '"-1 clock', t), "faults.0", "request index '-1' must be a whole number"),
        (lambda t: re.sub(r'"34 clock', '"1000000001 clock', t), "faults.0", "from 0 to 1,000,000,000"),
        (lambda t: re.sub(r"offset -[0-9.]+", "offset nan", t), "faults.0", "from -3600 to 3600, not nan"),
        (lambda t: re.sub(r"offset -[0-9.]+", "offset -inf", t), "faults.0", "from -3600 to 3600, not -inf"),
        (lambda t: re.sub(r"offset -[0-9.]+", "offset soon", t), "faults.0", "value 'soon' is not a number"),
        (lambda t: re.sub(r"clock_skew offset", "clock_skew stall", t), "faults.0", "kind must be one of: offset"),
        (lambda t: set_key(t, "latency_factor", "inf"), "tempo.latency_factor", "must be a finite number, not inf"),
        (lambda t: set_key(t, "latency_factor", "1e300"), "tempo.latency_factor", "must be <= 1000.0, got 1e+300"),
        (lambda t: set_key(t, "latency_factor", "-0.5"), "tempo.latency_factor", "must be >= 0.001, got -0.5"),
        (lambda t: set_key(t, "store_latency_s", "nan"), "tempo.store_latency_s", "must be a finite number"),
        (lambda t: set_key(t, "ties", "[[1.0, 2]]"), "ties.0.1", "must be <= 1, got 2"),
        (lambda t: set_key(t, "ties", "[[1.0, -2]]"), "ties.0.1", "must be >= -1, got -2"),
        (lambda t: set_key(t, "ties", "[[-1.0, 0]]"), "ties.0.0", "must be >= 0.0, got -1.0"),
        (lambda t: set_key(t, "digest", '"xyz"'), "digest", "does not match ^[0-9a-f]{32}$"),
        (lambda t: set_key(t, "invariant", '"writes_fenced_under_leases"'), "invariant", "did you mean 'writes_f"),
        (lambda t: t.replace("[flags]\n", "[flags]\nwrite_fences = true\n"), "flags.write_fences", "did you mean"),
        (lambda t: set_key(t, "scenario", '"happy_pth"'), "scenario", "did you mean 'happy_path'?"),
        (lambda t: set_key(t, "max_skew_s", "7200.0"), "profile.clock_skew.max_skew_s", "must be <= 3600.0"),
    ],
)
def test_a_bad_replay_file_is_exit_2_naming_the_field_never_3(
    refused: Refused, tmp_path: Path, edit: Callable[[str], str], field: str, says: str
) -> None:
    text = edit(stored())
    assert text != stored()
    path = write(tmp_path, text)
    line = refused("replay", str(path), names=f"{path}: {field}: ")
    assert says in line, line


def test_a_tempo_that_puts_the_scenario_out_of_range_names_the_tempo(refused: Refused, tmp_path: Path) -> None:
    slow = write(tmp_path, SCENARIO.replace("[[runs]]", "latency_s = [1.0, 100000.0]\n[[runs]]"), "slow.toml")
    text = set_key(stored(), "scenario", f'"{slow}"')  # a tool call of up to 10^5 s, times 1000
    path = write(tmp_path, set_key(text, "latency_factor", "1000.0"))
    line = refused("replay", str(path), names=f"{path}: tempo: ")
    assert "puts the scenario's" in line and "out of its range" in line


def test_a_valid_replay_whose_history_differs_is_still_exit_3(tmp_path: Path) -> None:
    path = write(tmp_path, set_key(stored(), "seed", "7"))
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 3 and "replay diverged" in result.stderr


STORED_FILES = sorted(
    path
    for folder in ("register/entries", "register/entries/open", "tests/properties/data")
    for path in (ROOT / folder).glob("*.toml")
)


def test_every_stored_counterexample_file_starts_with_its_format_version() -> None:
    assert len(STORED_FILES) >= 22
    for path in STORED_FILES:
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# leaselab counterexample") and lines[1] == "version = 1", path


@pytest.mark.slow
@pytest.mark.parametrize("path", STORED_FILES, ids=lambda p: p.stem)
def test_every_stored_counterexample_replays_with_its_old_digest(path: Path) -> None:
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.stdout.splitlines()[-1].startswith("reproduced: ")


# ---- --out naming an existing file ---------------------------------------------------------------

OUT_COMMANDS = {
    "report": lambda cfg: ["report", str(cfg), "--seeds", "1"],
    "sweep": lambda cfg: ["sweep", str(cfg)],
    "explore": lambda cfg: ["explore", "single_run", "--simulations", "50"],
    "verify": lambda cfg: ["verify", "single_run", "--bound", "1"],
}


@pytest.mark.parametrize("command", list(OUT_COMMANDS))
@pytest.mark.parametrize("under", [False, True], ids=["the file", "a path under it"])
def test_out_naming_an_existing_file_is_exit_2_before_any_work_and_keeps_the_file(
    refused: Refused, tmp_path: Path, command: str, under: bool
) -> None:
    config = write(tmp_path, CONFIG, "sweep.toml")
    existing = write(tmp_path, "what a user already wrote\n", "results.txt")
    out = existing / "sub" if under else existing
    says = "'results.txt' in this path is a file, so no directory" if under else "is a file, not a directory"
    line = refused(*OUT_COMMANDS[command](config), "--out", str(out), names=f"{out}: --out: ")
    assert says in line, line
    assert existing.read_text(encoding="utf-8") == "what a user already wrote\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.txt", "sweep.toml"]


# ---- command-line numbers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["run", "happy_path", "--seed", "-1"], "--seed"),
        (["run", "happy_path", "--seed", str(2**63)], "--seed"),
        (["explore", "--budget-s", "inf"], "--budget-s"),
        (["explore", "--budget-s", "nan"], "--budget-s"),
        (["explore", "--workers", "100000"], "--workers"),
        (["explore", "--simulations", "true"], "--simulations"),
        (["report", "--seeds", "1000000000"], "--seeds"),
        (["sweep", "x.toml", "--out", "o", "--workers", "0"], "--workers"),
        (["verify", "single_run", "--bound", "5"], "--bound"),
        (["mutants", "--budget-s", "-inf"], "--budget-s"),
        (["bench", "--search", "--budget-s", "1e309"], "--budget-s"),
    ],
)
def test_an_option_out_of_its_range_is_one_line(refused: Refused, args: list[str], option: str) -> None:
    line = refused(*args, names=f"Invalid value for '{option}'")
    assert "leaselab " in line and "--help" in line


def test_a_usage_error_quoting_a_huge_argument_stays_under_200_characters(refused: Refused) -> None:
    refused("run", "happy_path", "--seed", "9" * 5000, names="Invalid value for '--seed'")
