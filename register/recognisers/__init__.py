"""The recognisers of the register, grouped by mechanism: does a violation's witness show the route of
a registered finding or non-guarantee? (:mod:`register.recognisers.common` says what they share.)"""

from __future__ import annotations

from register.recognisers.cancel import (
    cancel_after_fence_stamp,
    cancel_keeps_fence,
    cancel_probe_fail_closed,
    cancel_probe_zombie_event,
)
from register.recognisers.clocks import (
    lagging_clock_dead_letter,
    lagging_clock_stamp,
    reaper_clock_ahead,
    reaper_clock_ahead_dead_letter,
    reaper_clock_ahead_exhausted_over_new_fence,
    reaper_clock_ahead_requeue_past_budget,
)
from register.recognisers.common import Recogniser
from register.recognisers.dispatch import (
    enqueue_dispatch_settle_lost,
    queued_orphan,
    reaper_dispatch_dead_letter,
    reaper_dispatch_settle_over_new_owner,
    recovery_dispatch_any,
    recovery_dispatch_orphan,
    recovery_dispatch_outcome,
    recovery_dispatch_told_failed,
    sync_outer_requeued,
)
from register.recognisers.ownership import (
    claim_restamps_started,
    collated_identity,
    identity_not_unique,
    shared_identity,
    unchecked_settle_outcome,
)
from register.recognisers.stalls import (
    stalled_clear_dead_letter,
    stalled_fence_stamp,
    stalled_position_read_settle,
    stalled_resume_event,
    stalled_settle_over_new_owner,
    store_error_lease_lost,
)
from register.recognisers.writes import (
    cancelled_run_write_audit_lost,
    clear_not_persisted,
    completed_write_rerun,
    failed_write_audit_requeued,
    stale_snapshot_requeue_reruns_write,
    stale_suspend_reruns_write,
    unaudited_landed_write,
)

__all__ = [
    "Recogniser",
    "cancel_after_fence_stamp",
    "cancel_keeps_fence",
    "cancel_probe_fail_closed",
    "cancel_probe_zombie_event",
    "cancelled_run_write_audit_lost",
    "claim_restamps_started",
    "clear_not_persisted",
    "collated_identity",
    "completed_write_rerun",
    "enqueue_dispatch_settle_lost",
    "failed_write_audit_requeued",
    "identity_not_unique",
    "lagging_clock_dead_letter",
    "lagging_clock_stamp",
    "queued_orphan",
    "reaper_clock_ahead",
    "reaper_clock_ahead_dead_letter",
    "reaper_clock_ahead_exhausted_over_new_fence",
    "reaper_clock_ahead_requeue_past_budget",
    "reaper_dispatch_dead_letter",
    "reaper_dispatch_settle_over_new_owner",
    "recovery_dispatch_any",
    "recovery_dispatch_orphan",
    "recovery_dispatch_outcome",
    "recovery_dispatch_told_failed",
    "shared_identity",
    "stale_snapshot_requeue_reruns_write",
    "stale_suspend_reruns_write",
    "stalled_clear_dead_letter",
    "stalled_fence_stamp",
    "stalled_position_read_settle",
    "stalled_resume_event",
    "stalled_settle_over_new_owner",
    "store_error_lease_lost",
    "sync_outer_requeued",
    "unaudited_landed_write",
    "unchecked_settle_outcome",
]
