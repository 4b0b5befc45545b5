"""The generated fast paths for the runtime's frozen values build exactly what the plain
dataclass machinery builds: ``fast_init`` constructors, ``replace_row`` and the store's
changed-row test (speed work; histories depend on all three)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.frozen import fast_init
from model.records import RunRow, Step
from model.transitions import replace_row
from model.vocab import RunStatus, StepKind, TerminationReason
from sim.world.store import _differs

_INTS = st.integers(min_value=0, max_value=10**6)
_TEXT = st.sampled_from(["", "worker:h1:101", "reaper:h1:113", "non_idempotent_write", "x"])
COLUMNS: dict[str, st.SearchStrategy[Any]] = {
    "uid": _INTS,
    "uuid": st.sampled_from(["run-001", "run-002"]),
    "status": st.sampled_from(list(RunStatus)),
    "claimed_by": _TEXT,
    "lease_expires": _INTS,
    "requeue_count": st.integers(min_value=0, max_value=5),
    "pending_effect": _TEXT,
    "termination_reason": st.sampled_from(list(TerminationReason)),
    "error_class": _TEXT,
    "iterations": _INTS,
    "total_tokens": _INTS,
    "started_at": _INTS,
    "finished_at": _INTS,
    "tstamp": _INTS,
    "crdate": _INTS,
}
rows = st.fixed_dictionaries(COLUMNS).map(lambda columns: RunRow(**columns))
changes = st.dictionaries(st.sampled_from(sorted(COLUMNS)), st.none()).flatmap(
    lambda keys: st.fixed_dictionaries({name: COLUMNS[name] for name in keys})
)


@given(rows, changes)
def test_replace_row_builds_what_dataclasses_replace_builds(row: RunRow, change: dict[str, Any]) -> None:
    fast = replace_row(row, **change)
    assert type(fast) is RunRow
    assert fast == dataclasses.replace(row, **change)
    assert dataclasses.astuple(fast) == dataclasses.astuple(dataclasses.replace(row, **change))


def test_a_replaced_row_is_still_frozen_and_hashable_like_any_row() -> None:
    row = replace_row(RunRow(1, "run-001"), status=RunStatus.RUNNING)
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.status = RunStatus.QUEUED  # type: ignore[misc]
    assert hash(row) == hash(RunRow(1, "run-001", status=RunStatus.RUNNING))


@given(rows, rows)
def test_the_stores_changed_row_test_is_row_inequality(first: RunRow, second: RunRow) -> None:
    assert _differs(first, second) == (first != second)
    assert not _differs(first, replace_row(first))


def test_fast_init_keeps_parameters_defaults_and_frozenness() -> None:
    step = Step(StepKind.TOOL, 2, "search_pages", call_id="2.0")
    fields = (step.kind, step.round_no, step.tool, step.call_id, step.execution)
    assert fields == (StepKind.TOOL, 2, "search_pages", "2.0", 0)
    assert step == Step(StepKind.TOOL, 2, "search_pages", "2.0")
    with pytest.raises(dataclasses.FrozenInstanceError):
        step.tool = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Step(StepKind.TOOL)  # type: ignore[call-arg]  # round_no has no default


def test_fast_init_refuses_what_it_cannot_build_faithfully() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        value: int

        def __post_init__(self) -> None:
            raise AssertionError("never skipped")

    with pytest.raises(TypeError, match="__post_init__"):
        fast_init(Checked)

    @dataclasses.dataclass(frozen=True, slots=True)
    class WithFactory:
        items: list[int] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError, match="plain fields"):
        fast_init(WithFactory)
