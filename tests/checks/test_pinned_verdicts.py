"""Every invariant judges the pinned histories as it did when they were pinned.

A table of verdicts (validity, witness, judged cases) and coverage over library histories with their
faults doubled and over 300 random hand-built histories (``pinned_cases.py``) stands in for frozen
copies of old checkers: a speed change must leave it identical, and a change of what an invariant
means shows here and is pinned again on purpose (``.venv/bin/python tests/checks/pinned_cases.py``).
The index's own lists are held to a direct reading of the history on Hypothesis-built histories.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from invariant_histories import FAIL, OK
from pinned_cases import PINNED, build_history, cases, table

from checks.fused import index_of
from checks.history import STORE, TOOL, Op
from checks.index import UNLISTED_ENTRIES

EXPECTED: dict[str, Any] = json.loads(PINNED.read_text(encoding="utf-8"))
CASES = cases()
REPIN = "if the change of meaning is intended, pin again: .venv/bin/python tests/checks/pinned_cases.py"


def test_every_pinned_history_is_still_there() -> None:
    assert sorted(EXPECTED) == sorted(name for name, _ in CASES)


@pytest.mark.parametrize(("name", "history"), CASES, ids=[name for name, _ in CASES])
def test_each_pinned_history_is_judged_as_pinned(name: str, history: list[Op]) -> None:
    now, pinned = table(history), EXPECTED[name]
    changed = {
        invariant: (pinned["verdicts"][invariant], verdict)
        for invariant, verdict in now["verdicts"].items()
        if invariant in pinned["verdicts"] and verdict != pinned["verdicts"][invariant]
    }
    assert not changed, f"{name}: verdicts moved (pinned, now): {changed}; {REPIN}"
    assert now["coverage"] == pinned["coverage"], f"{name}: coverage moved; {REPIN}"


def test_the_pinned_table_holds_judged_cases_and_violations_of_every_pinned_invariant() -> None:
    """What makes the table mean something: each invariant judged cases in it, and each one the random
    histories can break is broken somewhere in it."""
    judged: dict[str, int] = {}
    violated: set[str] = set()
    for entry in EXPECTED.values():
        for invariant, (valid, _, count) in entry["verdicts"].items():
            judged[invariant] = judged.get(invariant, 0) + count
            if valid is False:
                violated.add(invariant)
    assert all(count > 0 for count in judged.values()), {k: v for k, v in judged.items() if not v}
    assert len(violated) >= len(judged) // 2, sorted(set(judged) - violated)


class _HypothesisDraw:
    def __init__(self, draw: Any) -> None:
        self.draw = draw

    def pick(self, choices: Any) -> Any:
        return self.draw(st.sampled_from(choices))

    def integer(self, low: int, high: int) -> int:
        return int(self.draw(st.integers(low, high)))

    def boolean(self) -> bool:
        return bool(self.draw(st.booleans()))


@st.composite
def _histories(draw: Any) -> list[Op]:
    return build_history(_HypothesisDraw(draw))


@pytest.mark.slow
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(_histories())
def test_the_index_lists_what_a_direct_reading_of_the_history_finds(history: list[Op]) -> None:
    ix = index_of(history)
    assert list(ix.tool_invokes) == [op for op in history if op.op == TOOL and op.type.value == "invoke"]
    assert list(ix.refused) == [op for op in history if op.op == STORE and op.type is OK and not op.get("matched")]
    assert list(ix.listed_spans) == [span for span in ix.spans if span.entry not in UNLISTED_ENTRIES]
    for span in ix.spans:
        walked = span._records_until(span.completion)
        assert span.records == walked
        assert span.statements == [op for op in walked if op.op == STORE and op.type in (OK, FAIL)]
