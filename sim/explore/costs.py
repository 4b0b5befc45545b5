"""Costs as search targets: ``explore --target cost:NAME`` finds, shrinks and replays one instance of a
liveness or run cost the report tallies, as it does a violation.

A cost is one of the per-simulation counts of the report's cost table (:mod:`checks.metrics`,
:mod:`checks.liveness`): a live segment reaped while progressing, a dead-letter with no write in flight
or no fatal fault, a run failed by slowness alone, a requeue, a wasted tool execution, a duplicated
idempotent write, a dead-letter of a given reason. A simulation *shows* ``cost:NAME`` when that count
is above zero; :func:`with_cost` then adds a pseudo-verdict named ``cost:NAME`` (``valid`` false) to its
result, so every explorer, the shrinker (which keeps "shows the cost"), counterexample files and
``replay`` treat it as they treat a violated invariant. Its mechanism is the cost itself. The witness
(computed for replay and drawing only) is the record at which a prefix of the history first counts
the cost: where it happened.

Knows the judge's metrics, never the world's processes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from checks.columns import (
    STAT_DEAD_LETTERS,
    STAT_DEAD_LETTERS_NO_FATAL,
    STAT_DEAD_LETTERS_NO_WRITE,
    STAT_DUPLICATE_IDEMPOTENT_WRITES,
    STAT_FAILED_BY_SLOWNESS,
    STAT_PROGRESSING_REAPED,
    STAT_REQUEUES,
    STAT_WASTED_TOOL_EXECUTIONS,
)
from checks.history import Op
from checks.metrics import run_metrics
from checks.verdict import Kind, Validity, Verdict
from model.errors import LeaselabError, unknown_name
from sim.world.simulate import SimulationResult

PREFIX = "cost:"
COLUMNS: dict[str, str] = {
    "progressing_reaped": STAT_PROGRESSING_REAPED,
    "dead_letters_no_fatal": STAT_DEAD_LETTERS_NO_FATAL,
    "failed_by_slowness": STAT_FAILED_BY_SLOWNESS,
    "dead_letters": STAT_DEAD_LETTERS,
    "dead_letters_no_write": STAT_DEAD_LETTERS_NO_WRITE,
    "requeues": STAT_REQUEUES,
    "duplicate_idempotent_writes": STAT_DUPLICATE_IDEMPOTENT_WRITES,
    "wasted_tool_executions": STAT_WASTED_TOOL_EXECUTIONS,
}
"""Each count of the report's cost table, by the name ``--target cost:NAME`` takes; a dead-letter of
one reason is ``cost:dl.REASON`` (the table's ``dl.*`` columns)."""
MEANINGS: dict[str, str] = {
    "progressing_reaped": "the reaper requeued or dead-lettered a live segment that was making progress",
    "dead_letters_no_fatal": "a run was dead-lettered with no fault the spec treats as fatal",
    "failed_by_slowness": "a run ended FAILED and its only faults were slowness",
    "dead_letters": "a run was dead-lettered",
    "dead_letters_no_write": "a run was dead-lettered with no write in flight",
    "requeues": "a run was requeued",
    "duplicate_idempotent_writes": "one logical idempotent write landed more than once",
    "wasted_tool_executions": "a tool call executed more than once",
}


def is_cost(name: str) -> bool:
    return name.startswith(PREFIX)


def cost_names() -> list[str]:
    return [PREFIX + name for name in COLUMNS]


def check_cost(name: str) -> str:
    """``name`` (``cost:NAME``) if it is a cost the report counts; else a one-line error."""
    bare = name.removeprefix(PREFIX)
    if bare in COLUMNS or (bare.startswith("dl.") and len(bare) > 3 and bare[3:].replace("_", "").isalnum()):
        return name
    what, _ = unknown_name("cost", name, [*cost_names(), "cost:dl.REASON"], see="")
    raise LeaselabError(what, field="--target", hint=f"{len(COLUMNS) + 1} in all: sim/explore/costs.py")


def count(name: str, history: Sequence[Op], request_types: Sequence[Any] = ()) -> int:
    """How many times ``history`` shows the cost ``name`` (``cost:NAME``)."""
    bare = name.removeprefix(PREFIX)
    columns = run_metrics(history, request_types).columns()
    value = columns.get(COLUMNS.get(bare, bare), 0)
    return int(value) if isinstance(value, (int, float)) else 0


def first_record(name: str, history: Sequence[Op]) -> int | None:
    """The record at which a prefix of ``history`` first counts the cost (bisection; None if never)."""
    if count(name, history) <= 0:
        return None
    lo, hi = 0, len(history)  # count(history[:lo]) == 0 < count(history[:hi])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if count(name, history[:mid]) > 0:
            hi = mid
        else:
            lo = mid
    return hi - 1


def with_cost(result: SimulationResult, name: str, *, witness: bool = False) -> SimulationResult:
    """``result`` with the pseudo-verdict ``name`` (``cost:NAME``): false when the history shows the cost."""
    shown = count(name, result.history, result.request_types)
    bare = name.removeprefix(PREFIX)
    meaning = MEANINGS.get(bare, f"a run was dead-lettered with reason {bare.removeprefix('dl.')}")
    if shown > 0:
        at = first_record(name, result.history) if witness else None
        verdict = Verdict(
            name,
            Kind.SOMETIMES,
            Validity.INVALID,
            () if at is None else (at,),
            f"{shown} x {meaning}" + ("" if at is None else f" (first counted at record {at})"),
            shown,
        )
    else:
        verdict = Verdict(name, Kind.SOMETIMES, Validity.VALID, (), f"no instance: {meaning}", 0)
    return replace(result, verdicts={**result.verdicts, name: verdict})


__all__ = ["COLUMNS", "MEANINGS", "PREFIX", "check_cost", "cost_names", "count", "first_record", "is_cost", "with_cost"]
