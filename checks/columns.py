"""The sweep row's column contract: every column name and the verdict encoding, declared once.

A sweep writes one row per simulation with these names (``sim.sweep.rows``, the run metrics of
:mod:`checks.metrics` and :mod:`checks.liveness`); the shards, the report's tables and figures and the
review read them with the same names. Verdict cells are nullable booleans (true held, false violated,
null unknown), so ``WHERE NOT "inv.x"`` selects violations in SQL and an unknown verdict is neither.

Pure: no pandas here either; :func:`violated_mask` and :func:`unknown_mask` are duck-typed over a pandas
Series or DataFrame of verdict cells.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from checks.verdict import Validity

ROW_KEY = ("grid", "scenario", "policy", "intensity", "latency_ratio", "transport", "collation", "seed")
"""The columns that identify a row: one simulation of one cell (no two rows of a sweep share them).
``collation`` is the store's identity collation; rows written before it existed lack it (binary)."""

INV = "inv."
"""``inv.<invariant>``: the verdict, encoded by :data:`VERDICT_VALUES`."""
JUDGED = "judged."
"""``judged.<invariant>``: how many cases the invariant judged."""
COV = "cov."
"""``cov.<property>``: whether a coverage ("sometimes") property was reached."""
FAULT = "fault."
"""``fault.<family>``: faults of the family that took effect."""
FINAL = "final."
"""``final.<status>``: runs that ended in the status."""
DL = "dl."
"""``dl.<reason>``: dead-letters written with the reason (sparse beyond :data:`DEAD_LETTER_REASONS`)."""
HIT = "hit."
"""``hit.<family>.<request kind>``: faults that struck a kind of request (sparse)."""
WHY = "why."
"""``why.<invariant>``, in rows of a task that explains where the invariant was violated: the id of the
registered finding or recorded non-guarantee whose recogniser matches the history, '' when none does;
null everywhere else."""
SPARSE = (HIT, DL)
"""Prefixes of columns a row carries only where they are nonzero (0 where a reader misses them)."""

STAT_RUNS = "stat.runs"
STAT_REQUESTS = "stat.requests"
STAT_LANDINGS = "stat.landings"
STAT_SIMULATED_S = "stat.simulated_s"
STAT_COMPLETED = "stat.completed"
STAT_REQUEUES = "stat.requeues"
STAT_DEAD_LETTERS = "stat.dead_letters"
STAT_DEAD_LETTERS_NO_WRITE = "stat.dead_letters_no_write"
STAT_SETTLE_LATENCIES_S = "stat.settle_latencies_s"
STAT_DUPLICATE_IDEMPOTENT_WRITES = "stat.duplicate_idempotent_writes"
STAT_WASTED_TOOL_EXECUTIONS = "stat.wasted_tool_executions"
STAT_PROGRESSING_REAPED = "stat.progressing_reaped"
STAT_DEAD_LETTERS_NO_FATAL = "stat.dead_letters_no_fatal"
STAT_FAILED_BY_SLOWNESS = "stat.failed_by_slowness"

DEAD_LETTER_REASONS = ("not_retryable", "provider_failed", "retries_exhausted")
"""``dl.*`` columns every row carries (0 when none), so shards share one schema; a rarer reason adds
its column only where it occurs."""

VERDICT_VALUES: dict[Validity, bool | None] = {Validity.VALID: True, Validity.INVALID: False, Validity.UNKNOWN: None}
"""A verdict as its ``inv.*`` cell."""


def names(prefix: str, columns: Any) -> list[str]:
    """The names under ``prefix`` among ``columns`` (``inv.x`` -> ``x``), in column order."""
    return [str(column).removeprefix(prefix) for column in columns if str(column).startswith(prefix)]


Cells = TypeVar("Cells")
"""A pandas Series or DataFrame of ``inv.*`` cells (named without importing pandas)."""


def violated_mask(verdicts: Cells) -> Cells:
    """True where an ``inv.*`` cell is false (violated); unknown (null) is not a violation. Reads the
    column as pandas gives it from Parquet: ``bool``, ``boolean`` or ``object`` with None."""
    cells: Any = verdicts
    return cast(Cells, cells.eq(False).fillna(False).astype(bool))


def unknown_mask(verdicts: Cells) -> Cells:
    """True where an ``inv.*`` cell is null (unknown)."""
    cells: Any = verdicts
    return cast(Cells, cells.isna())
