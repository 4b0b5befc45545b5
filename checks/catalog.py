"""The invariant catalogue: every registered invariant, in one order, and the one judging pass over them.

An invariant is declared once, where its checker is defined: ``@invariant(name, kind, meaning,
tags=...)`` on the :class:`~checks.fused.Machine` that judges it (:mod:`checks.judgement`). The
checkers live in the themed modules beside this one (the audit trail, writes, the row's life, ground
truth against the runtime's statements, fencing, what a row says, what the runtime tells its callers,
the reaper's accounts, the reasons a settle writes, the ADR promises); this module imports them, so
that each registers, and orders them (:data:`ORDER`). The first twelve are the architecture's
(``docs/architecture.md``, "The history and the invariants"). ``judge`` walks a history once, building
the shared index and feeding every checker and coverage property; ``check_all`` is its verdicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from checks import (  # noqa: F401 - importing a checker's module registers its invariants
    accounts,
    audit,
    fencing,
    ground,
    lifecycle,
    outcomes,
    promises,
    reasons,
    rows,
    spec_calls,
    spec_claims,
    spec_classes,
    spec_columns,
    spec_position,
    spec_promises,
    spec_rows,
    spec_rules,
    writes,
)
from checks.coverage import COVERAGE, Coverage, reached_by
from checks.fused import run_pass
from checks.history import Op
from checks.index import Index
from checks.judgement import REGISTERED, Invariant
from checks.verdict import Verdict

ORDER: tuple[str, ...] = (
    "every_write_accounted",
    "no_success_over_unrecorded_write",
    "no_retry_after_failed_write_audit",
    "non_idempotent_at_most_once",
    "terminal_is_terminal",
    "settles_by_owner",
    "unique_event_sequence",
    "requeue_budget_respected",
    "writes_fenced_under_lease",
    "fence_matches_inflight_write",
    "read_only_audit_fail_soft",
    "every_run_terminates",
    "approved_write_turn_recorded",
    "builtin_write_approved",
    "unknown_name_is_strictest",
    "retryable_failure_retried",
    "dead_letter_reason_matches_cause",
    "segment_outcome_matches_row",
    "terminal_row_no_stale_fence",
    "row_timestamps_kept",
    "segment_outcome_true",
    "lease_lost_means_lost",
    "reaper_account_true",
    "enqueue_cancel_result_true",
    "terminal_reason_names_cause",
    "lost_lease_stops",
    "cancel_observed_at_boundary",
    "lease_within_bound",
    "lease_is_the_specs",
    "requeue_backoff_per_spec",
    "entry_points_throw_as_specified",
    "event_sequence_without_gap",
    "recovery_per_spec",
    "rounds_per_spec",
    "claim_follows_precheck",
    "inserted_row_per_spec",
    "settled_totals_per_spec",
    "payload_failure_has_cause",
    "stale_selection_per_spec",
    "input_resume_runs_its_calls",
    "requeued_row_per_spec",
    "fence_stamps_a_write",
    "audit_step_execution_true",
    "approval_runs_as_decided",
    "failure_classified_per_spec",
    "invoked_tool_known_and_offered",
    "position_reresolved_after_claim",
)
"""The catalogue's order (report columns, sweep rows, every listing): the one list an invariant joins
besides its registration. A registered invariant missing here comes after these, in registration order."""


def catalogue() -> tuple[Invariant, ...]:
    """Every registered invariant: those of :data:`ORDER` in its order, then any other in registration order."""
    placed = [REGISTERED[name] for name in ORDER if name in REGISTERED]
    return (*placed, *(inv for name, inv in REGISTERED.items() if name not in ORDER))


INVARIANTS: tuple[Invariant, ...] = catalogue()
"""The catalogue as registered when the package loaded (:func:`catalogue` is the live one)."""
_MISSING = [name for name in ORDER if name not in REGISTERED]
if _MISSING:  # pragma: no cover - a renamed checker must not silently drop out of every sweep
    raise ImportError(f"checks.catalog.ORDER names unregistered invariants: {_MISSING}")


def tagged(tag: str) -> frozenset[str]:
    """The names of the catalogued invariants that carry ``tag``."""
    return frozenset(inv.name for inv in INVARIANTS if tag in inv.tags)


@dataclass(frozen=True, slots=True)
class Judgement:
    """One history judged: its index (None when even that failed), every verdict and coverage."""

    index: Index | None
    verdicts: dict[str, Verdict]
    coverage: dict[str, bool]


def judge(
    history: Iterable[Op] | Index,
    invariants: Sequence[Invariant] | None = None,
    properties: Sequence[Coverage] = COVERAGE,
) -> Judgement:
    """Every invariant's verdict and every coverage property of one history, from one pass that
    builds the index and feeds every ported checker (:mod:`checks.fused`); a checker
    written against the index runs after it, over that index. Never raises: if the index cannot
    be built, every verdict is UNKNOWN and nothing is reached."""
    if invariants is None:
        invariants = catalogue()
    checkers = [inv.machine() if inv.machine is not None else None for inv in invariants]
    probes = [prop.machine() if prop.machine is not None else None for prop in properties]
    fed = [m for m in checkers if m is not None]
    try:
        ix, failed = run_pass(
            history.history if isinstance(history, Index) else history, [*fed, *[p for p in probes if p is not None]]
        )
    except Exception as exc:  # an unreadable history must still yield verdicts
        return Judgement(
            None, {inv.name: inv.unknown(exc) for inv in invariants}, {prop.name: False for prop in properties}
        )
    verdicts: dict[str, Verdict] = {}
    position = 0
    for inv, machine in zip(invariants, checkers, strict=True):
        if machine is None:
            verdicts[inv.name] = inv.check(ix)
            continue
        error = failed.get(position)
        position += 1
        if error is not None:
            verdicts[inv.name] = inv.unknown(error)
            continue
        try:
            verdicts[inv.name] = inv.verdict(machine.finish(ix))
        except Exception as exc:  # a checker bug must never lose the history's verdicts
            verdicts[inv.name] = inv.unknown(exc)
    probe_failures = {i - len(fed): error for i, error in failed.items() if i >= len(fed)}
    return Judgement(ix, verdicts, reached_by(ix, properties, probes, probe_failures))


def check_all(history: Iterable[Op] | Index, invariants: Sequence[Invariant] | None = None) -> dict[str, Verdict]:
    """Every invariant's verdict over one history, in catalogue order; never raises (see :func:`judge`)."""
    return judge(history, invariants, ()).verdicts


__all__ = ["INVARIANTS", "ORDER", "Judgement", "catalogue", "check_all", "judge", "tagged"]
