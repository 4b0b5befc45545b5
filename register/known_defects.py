"""The known-defect catalogue: each historic defect, where it lived, what it breaks, how to find it.

For every defect flag of :mod:`model.policy` (and KB-11, the hazard ADR-141 prevents):
the policy in which the defect is present (a preset, with the flag switched on when
the preset itself does not carry it), the policy of the decision that fixed it, the
invariant it must violate, the fault families a search needs, and the scenario whose
workload exercises it. The property suite checks both directions with paired seeds:
found in ``defective``, absent in ``fixed``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class KnownDefect:
    """A historic defect of the spec: the invariant it violates, the fault families a search needs, the
    scenario that exercises it, the policy (and flags) where it is present and the one that fixed it."""

    id: str
    summary: str
    invariant: str
    families: tuple[str, ...]
    scenario: str
    defective_policy: str
    fixed_policy: str
    defective_flags: Mapping[str, bool] = field(default_factory=dict)
    fixed_flags: Mapping[str, bool] = field(default_factory=dict)


KNOWN_DEFECTS: tuple[KnownDefect, ...] = (
    KnownDefect(
        "KB-1",
        "finishRun keyed on uid only: a late, unguarded settle overwrites a cancelled row",
        "terminal_is_terminal",
        ("cancel",),
        "default",
        "adr-122",
        "adr-122",
        {"kb1_finish_unguarded": True},
    ),
    KnownDefect(
        "KB-2",
        "a resume starts at COUNT(events), at 0 when the read fails: sequences repeat",
        "unique_event_sequence",
        ("store",),
        "approval_write_on_resume",
        "head",
        "head",
        {"kb2_resume_position_by_count": True},
    ),
    KnownDefect(
        "KB-3",
        "suspendRun keyed on uid only: a cancelled run is resurrected to waiting",
        "terminal_is_terminal",
        ("cancel",),
        "approval_write_on_resume",
        "head",
        "head",
        {"kb3_suspend_unguarded": True},
    ),
    KnownDefect(
        "KB-5",
        "persist the step before renewing: a reaped zombie appends into the new owner's stream",
        "unique_event_sequence",
        ("slow",),
        "default",
        "head",
        "head",
        {"kb5_persist_before_renewal": True},
    ),
    KnownDefect(
        "KB-6",
        "renewLease trusts MySQL changed-rows: a same-second renewal is lease lost and the run re-executes",
        "non_idempotent_at_most_once",
        (),
        "same_second_renewals",
        "head",
        "head",
        {"kb6_renew_trusts_changed_rows": True},
    ),
    KnownDefect(
        "KB-7",
        "worker settles not owner-guarded: a reaped worker settles the new owner's running row",
        "settles_by_owner",
        ("slow",),
        "default",  # a provider call that outlives the lease and then fails (slow/hang_then_error)
        "head",
        "head",
        {"kb7_worker_settles_unguarded": True},
    ),
    KnownDefect(
        "KB-8",
        "a failed reaper re-dispatch is only logged: the row stays QUEUED forever",
        "every_run_terminates",
        ("slow", "dispatch"),
        "default",
        "head",
        "head",
        {"kb8_reaper_dispatch_failure_only_logged": True},
    ),
    KnownDefect(
        "KB-9",
        "requeue keeps pending_effect: the next attempt is judged by the previous attempt's fence",
        "fence_matches_inflight_write",
        ("slow", "provider"),
        "default",
        "adr-112",
        "adr-122",
    ),
    KnownDefect(
        "KB-10",
        "interactive and resume segments hold no lease: their writes run unfenced",
        "writes_fenced_under_lease",
        ("crash",),
        "default",
        "adr-122",
        "adr-141",
    ),
    KnownDefect(
        "KB-11",
        "payload-less rows requeued by the reaper: an abandoned interactive run is stranded QUEUED",
        "every_run_terminates",
        ("crash",),
        "abandoned_interactive",
        "head",
        "head",
        {"dead_letter_payloadless": False},
    ),
    KnownDefect(
        "KB-12",
        "a write turn executes though its approval was not recorded",
        "approved_write_turn_recorded",
        ("audit",),
        "approval_write_on_resume",
        "head",
        "head",
        {"kb12_approval_not_audited": True},
    ),
    KnownDefect(
        "KB-13",
        "an exhausted fallback chain classified unknown: a retryable failure is dead-lettered",
        "retryable_failure_retried",
        ("provider",),
        "default",
        "head",
        "head",
        {"kb13_fallback_chain_unknown": True},
    ),
)


def defect(defect_id: str) -> KnownDefect:
    for entry in KNOWN_DEFECTS:
        if entry.id == defect_id:
            return entry
    raise KeyError(defect_id)
