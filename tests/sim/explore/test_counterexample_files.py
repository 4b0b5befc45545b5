"""``sim.explore.counterexample``: a counterexample written and read back is the same value, replays to
its digest, and a bad file is a ``LeaselabError`` that names the file and the field."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from model.errors import LeaselabError
from scenarios.loader import load_scenario
from scenarios.script import Fault
from sim.explore.base import Budget, Target
from sim.explore.counterexample import Counterexample, read, to_toml, write
from sim.explore.exhaustive import ExhaustiveExplorer
from sim.explore.profiles import without_probabilities
from sim.explore.swarm import SwarmExplorer


@cache
def found() -> Counterexample:
    """A real counterexample: the exhaustive explorer's smallest every_write_accounted on single_run."""
    report = ExhaustiveExplorer().verify(Target("single_run", "head", families=("crash",)), 1)
    return dict(report.violations)["every_write_accounted"]


def rich() -> Counterexample:
    """Every field set, with values that stress the TOML writer (quotes, backslashes, long floats)."""
    return Counterexample(
        scenario="single_run",
        policy="adr-112",
        seed=2**32 - 1,
        invariant="every_write_accounted",
        digest="0123456789abcdef0123456789abcdef",
        faults=(Fault(3, "slow", "stretch", 1.2345678901234567), Fault(28, "crash", "after", 0.0)),
        profile=without_probabilities(load_scenario("default").faults),
        flags={"kb6_renew_trusts_changed_rows": True, "write_fence": False},
        explorer="swarm",
        note='a "quoted" \\ note',
        ties=((0.0, 0), (23.088632088209074, 1)),
    )


def test_a_found_counterexample_round_trips(tmp_path: Path) -> None:
    cx = found()
    assert read(write(cx, tmp_path / "cx.toml")) == cx


def test_a_counterexample_with_every_field_set_round_trips(tmp_path: Path) -> None:
    cx = rich()
    assert read(write(cx, tmp_path / "deep" / "er" / "cx.toml")) == cx


def test_write_leaves_no_temporary_file_behind(tmp_path: Path) -> None:
    write(found(), tmp_path / "cx.toml")
    assert [p.name for p in tmp_path.iterdir()] == ["cx.toml"]


def test_a_read_counterexample_replays_to_its_digest_and_violation(tmp_path: Path) -> None:
    cx = read(write(found(), tmp_path / "cx.toml"))
    result = cx.run()
    assert result.digest == cx.digest
    assert cx.invariant in result.violations


def test_an_explorer_counterexample_with_anchors_round_trips(tmp_path: Path) -> None:
    report = SwarmExplorer().explore(
        Target("single_run", "adr-104", families=("audit",)), Budget(seconds=1e9, simulations=40, seed=1)
    )
    with_faults = [v.counterexample for v in report.violations if v.counterexample.faults]
    assert with_faults and all(f.anchor for f in with_faults[0].faults)
    assert read(write(with_faults[0], tmp_path / "cx.toml")) == with_faults[0]


def test_a_multi_line_note_round_trips(tmp_path: Path) -> None:
    cx = replace(rich(), note="first line\nsecond line")
    assert read(write(cx, tmp_path / "cx.toml")) == cx


# ---- bad files -----------------------------------------------------------------------------------


def without_line(text: str, key: str) -> str:
    return re.sub(rf"^{key} = .*\n", "", text, flags=re.M)


def without_faults(text: str) -> str:
    return re.sub(r"^faults = \[\n.*?^\]\n", "", text, flags=re.M | re.S)


def set_line(text: str, key: str, value: str) -> str:
    new, count = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, count=1, flags=re.M)
    assert count == 1
    return new


def with_fault_line(text: str, line: str) -> str:
    return re.sub(r"^faults = \[\n.*?^\]", f"faults = [\n  {line},\n]", text, count=1, flags=re.M | re.S)


def with_flag(text: str, assignment: str) -> str:
    return text.replace("[flags]\n", f"[flags]\n{assignment}\n", 1)


BAD: dict[str, tuple[str, object]] = {
    # name: (field the error must name, how to break the file)
    "missing scenario": ("scenario", lambda t: without_line(t, "scenario")),
    "missing policy": ("policy", lambda t: without_line(t, "policy")),
    "missing seed": ("seed", lambda t: without_line(t, "seed")),
    "missing invariant": ("invariant", lambda t: without_line(t, "invariant")),
    "missing digest": ("digest", lambda t: without_line(t, "digest")),
    "missing faults": ("faults", without_faults),
    "seed is a string": ("seed", lambda t: set_line(t, "seed", '"0"')),
    "seed is a boolean": ("seed", lambda t: set_line(t, "seed", "true")),
    "seed is a float": ("seed", lambda t: set_line(t, "seed", "1.5")),
    "digest is a number": ("digest", lambda t: set_line(t, "digest", "5")),
    "scenario is a list": ("scenario", lambda t: set_line(t, "scenario", '["single_run"]')),
    "faults is a string": ("faults", lambda t: without_faults(t).replace("ties = ", 'faults = "x"\nties = ')),
    "unknown policy": ("policy", lambda t: set_line(t, "policy", '"adr-999"')),
    "unknown flag": ("flags.write_fences", lambda t: with_flag(t, "write_fences = true")),
    "bad flag value": ("flags.write_fence", lambda t: with_flag(t, 'write_fence = "maybe"')),
    "flags not a table": ("flags", lambda t: t.replace("[flags]\n", "").replace("ties = ", "flags = 3\nties = ")),
    "fault with three words": ("faults.0", lambda t: with_fault_line(t, '"28 crash after"')),
    "fault with a bad index": ("faults.0", lambda t: with_fault_line(t, '"x crash after 0.0"')),
    "fault with a bad value": ("faults.0", lambda t: with_fault_line(t, '"28 crash after soon"')),
    "fault not a string": ("faults.0", lambda t: with_fault_line(t, "28")),
    "unknown fault family": ("faults.0", lambda t: with_fault_line(t, '"28 meteor after 0.0"')),
    "unknown profile family": ("profile.meteor", lambda t: t + "\n[profile.meteor]\nprobability = 0.1\n"),
    "bad profile probability": (
        "profile.crash.probability",
        lambda t: t.replace("[profile.crash]\nprobability = 0.0", "[profile.crash]\nprobability = 7.0"),
    ),
    "ties not a list": ("ties", lambda t: set_line(t, "ties", '"none"')),
    "tie of one number": ("ties.0.1", lambda t: set_line(t, "ties", "[[1.0]]")),
    "tie with a float priority": ("ties.0.1", lambda t: set_line(t, "ties", "[[1.0, 0.5]]")),
    "tie with a string time": ("ties.0.0", lambda t: set_line(t, "ties", '[["1.0", 0]]')),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_file_is_a_leaselab_error_naming_the_file_and_the_field(case: str, tmp_path: Path) -> None:
    field, breaker = BAD[case]
    text = breaker(to_toml(found()))  # type: ignore[operator]
    assert text != to_toml(found()), "the breaker changed nothing"
    path = tmp_path / "cx.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LeaselabError) as caught:
        read(path)
    assert caught.value.file == str(path)
    assert caught.value.field == field
    assert str(path) in str(caught.value) and field in str(caught.value)


def test_bad_toml_is_a_leaselab_error_naming_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "cx.toml"
    path.write_text(set_line(to_toml(found()), "seed", "= 0"), encoding="utf-8")
    with pytest.raises(LeaselabError) as caught:
        read(path)
    assert caught.value.file == str(path)
    assert "bad TOML" in str(caught.value) and "line" in str(caught.value)


def test_a_missing_file_is_a_leaselab_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.toml"
    with pytest.raises(LeaselabError) as caught:
        read(path)
    assert caught.value.file == str(path)


def test_an_unknown_scenario_is_a_leaselab_error_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "cx.toml"
    path.write_text(set_line(to_toml(found()), "scenario", '"no_such_scenario"'), encoding="utf-8")
    with pytest.raises(LeaselabError) as caught:
        read(path)
    assert caught.value.field == "scenario"
    assert "no_such_scenario" in str(caught.value)


def test_an_unknown_scenario_names_the_counterexample_file(tmp_path: Path) -> None:
    path = tmp_path / "cx.toml"
    path.write_text(set_line(to_toml(found()), "scenario", '"no_such_scenario"'), encoding="utf-8")
    with pytest.raises(LeaselabError) as caught:
        read(path)
    assert str(path) in str(caught.value)


def test_a_numeric_flag_value_is_a_leaselab_error(tmp_path: Path) -> None:
    path = tmp_path / "cx.toml"
    path.write_text(with_flag(to_toml(found()), "write_fence = 1"), encoding="utf-8")
    with pytest.raises(LeaselabError) as caught:
        read(path)
    assert caught.value.file == str(path)


def test_an_unknown_fault_kind_is_a_leaselab_error(tmp_path: Path) -> None:
    path = tmp_path / "cx.toml"
    path.write_text(with_fault_line(to_toml(found()), '"28 crash sideways 0.0"'), encoding="utf-8")
    with pytest.raises(LeaselabError) as caught:
        read(path)
    assert caught.value.field == "faults.0"
    assert "kind must be one of: before, after" in str(caught.value)


def test_an_unknown_invariant_is_a_leaselab_error(tmp_path: Path) -> None:
    path = tmp_path / "cx.toml"
    path.write_text(set_line(to_toml(found()), "invariant", '"every_write_acounted"'), encoding="utf-8")
    with pytest.raises(LeaselabError) as caught:
        read(path)
    assert caught.value.field == "invariant"
