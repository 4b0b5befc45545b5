"""``leaselab run`` and ``simulate()`` take every key of a sweep row, and say what the register knows.

A row of every grid of the built-in review replays by digest, through the library call and through
the README's recipe (``leaselab run SCENARIO --policy PRESET --seed N --intensity X --latency-ratio R
--transport T --fault-ranges FR``); each violation is labelled ``known: F-..``, ``non-guarantee:
NG-..`` or ``UNREGISTERED``, and the first line states the exit code that follows.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from checks import INVARIANTS
from leaselab.cli import app
from leaselab.results import UNREGISTERED, exit_code, explained_by, headline, label
from model.errors import LeaselabError
from register.explain import explain
from sim.review.builtin import builtin_review
from sim.sweep.rows import run_task_output
from sim.world.simulate import simulate

runner = CliRunner()


def _one_task_per_grid() -> list:  # type: ignore[type-arg]
    """The first task of each grid of the built-in review whose cell changes the scenario (an intensity
    other than 1, a latency ratio, or the deployment ranges), cut to one seed of scenario default."""
    picked = {}
    for task in builtin_review().iter_tasks():
        if task.grid in picked or task.scenario != "default":
            continue
        if task.intensity == 1.0 and not task.latency_ratio and not task.fault_ranges:
            continue
        picked[task.grid] = replace(task, seed_start=task.seed_start + 3, seed_count=1)
    return list(picked.values())


TASKS = _one_task_per_grid()


def test_the_built_in_review_gives_a_changed_cell_in_each_of_its_grids() -> None:
    assert {t.grid for t in TASKS} == {g.name for g in builtin_review().grid}


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.grid)
def test_a_sweep_row_of_every_grid_replays_by_digest_through_simulate_and_run(task) -> None:  # type: ignore[no-untyped-def]
    (row,) = run_task_output(task).rows
    keys = {k: row[k] for k in ("intensity", "latency_ratio", "transport", "fault_ranges")}
    result = simulate(row["scenario"], row["preset"], row["seed"], flags=row["flags"], **keys)
    assert result.digest == row["digest"]
    # without the cell's keys the history differs: the keys are what makes the row replay
    assert simulate(row["scenario"], row["preset"], row["seed"], flags=row["flags"]).digest != row["digest"]
    args = ["run", row["scenario"], "--policy", row["preset"], "--seed", str(row["seed"]), "--json"]
    args += [f"--flag={f}" for f in row["flags"].split(",") if f]
    args += ["--intensity", str(row["intensity"]), "--latency-ratio", str(row["latency_ratio"])]
    args += ["--transport", row["transport"], "--fault-ranges", row["fault_ranges"]]
    doc = json.loads(runner.invoke(app, args).stdout)
    assert doc["digest"] == row["digest"]


def test_simulate_takes_a_rows_flags_text() -> None:
    text = simulate("default", "head", 1, flags="idempotency_keys=true").digest
    mapping = simulate("default", "head", 1, flags={"idempotency_keys": True}).digest
    assert text == mapping != simulate("default", "head", 1).digest


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"intensity": -1.0}, "intensity"),
        ({"intensity": 101.0}, "intensity"),
        ({"latency_ratio": -0.5}, "latency_ratio"),
        ({"transport": "carrier-pigeon"}, "transport"),
        ({"fault_ranges": "galactic"}, "fault_ranges"),
    ],
)
def test_simulate_refuses_a_bad_cell_key_naming_it(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(LeaselabError) as error:
        simulate("happy_path", "head", 0, **kwargs)  # type: ignore[arg-type]
    assert error.value.field == field


@pytest.mark.parametrize(("option", "value"), [("--transport", "x"), ("--fault-ranges", "y"), ("--intensity", "-1")])
def test_run_refuses_a_bad_cell_option_in_one_line(option: str, value: str) -> None:
    result = runner.invoke(app, ["run", "happy_path", option, value])
    assert result.exit_code == 2
    assert option in result.stderr and len(result.stderr.splitlines()) == 1
    assert result.stdout == ""


# ---- what the register knows, and the exit contract ---------------------------------------------


def test_each_violation_is_labelled_with_the_register_entry_that_explains_it() -> None:
    result = simulate("default", "head", 0)
    why = explained_by(result)
    assert set(why) == set(result.violations) and why
    for name, entry in why.items():
        found = explain(name, result.history, result.verdicts[name])
        assert entry == ("" if found is None else found.id)
    out = runner.invoke(app, ["run", "default"]).stdout.splitlines()
    for name, entry in why.items():
        (line,) = [line for line in out if line.startswith(f"  FAIL {name} ")]
        assert f"[{label(entry)}]" in line


def test_labels_say_known_non_guarantee_or_unregistered() -> None:
    assert label("F-06") == "known: F-06"
    assert label("NG-identity") == "non-guarantee: NG-identity"
    assert label("") == UNREGISTERED


def test_the_first_line_states_the_verdict_and_the_exit_code() -> None:
    result = runner.invoke(app, ["run", "default"])
    first = result.stdout.splitlines()[0]
    assert result.exit_code == 1
    assert first.startswith(f"head: 3 of {len(INVARIANTS)} invariants violated, all on record (")
    assert first.endswith("exit 1 as for any violation (--known-ok: 0 when all are on record)")
    held = runner.invoke(app, ["run", "happy_path", "--seed", "1", "--json"])
    idle = sum(1 for v in json.loads(held.stdout)["verdicts"].values() if v["judged"] == 0)
    assert idle > 0  # happy_path has no requeue, no retry, no failed audit: nothing for those to judge
    assert runner.invoke(app, ["run", "happy_path", "--seed", "1"]).stdout.splitlines()[0] == (
        f"head: no invariant violated; {len(INVARIANTS) - idle} of {len(INVARIANTS)} held, "
        f"{idle} had no case to judge; exit 0"
    )


def test_an_invariant_that_judged_no_case_is_not_marked_ok() -> None:
    lines = runner.invoke(app, ["run", "happy_path", "--seed", "1"]).stdout.splitlines()
    verdicts = json.loads(runner.invoke(app, ["run", "happy_path", "--seed", "1", "--json"]).stdout)["verdicts"]
    for name, v in verdicts.items():
        (line,) = [ln for ln in lines if ln.split()[1:2] in ([name], [name + ":"])]
        if v["judged"] == 0:
            assert line == f"  --   {name}: no case to judge in this history"
        else:
            assert line == f"  ok   {name}"


def test_a_history_where_every_invariant_judged_a_case_says_every_invariant_held() -> None:

    result = simulate("happy_path", "head", seed=1)
    busy = replace(result, verdicts={n: v for n, v in result.verdicts.items() if v.judged})
    assert headline("head", busy, {}, known_ok=False) == f"head: every invariant held ({len(busy.verdicts)} of " + (
        f"{len(busy.verdicts)}); exit 0"
    )


def test_known_ok_exits_0_only_when_the_register_explains_every_violation() -> None:
    assert runner.invoke(app, ["run", "default", "--known-ok"]).exit_code == 0
    assert exit_code({"a": "F-01", "b": "NG-identity"}, known_ok=True) == 0
    assert exit_code({"a": "F-01", "b": ""}, known_ok=True) == 1
    assert exit_code({"a": "F-01"}, known_ok=False) == 1
    assert exit_code({}, known_ok=False) == 0


def test_an_unregistered_violation_is_named_in_the_headline() -> None:
    result = simulate("default", "head", 0)
    line = headline("head", result, {"x": "", "y": "F-02"}, known_ok=True)
    assert f"1 {UNREGISTERED}, 1 on record (F-02); exit 1" in line


def test_run_json_carries_what_explains_each_violation() -> None:
    doc = json.loads(runner.invoke(app, ["run", "default", "--json"]).stdout)
    why = explained_by(simulate("default", "head", 0))
    for name, verdict in doc["verdicts"].items():
        assert verdict["explained_by"] == why.get(name)
