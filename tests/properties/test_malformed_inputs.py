"""The bad-input contract, generated: malformed scenario, sweep-configuration and replay files, and
command-line numbers out of range, all exit 2 with one line under 200 characters naming the file, no
traceback and nothing on stdout (the ``refused`` fixture, ``tests/conftest.py``).

Each file is a mutation of a valid one (every library scenario, a sweep configuration using every
grid feature, every stored counterexample) of one of seven kinds, each invalid by construction:

- a leaf of the wrong TOML type (never an integer for a float, which is allowed);
- a number out of range or not finite (NaN, infinities, +-1e300 for a float; +-2**64 for an integer:
  no field allows either), or a fault's index or value inside a counterexample's fault text;
- an unknown key in any table (``zz_`` names no field and no flag);
- a required key deleted, or a required array emptied;
- undecodable bytes (UTF-16, a 0xFF or NUL byte anywhere, a binary prefix);
- nesting past the limit (arrays, inline tables, dotted keys);
- a truncation before the end of the last required line (which always ends in a bracket or a quote,
  so a cut cannot leave a shorter valid value).

The hand-written case of each kind a user met is in ``tests/leaselab/test_cli_bad_input.py``.
"""

from __future__ import annotations

import itertools
import math
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scenarios.limits import MAX_SEED
from scenarios.loader import LIBRARY_DIR, load_scenario
from scenarios.user_files import MAX_DEPTH
from sim.explore.counterexample import read
from sim.sweep.config import load_config

ROOT = Path(__file__).resolve().parents[2]
Refused = Callable[..., str]
Doc = dict[str, Any]
Path_ = tuple[str | int, ...]

SCENARIOS = sorted(LIBRARY_DIR.glob("*.toml"))
REPLAYS = sorted(
    path
    for folder in ("register/entries", "register/entries/open", "tests/properties/data")
    for path in (ROOT / folder).glob("*.toml")
)
CONFIG = """name = "prop"
seeds = 4
seeds_per_task = 2

[[policy]]
label = "head"
preset = "head"
flags = { write_fence = true, idempotency_keys = false }

[[policy]]
label = "adr-111"
preset = "adr-111"

[[grid]]
name = "main"
scenarios = ["happy_path", "single_run"]
intensities = [0.5, 1.0]
latency_ratios = [0.5, 2.0]
transports = ["sync", "async"]
policies = ["head", "adr-111"]
seeds = 2
"""

REQUIRED: dict[str, tuple[Path_, ...]] = {
    "scenario": (("name",), ("runs",)),
    "config": (
        ("name",),
        ("seeds",),
        ("policy",),
        ("grid",),
        ("policy", 0, "label"),
        ("policy", 0, "preset"),
        ("grid", 0, "name"),
        ("grid", 0, "scenarios"),
    ),
    "replay": (("version",), ("scenario",), ("policy",), ("seed",), ("invariant",), ("digest",), ("faults",)),
}
EMPTIABLE: dict[str, tuple[Path_, ...]] = {
    "scenario": (("runs",),),
    "config": (("policy",), ("grid",), ("grid", 0, "intensities")),
    "replay": (),
}


def last_required_end(surface: str, text: str) -> int:
    """Where the last required line of a base file ends (at a bracket: a cut before it is never valid)."""
    if surface == "scenario":
        return text.index("[[runs]]") + len("[[runs]]") - 1
    if surface == "config":
        start = text.index("\nscenarios = [")
        return text.index("]", start)
    start = text.index("\nfaults = [")
    return text.index("\n]", start) + 1


# ---- walking a decoded document -------------------------------------------------------------------


def leaves(value: Any, path: Path_ = ()) -> list[tuple[Path_, Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in leaves(v, (*path, k))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in leaves(v, (*path, i))]
    return [(path, value)]


def tables(value: Any, path: Path_ = ()) -> list[Path_]:
    found = [path] if isinstance(value, dict) else []
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    return found + [t for k, v in children for t in tables(v, (*path, k))]


def at(doc: Any, path: Path_) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def has(doc: Any, path: Path_) -> bool:
    try:
        at(doc, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


def replaced(doc: Doc, path: Path_, value: Any) -> Doc:
    copy: Doc = tomllib.loads(tomli_w.dumps(doc))
    at(copy, path[:-1])[path[-1]] = value
    return copy


def deleted(doc: Doc, path: Path_) -> Doc:
    copy: Doc = tomllib.loads(tomli_w.dumps(doc))
    del at(copy, path[:-1])[path[-1]]
    return copy


# ---- the mutations -------------------------------------------------------------------------------


def other_type(value: Any) -> st.SearchStrategy[Any]:
    """A value of another TOML type than ``value`` (an int is never replaced by a float: floats take ints)."""
    candidates: list[Any] = [[1, "x"], {"zz": 1}]
    if not isinstance(value, str):
        candidates += ["zz", "10"]  # "10": a number as a string is refused too (strict types)
    if not isinstance(value, bool):
        candidates.append(True)
    if isinstance(value, bool | str):
        candidates += [7, 2.5]
    return st.sampled_from(candidates)


def out_of_range(value: Any) -> st.SearchStrategy[Any]:
    if isinstance(value, float):
        return st.sampled_from([math.nan, math.inf, -math.inf, 1e300, -1e300])
    return st.sampled_from([2**64, -(2**64)])


def bad_fault_text(line: str) -> st.SearchStrategy[str]:
    at_index, family, kind, _value = line.split()
    bad_index = st.sampled_from(["-1", "1e3", "+5", "1000000001", "0x10"]).map(lambda i: f"{i} {family} {kind} 0.0")
    bad_value = st.sampled_from(["nan", "inf", "-inf", "1e300", "-1e300", "soon"]).map(
        lambda v: f"{at_index} {family} {kind} {v}"
    )
    return st.one_of(bad_index, bad_value)


@st.composite
def structural(draw: st.DrawFn, surface: str, text: str) -> bytes:
    """A decoded-then-re-encoded mutation: wrong type, out of range, unknown key, missing or empty section."""
    doc: Doc = tomllib.loads(text)
    kind = draw(st.sampled_from(["wrong type", "out of range", "unknown key", "missing", "empty"]))
    scalars = [(p, v) for p, v in leaves(doc) if p]
    numbers = [(p, v) for p, v in scalars if isinstance(v, int | float) and not isinstance(v, bool)]
    faults = [(p, v) for p, v in scalars if surface == "replay" and p[0] == "faults"]
    if kind == "empty" and EMPTIABLE[surface]:
        target = draw(st.sampled_from([p for p in EMPTIABLE[surface] if has(doc, p)]))
        return tomli_w.dumps(replaced(doc, target, [])).encode()
    if kind in ("missing", "empty"):
        target = draw(st.sampled_from([p for p in REQUIRED[surface] if has(doc, p)]))
        return tomli_w.dumps(deleted(doc, target)).encode()
    if kind == "unknown key":
        table = draw(st.sampled_from(tables(doc)))
        key = "zz_" + draw(st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12))
        return tomli_w.dumps(replaced(doc, (*table, key), draw(st.sampled_from([1, "x", True])))).encode()
    if kind == "out of range" and (numbers or faults):
        path, value = draw(st.sampled_from(numbers + faults))
        bad = draw(bad_fault_text(value) if isinstance(value, str) else out_of_range(value))
        return tomli_w.dumps(replaced(doc, path, bad)).encode()
    path, value = draw(st.sampled_from(scalars))
    return tomli_w.dumps(replaced(doc, path, draw(other_type(value)))).encode()


@st.composite
def undecodable(draw: st.DrawFn, text: str) -> bytes:
    data = text.encode()
    how = draw(st.sampled_from(["utf-16", "utf-16-le", "0xff", "nul", "binary prefix"]))
    if how in ("utf-16", "utf-16-le"):
        return text.encode(how)
    where = draw(st.integers(0, len(data)))
    if how == "binary prefix":
        junk = draw(st.binary(min_size=0, max_size=64))
        return junk + b"\xfe\xff\x00" + data
    return data[:where] + (b"\xff" if how == "0xff" else b"\x00") + data[where:]


@st.composite
def too_deep(draw: st.DrawFn, text: str) -> bytes:
    shape = draw(st.sampled_from(["arrays", "inline tables", "dotted keys"]))
    deep = st.integers(300, 600 if shape == "dotted keys" else 3000)  # past tomllib's recursion
    depth = draw(st.one_of(st.integers(MAX_DEPTH, 40), deep))
    if shape == "arrays":
        line = "zz = " + "[" * depth + "]" * depth
    elif shape == "inline tables":
        line = "zz = " + "{a = " * depth + "1" + "}" * depth
    else:
        line = "zz." * depth + "a = 1"
    return (line + "\n" + text).encode()


@st.composite
def truncated(draw: st.DrawFn, surface: str, text: str) -> bytes:
    data = text.encode()
    end = len(text[: last_required_end(surface, text)].encode())
    return data[: draw(st.integers(0, end - 1))]


def base_text(surface: str) -> st.SearchStrategy[str]:
    if surface == "scenario":
        return st.sampled_from(SCENARIOS).map(lambda p: p.read_text(encoding="utf-8"))
    if surface == "replay":
        return st.sampled_from(REPLAYS).map(lambda p: p.read_text(encoding="utf-8"))
    return st.just(CONFIG)


@st.composite
def malformed(draw: st.DrawFn, surface: str) -> bytes:
    text = draw(base_text(surface))
    return draw(
        st.one_of(structural(surface, text), undecodable(text), too_deep(text), truncated(surface, text)),
    )


# ---- the properties ------------------------------------------------------------------------------

_names = itertools.count()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("malformed")


def fresh(folder: Path, data: bytes) -> Path:
    """A new file per example: the scenario loader caches by path, size and mtime."""
    path = folder / f"in-{next(_names)}.toml"
    path.write_bytes(data)
    return path


COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "scenario": lambda path, _out: ["run", str(path)],
    "config": lambda path, out: ["sweep", str(path), "--out", str(out)],
    "replay": lambda path, _out: ["replay", str(path)],
}


@pytest.mark.parametrize("surface", list(COMMANDS))
def test_every_base_file_is_valid_before_the_mutation_and_after_a_plain_round_trip(surface: str, folder: Path) -> None:
    bases = {"scenario": SCENARIOS, "replay": REPLAYS}.get(surface)
    texts = [p.read_text(encoding="utf-8") for p in bases] if bases else [CONFIG]
    loader: Callable[[Path], Any] = {"scenario": load_scenario, "config": load_config, "replay": read}[surface]
    for text in texts:
        assert loader(fresh(folder, text.encode()))
        assert loader(fresh(folder, tomli_w.dumps(tomllib.loads(text)).encode()))
        assert last_required_end(surface, text) > 0


@pytest.mark.slow
@pytest.mark.parametrize("surface", list(COMMANDS))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_a_malformed_file_is_exit_2_in_one_short_line_naming_it(
    surface: str, folder: Path, refused: Refused, data: st.DataObject
) -> None:
    path = fresh(folder, data.draw(malformed(surface), label="file"))
    out = folder / f"out-{path.stem}"
    refused(*COMMANDS[surface](path, out), names=f"{path}: ")
    assert not out.exists()


OPTIONS: list[tuple[list[str], str, int | float, int | float]] = [
    (["run", "happy_path"], "--seed", 0, MAX_SEED),
    (["explore"], "--seed", 0, MAX_SEED),
    (["explore"], "--workers", 1, 256),
    (["explore"], "--budget-s", 0.1, 7 * 86_400.0),
    (["verify", "single_run"], "--bound", 0, 4),
    (["report"], "--seeds", 1, 100_000_000),
    (["report"], "--bound", 0, 3),
    (["mutants"], "--simulations", 1, 1_000_000_000),
]


@st.composite
def bad_option(draw: st.DrawFn) -> tuple[list[str], str, str]:
    command, option, low, high = draw(st.sampled_from(OPTIONS))
    if isinstance(low, float):
        value = draw(
            st.one_of(
                st.floats(max_value=low, exclude_max=True, allow_nan=False),
                st.floats(min_value=high, exclude_min=True),
                st.sampled_from(["nan", "inf", "-inf", "soon", "1,5"]),
            )
        )
    else:
        value = draw(
            st.one_of(
                st.integers(max_value=int(low) - 1),
                st.integers(min_value=int(high) + 1),
                st.sampled_from(["1.5", "true", "ten", "1e3", ""]),
            )
        )
    return command, option, str(value)


@pytest.mark.slow
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(case=bad_option())
def test_a_command_line_number_out_of_its_range_is_exit_2_in_one_short_line(
    refused: Refused, case: tuple[list[str], str, str]
) -> None:
    command, option, value = case
    refused(*command, option, value, names=f"Invalid value for '{option}'")
