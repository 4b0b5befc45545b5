"""What the cost table should not leave uncommented: the large changes of a cost between consecutive
presets (a settle latency twenty times longer, half the completed runs), each said in one phrase.

Pure: the cost table's rows (:func:`reports.tables.cost`, as the report's context holds them) and the
presets in ADR order in, phrases out.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

FACTOR = 2.0
"""A change is large when the later value is at least this many times the earlier, or at most its inverse."""
METRICS = (
    ("completion_rate", "completed runs", "{:.1%}", 0.01),
    ("requeues_per_run", "requeues per run", "{:.3f}", 0.01),
    ("settle_p50_s", "settle p50", "{:,.1f} s", 1.0),
    ("settle_p95_s", "settle p95", "{:,.1f} s", 1.0),
    ("dead_letters", "dead-letters", "{:,.0f}", 5.0),
    ("dead_letters_no_write", "dead-letters with no write in flight", "{:,.0f}", 5.0),
    ("wasted_tool_executions", "wasted tool executions", "{:,.0f}", 5.0),
)
"""(key in the cost row, name, format, floor): a change from or to 0 is said only when the other side
reaches the floor, so noise around zero says nothing."""


def _value(row: Mapping[str, Any], key: str) -> float | None:
    value = row.get(key)
    if value is None or isinstance(value, bool):
        return None
    number = float(value)
    return None if math.isnan(number) else number


def big_changes(rows: Sequence[Mapping[str, Any]], presets: Sequence[str]) -> list[str]:
    """One phrase per cost that changed by :data:`FACTOR` or more between consecutive ``presets``
    (``settle p50 adr-122 → head: 30.6 s → 615.7 s (x20.1)``)."""
    by_policy = {str(row["policy"]): row for row in rows}
    out = []
    for before, after in itertools.pairwise([p for p in presets if p in by_policy]):
        for key, name, shown, floor in METRICS:
            a, b = _value(by_policy[before], key), _value(by_policy[after], key)
            if a is None or b is None or a == b:
                continue
            if min(a, b) <= 0:
                if max(a, b) < floor:
                    continue
                factor = "from none" if a <= 0 else "to none"
            else:
                ratio = b / a
                if 1 / FACTOR < ratio < FACTOR:
                    continue
                factor = f"x{ratio:.1f}" if ratio >= 1 else f"/{1 / ratio:.1f}"
            out.append(f"{name} {before} → {after}: {shown.format(a)} → {shown.format(b)} ({factor})")
    return out
