"""The record numbers the findings' write-ups cite are the records they were written about.

Each citation is pinned (``tests/properties/data/cited_records.json``: the record's signature and time);
a change that moves histories fails here until ``python -m benchmarks.recite`` re-numbers the write-ups,
and a change that rewrites a write-up fails until ``--pin`` records what it now cites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.recite import CITED, citations, find, history_of, occurrence, signature, write_ups
from checks.history import Op, OpType
from model.statements import CLAIM_QUEUED, NAMES

PINS = json.loads(CITED.read_text(encoding="utf-8"))


@pytest.mark.parametrize("write_up", write_ups(), ids=lambda path: path.stem[:4])
def test_every_citation_names_its_pinned_record(write_up: Path) -> None:
    history = history_of(write_up)
    cited = citations(write_up.read_text(encoding="utf-8"))
    pins = PINS.get(write_up.stem, {})
    assert cited, "a write-up tells its interleaving by records"
    for number in cited:
        assert str(number) in pins, f"#{number} is not pinned: run python -m benchmarks.recite --pin"
        assert number < len(history), f"#{number} is past the history's {len(history)} records"
        found = find(history, pins[str(number)])
        assert found == number, (
            f"#{number} should be {pins[str(number)][0]} at {pins[str(number)][1]} s, which is "
            f"{'nowhere' if found is None else f'#{found}'} now: python -m benchmarks.recite"
        )


def _op(index: int, time_s: float, process: str, op: str, value: dict[str, object]) -> Op:
    return Op(index, time_s, process, op, "run-001", OpType.OK, value)


def test_a_pinned_record_is_found_again_after_records_before_it_are_removed() -> None:
    before = [
        _op(0, 1.0, "reaper#1", "idle", {}),
        _op(1, 2.0, "worker1#1", "store", {"transition": NAMES[CLAIM_QUEUED]}),
        _op(2, 2.0, "worker1#1", "store", {"transition": NAMES[CLAIM_QUEUED]}),
    ]
    pinned = occurrence(before, 2)
    assert pinned == ("worker1#1 store/ok run-001 T3 claimQueued", 2.0, 1)
    after = [op._replace(index=op.index - 1) for op in before[1:]]
    assert find(after, pinned) == 1
    assert find(after[:1], pinned) is None, "the second statement at that instant is gone"
    assert signature(before[0]) == "reaper#1 idle/ok run-001"


def test_citations_are_hash_numbers_and_record_pairs_not_other_numbers() -> None:
    text = "claims it (#152, T3) at 1,050 s; llm#5 and seed 7; (records 130 and 233)"
    assert citations(text) == [152, 130, 233]
