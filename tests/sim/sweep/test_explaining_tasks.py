"""A task that explains (``SweepTask.explain``): its worker names each violation's finding or
non-guarantee while the history is in memory, in ``why.*`` columns the review reads instead of
re-running the simulation; what it writes must be what the review's re-run would find."""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa
import pytest

from checks.columns import WHY as WHY_PREFIX
from sim.review.builtin import builtin_review
from sim.review.jobs import Cell, RecogniseJob, run_recognise
from sim.review.plan import HEAD, ExplainingSweep, canonical, explained_grids, known_explanations
from sim.review.review import with_seeds
from sim.sweep.rows import run_task_output
from sim.sweep.shards import shard_metadata, shard_table
from sim.sweep.task import SweepTask

TASK = SweepTask("default", "head", 0, 8, grid="main", explain=True)


@pytest.fixture(scope="module")
def explained_rows() -> list[dict[str, object]]:
    return run_task_output(TASK).rows


def test_a_violated_invariant_gets_the_explanation_a_re_run_finds(explained_rows: list[dict[str, object]]) -> None:
    checked = 0
    for row in explained_rows:
        violated = tuple(sorted(k.removeprefix("inv.") for k, v in row.items() if k.startswith("inv.") and v is False))
        whys = {k.removeprefix(WHY_PREFIX): v for k, v in row.items() if k.startswith(WHY_PREFIX)}
        assert set(whys) == set(violated), "a why.* column for each violated invariant and no other"
        if not violated:
            continue
        cell = Cell("default", "head", (), 1.0, int(str(row["seed"])), str(row["digest"]))
        assert sorted(whys.items()) == sorted(run_recognise(RecogniseJob(cell, violated, "main")))
        checked += 1
    assert checked >= 3, "default under head violates something in most of 8 seeds"


def test_a_task_that_does_not_explain_writes_no_why_column() -> None:
    rows = run_task_output(replace(TASK, explain=False, seed_count=3)).rows
    assert not [k for row in rows for k in row if k.startswith(WHY_PREFIX)]
    assert replace(TASK, explain=False).key == TASK.key, "explaining adds columns, never another shard"


def test_a_shard_keeps_an_explanation_that_only_a_later_row_has(explained_rows: list[dict[str, object]]) -> None:
    """Arrow takes a table's columns from its first row: a why.* column first met in a later row must
    still be a column, null in the rows that lack it."""
    rows = [
        {"seed": 0, "x": 1},
        {"seed": 1, "x": 2, f"{WHY_PREFIX}inv": "F-01"},
        {"seed": 2, "x": 3, f"{WHY_PREFIX}inv": ""},
    ]
    table = shard_table(rows, shard_metadata(TASK))
    assert table.column(f"{WHY_PREFIX}inv").to_pylist() == [None, "F-01", ""]
    assert table.schema.field(f"{WHY_PREFIX}inv").type == pa.string()
    whole = shard_table(explained_rows, shard_metadata(TASK))
    columns = {k for row in explained_rows for k in row if k.startswith(WHY_PREFIX)}
    assert columns and columns <= set(whole.column_names)


def test_the_review_explains_head_in_the_grids_it_explains_and_nothing_else() -> None:
    config = with_seeds(builtin_review(), 2)
    grids = set(explained_grids(config))
    marked = unmarked = 0
    for task in ExplainingSweep(config).iter_tasks():
        head = task.policy_label == "head" and canonical(task.policy) == HEAD and not task.flags
        assert task.explain == (head and task.grid in grids), task
        marked += task.explain
        unmarked += not task.explain
    assert marked and unmarked
    assert ExplainingSweep(config).size() == config.size()


def test_a_job_is_known_only_when_the_row_explained_every_invariant_it_asks() -> None:
    import pandas as pd

    row = pd.Series({f"{WHY_PREFIX}a": "F-01", f"{WHY_PREFIX}b": "", f"{WHY_PREFIX}c": None, "d": 1})
    assert known_explanations(row, ("a", "b")) == (("a", "F-01"), ("b", ""))
    assert known_explanations(row, ("a", "c")) is None, "null: that row's task did not explain"
    assert known_explanations(row, ("a", "e")) is None, "absent: no shard of the sweep explained"
    assert known_explanations(pd.Series({f"{WHY_PREFIX}a": float("nan")}), ("a",)) is None
