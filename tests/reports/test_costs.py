"""Large changes of a cost between consecutive presets are said, small ones and noise around zero not."""

from __future__ import annotations

from typing import Any

from reports.costs import big_changes


def _row(policy: str, **values: Any) -> dict[str, Any]:
    base = {
        "policy": policy,
        "completion_rate": 0.6,
        "requeues_per_run": 0.3,
        "settle_p50_s": 30.0,
        "settle_p95_s": 3800.0,
        "dead_letters": 20,
        "dead_letters_no_write": 10,
        "wasted_tool_executions": 10,
    }
    return {**base, **values}


def test_a_factor_of_two_or_more_is_said_with_both_values() -> None:
    rows = [_row("adr-122"), _row("head", settle_p50_s=615.7, completion_rate=0.55, wasted_tool_executions=4)]
    assert big_changes(rows, ["adr-122", "head"]) == [
        "settle p50 adr-122 → head: 30.0 s → 615.7 s (x20.5)",
        "wasted tool executions adr-122 → head: 10 → 4 (/2.5)",
    ]


def test_noise_around_zero_says_nothing_but_a_real_change_from_zero_does() -> None:
    rows = [_row("a", dead_letters=0, dead_letters_no_write=0), _row("b", dead_letters=2, dead_letters_no_write=9)]
    assert big_changes(rows, ["a", "b"]) == ["dead-letters with no write in flight a → b: 0 → 9 (from none)"]


def test_only_consecutive_presets_present_in_the_rows_are_compared() -> None:
    rows = [_row("a"), _row("c", settle_p50_s=300.0)]
    assert big_changes(rows, ["a", "b", "c"]) == ["settle p50 a → c: 30.0 s → 300.0 s (x10.0)"]
    assert big_changes(rows, ["c"]) == []
