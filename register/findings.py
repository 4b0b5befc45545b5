"""The findings: violations of ``head`` that contradict an ADR promise and that no recorded
non-guarantee (:mod:`register.nonguarantees`) covers.

Each has a minimal counterexample file ``entries/<id>-<slug>.toml`` (replayable with ``leaselab
replay``) and a write-up ``entries/<id>-<slug>.md`` (the invariant, the interleaving in plain words,
the ADR sentence it contradicts). Its ``recognise`` function (:mod:`register.recognisers`) reads a
violation's witness and says whether it happened the way the write-up describes: the property suite
accepts a failing claim only when a finding that lists the claim in ``explains`` recognises the
violation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from register import recognisers
from register.recognisers import Recogniser

FINDINGS_DIR = Path(__file__).resolve().parent / "entries"


@dataclass(frozen=True)
class Finding:
    """A registered violation of ``head`` that contradicts an ADR promise."""

    id: str
    slug: str
    invariant: str
    """The invariant its counterexample file names (the most specific one it violates)."""
    also: tuple[str, ...]
    """The other invariants the same interleaving violates."""
    families: tuple[str, ...]
    """The fault families of the minimal counterexample."""
    routes: tuple[str, ...]
    """Every fault family through which the search met the same mechanism."""
    adr: str
    promise: str
    """The ADR sentence it contradicts, as spec 7.1 (or the ADR) words it."""
    story: str
    explains: tuple[str, ...]
    """The ids of the claims (:mod:`register.claims`) this finding makes fail."""
    recognise: Recogniser
    deployment_ranges: bool = False
    """Reachable only beyond the library's fault ranges (``Scenario.at_deployment_ranges()``: a clock
    offset or a commit stall longer than the lease); a sweep at library ranges cannot reproduce it."""

    @property
    def invariants(self) -> tuple[str, ...]:
        return (self.invariant, *self.also)

    @property
    def counterexample(self) -> str:
        return f"{self.id}-{self.slug}.toml"

    @property
    def writeup(self) -> str:
        return f"{self.id}-{self.slug}.md"

    @property
    def path(self) -> Path:
        return FINDINGS_DIR / self.counterexample


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "F-01",
        "completed-write-rerun",
        "non_idempotent_at_most_once",
        (),
        ("provider",),
        ("provider", "slow", "crash", "store"),
        "ADR-112",
        "a non_idempotent_write runs at most once",
        "a non-idempotent write completes and clears its fence; a later retryable provider failure (or a "
        "later reap) requeues the run, which restarts at round 1 and executes the write again",
        ("adr112-at-most-once",),
        recognisers.completed_write_rerun,
    ),
    Finding(
        "F-02",
        "unaudited-landed-write",
        "every_write_accounted",
        (),
        ("slow",),
        ("slow", "crash", "store", "cancel"),
        "ADR-111",
        "a write whose audit step cannot be stored fails the run (no unrecorded write reported as success)",
        "a write's call outlives the lease and is reaped mid-call; the zombie's write lands, its boundary "
        "renewal fails, so its tool event is never stored; the requeued attempt completes the run",
        ("adr111-failed-write-audit-fails-run-cancel",),
        recognisers.unaudited_landed_write,
    ),
    Finding(
        "F-03",
        "cancel-probe-zombie-sequence",
        "unique_event_sequence",
        (),
        ("cancel", "slow"),
        ("cancel", "slow"),
        "ADR-104",
        "a zombie cannot append an event colliding with the new owner's stream (persist after renewal)",
        "a reaped zombie reaches a boundary after the run was re-claimed and then cancelled; the "
        "cancellation probe persists its step without renewal or ownership check, at a sequence the new "
        "owner already used",
        ("adr104-zombie-cannot-collide",),
        recognisers.cancel_probe_zombie_event,
    ),
    Finding(
        "F-04",
        "cancel-after-fence-stamp",
        "writes_fenced_under_lease",
        (),
        ("cancel",),
        ("cancel",),
        "ADR-141",
        "every executing segment holds a lease; a write that cannot be fenced (no persisted run or no "
        "lease) is refused before it runs",
        "a cancel lands between the write's fence stamp and the tool call; the write runs on a CANCELLED "
        "row with no claim and no lease",
        ("adr141-writes-fenced-under-lease-with-cancel",),
        recognisers.cancel_after_fence_stamp,
    ),
    Finding(
        "F-05",
        "recovery-dispatch-orphan",
        "every_run_terminates",
        ("segment_outcome_matches_row", "segment_outcome_true"),
        ("dispatch", "provider"),
        ("dispatch", "provider"),
        "ADR-104",
        "dead-letter = FAILED + retries_exhausted/not_retryable",
        "a retryable provider failure makes recovery requeue the run (T11) and dispatch its wake-up; the "
        "dispatch throws, and the owner-guarded dead-letter cannot match the now QUEUED, unclaimed row: "
        "the outcome says FAILED, the row stays QUEUED with no wake-up",
        ("adr104-dead-letter-settles-failed",),
        recognisers.recovery_dispatch_any,
    ),
    Finding(
        "F-06",
        "failed-write-audit-retried",
        "no_retry_after_failed_write_audit",
        ("no_success_over_unrecorded_write", "every_write_accounted", "non_idempotent_at_most_once"),
        ("audit", "store"),
        ("audit", "store", "crash"),
        "ADR-111",
        "a write whose audit step cannot be stored fails the run (no unrecorded write reported as success); "
        "that failure is never auto-retried",
        "a non-idempotent write lands and its boundary clears the fence; the audit insert fails, and the "
        "fail-closed dead-letter then throws on a store error: the row stays RUNNING, unfenced; the reaper "
        "requeues it, and the next attempt runs the write again and completes",
        ("adr111-no-success-over-unrecorded-write-store", "adr111-failed-write-audit-never-retried-store"),
        recognisers.failed_write_audit_requeued,
    ),
    Finding(
        "F-07",
        "cancelled-run-write-audit-lost",
        "every_write_accounted",
        (),
        ("audit", "cancel"),
        ("audit", "cancel"),
        "ADR-111",
        "a write whose audit step cannot be stored fails the run",
        "a user cancels while a write is in flight (or just after its audit insert failed); the write's "
        "audit insert fails and the fail-closed dead-letter cannot move the now terminal row: the run stays "
        "CANCELLED with no tool event for a write that landed and no audit failure recorded",
        ("adr111-failed-write-audit-fails-run-cancel",),
        recognisers.cancelled_run_write_audit_lost,
    ),
    Finding(
        "F-08",
        "enqueue-dispatch-failure-orphan",
        "every_run_terminates",
        (),
        ("dispatch", "store"),
        ("dispatch", "store", "crash"),
        "ADR-102",
        "no orphan QUEUED row after an enqueue dispatch failure",
        "the enqueue's wake-up dispatch throws, and the unguarded settleFailed that should fail the row "
        "hits a store error and is swallowed (or the client dies before it): the client gets "
        "RunEnqueueFailedException, the row stays QUEUED with no wake-up",
        ("adr102-no-orphan-after-dispatch-failure-store",),
        recognisers.enqueue_dispatch_settle_lost,
    ),
    Finding(
        "F-09",
        "lagging-clock-expired-lease",
        "writes_fenced_under_lease",
        (),
        ("clock_skew",),
        ("clock_skew",),
        "ADR-141",
        "every executing segment holds a lease; a write that cannot be fenced (no persisted run or no "
        "lease) is refused before it runs",
        "a segment whose clock lags true time by more than the lease (900 s) stamps its write's fence "
        "with lease_expires = now + 900 read from that clock: the lease is already expired in true time "
        "when the write runs, so a reaper with a true clock may reclaim the run mid-call",
        ("adr141-writes-fenced-under-lease",),
        recognisers.lagging_clock_stamp,
        deployment_ranges=True,
    ),
    Finding(
        "F-10",
        "stalled-resume-approval-collides",
        "unique_event_sequence",
        (),
        ("store",),
        ("store",),
        "ADR-104",
        "a zombie cannot append an event colliding with the new owner's stream (persist after renewal)",
        "a resume claims the run (T10) and a store statement before its approval event (the MAX(sequence) "
        "re-read, or the insert itself) stalls past the lease; the reaper requeues the run and a worker "
        "claims it and resumes the stream; the approval event, written with no renewal after the claim, "
        "lands at a sequence the new owner also uses",
        ("adr104-zombie-cannot-collide",),
        recognisers.stalled_resume_event,
        deployment_ranges=True,
    ),
    Finding(
        "F-11",
        "stalled-fence-stamp",
        "writes_fenced_under_lease",
        (),
        ("store",),
        ("store", "clock_skew"),
        "ADR-141",
        "every executing segment holds a lease; a write that cannot be fenced (no persisted run or no "
        "lease) is refused before it runs",
        "a write's fence stamp (T5) stalls in the store longer than the lease it computes: lease_expires = "
        "now + 900 is read before the statement, the statement commits after that moment (T5 has no "
        "lease-expiry predicate), and the tool runs at once under a lease already expired",
        ("adr141-writes-fenced-under-lease",),
        recognisers.stalled_fence_stamp,
        deployment_ranges=True,
    ),
    Finding(
        "F-12",
        "stalled-settle-over-new-owner",
        "settles_by_owner",
        ("every_write_accounted",),
        ("store",),
        ("store",),
        "ADR-104",
        "a worker that lost its lease stops without settling (LEASE_LOST)",
        "a worker claims a run and its position read fails; the unguarded settleFailed that follows "
        "(spec 3.1: ownedBy null) stalls in the store past the lease; the reaper requeues the run and "
        "another worker claims it (or an earlier holder's stale suspend, spec 9 C12, hands it to a resume); "
        "the stalled settle then fails the new owner's RUNNING row",
        ("adr104-lease-lost-stops-without-settling",),
        recognisers.stalled_settle_over_new_owner,
        deployment_ranges=True,
    ),
    Finding(
        "F-13",
        "stale-suspend-reruns-write",
        "non_idempotent_at_most_once",
        ("fence_matches_inflight_write",),
        ("store", "crash"),
        ("store", "crash", "clock_skew"),
        "ADR-112",
        "a non_idempotent_write runs at most once",
        "a worker's suspend (T9) stalls in the store past its lease; the reaper requeues the run, a later "
        "attempt suspends, is approved and executes the non-idempotent write, and its segment dies before "
        "settling; the stale suspend then commits (no owner guard, spec 9 C12) and puts the run back to "
        "waiting for the turn already executed; approving it runs the write again",
        ("adr112-at-most-once",),
        recognisers.stale_suspend_reruns_write,
        deployment_ranges=True,
    ),
    Finding(
        "F-14",
        "reaper-clock-ahead",
        "settles_by_owner",
        (),
        ("slow", "clock_skew"),
        ("clock_skew", "slow", "crash", "store"),
        "ADR-104",
        "reaper mutations re-check staleness so a live worker wins",
        "the reaper's clock runs ahead of true time; its staleness re-check (lease_expires < now) reads that "
        "clock, so it dead-letters a row whose lease has not expired while the segment holding it is still in "
        "its call (at deployment ranges, every running row at its next tick)",
        ("adr104-lease-lost-stops-without-settling",),
        recognisers.reaper_clock_ahead,
    ),
    Finding(
        "F-15",
        "stalled-position-read-settle",
        "settles_by_owner",
        ("every_write_accounted",),
        ("store",),
        ("store",),
        "ADR-104",
        "a worker that lost its lease stops without settling (LEASE_LOST)",
        "a segment's post-claim position read (runQueued's, or a resume's) stalls in the store past the "
        "lease; the reaper requeues the run and another worker claims it; the read then fails (or a resume's "
        "release throws) and the unguarded settleFailed (spec 3.1: ownedBy null), issued after that claim, "
        "fails its RUNNING row",
        ("adr104-lease-lost-stops-without-settling",),
        recognisers.stalled_position_read_settle,
        deployment_ranges=True,
    ),
    Finding(
        "F-16",
        "lagging-clock-dead-letter",
        "dead_letter_reason_matches_cause",
        (),
        ("clock_skew",),
        ("clock_skew",),
        "ADR-104",
        "reaper mutations re-check staleness so a live worker wins",
        "the reaper selects a run whose lease looks stale and issues its dead-letter on the snapshot's "
        "non-idempotent fence; before it commits, the live worker clears the fence, but its clock lags by "
        "more than the lease, so the renewal that comes with the clear stamps a lease still in the past: "
        "the staleness re-check passes and the run is dead-lettered not_retryable for a fence no longer there",
        (),
        recognisers.lagging_clock_dead_letter,
        deployment_ranges=True,
    ),
    Finding(
        "F-17",
        "reaper-dispatch-settle-over-new-owner",
        "settles_by_owner",
        (),
        ("dispatch", "duplicate"),
        ("dispatch", "duplicate", "store"),
        "ADR-104",
        "reaper mutations re-check staleness so a live worker wins",
        "the reaper requeues a run and its wake-up dispatch throws; its settleFailed (spec 9 C6: no owner "
        "guard, no staleness predicate) commits after a spare wake-up (a duplicate or late delivery) let a "
        "worker claim the requeued run, and fails that worker's RUNNING row",
        ("adr104-live-worker-wins",),
        recognisers.reaper_dispatch_settle_over_new_owner,
    ),
    Finding(
        "F-18",
        "stale-snapshot-requeue-reruns-write",
        "non_idempotent_at_most_once",
        (),
        ("store", "slow"),
        ("store", "slow", "clock_skew"),
        "ADR-112",
        "a non_idempotent_write runs at most once",
        "a segment's non-idempotent fence stamp (T5) applies after the reaper read its snapshot (T12), in "
        "which the row's lease had run out and it carried no fence (the stamp stalled, or was issued while "
        "the reaper ran an earlier row's attempt inline on the Sync transport); the reaper's requeue (T13: "
        "staleness re-check only, no pending_effect predicate) applies while the fence stands, clears it and "
        "re-dispatches the run, and the next attempt executes the same call again",
        ("adr112-at-most-once",),
        recognisers.stale_snapshot_requeue_reruns_write,
        deployment_ranges=True,
    ),
    Finding(
        "F-19",
        "reaper-clock-ahead-requeue-past-budget",
        "requeue_budget_respected",
        (),
        ("clock_skew", "provider"),
        ("clock_skew", "provider"),
        "ADR-104",
        "one budget of 3 requeues",
        "the reaper, its clock ahead of true time, selects a run whose requeue_count is under the budget and "
        "decides on that snapshot to requeue it; before its T13 applies (the invocation's earlier rows: on the "
        "Sync transport the attempts it runs inline), the owner's retries (T11) spend the budget and a new "
        "claim stamps a lease still before the reaper's clock; T13 re-checks staleness only and sets "
        "requeue_count + 1 in SQL: the run is requeued a fourth time",
        ("adr104-shared-requeue-budget",),
        recognisers.reaper_clock_ahead_requeue_past_budget,
        deployment_ranges=True,
    ),
    Finding(
        "F-20",
        "reaper-clock-ahead-dead-letter",
        "dead_letter_reason_matches_cause",
        (),
        ("clock_skew",),
        ("clock_skew",),
        "ADR-104",
        "reaper mutations re-check staleness so a live worker wins",
        "the reaper, its clock ahead of true time, selects a live run and reads its snapshot's non-idempotent "
        "fence; before its dead-letter applies (on the Sync transport, while it runs an earlier row's attempt "
        "inline), the worker's write returns and its boundary clears the fence and renews the lease into the "
        "true future, but not past the reaper's clock: T14's staleness re-check passes and the run is "
        "dead-lettered not_retryable for a fence no longer there",
        (),
        recognisers.reaper_clock_ahead_dead_letter,
        deployment_ranges=True,
    ),
    Finding(
        "F-21",
        "stalled-clear-dead-letter",
        "dead_letter_reason_matches_cause",
        (),
        ("store",),
        ("store",),
        "ADR-104",
        "retries follow the failure class",
        "a segment's fence clear (T5 with '') stalls in the store past the lease it computed; the reaper "
        "selects the run with the fence still standing and decides not_retryable; the clear commits after the "
        "snapshot with a lease already past, and when the dead-letter applies (after the invocation's earlier "
        "rows: a stalled statement), its staleness re-check passes: the run is dead-lettered not_retryable for "
        "a fence no longer there",
        (),
        recognisers.stalled_clear_dead_letter,
        deployment_ranges=True,
    ),
    Finding(
        "F-22",
        "reaper-clock-ahead-exhausted-over-new-fence",
        "dead_letter_reason_matches_cause",
        (),
        ("clock_skew", "provider", "store", "slow"),
        ("clock_skew", "provider", "store", "slow"),
        "ADR-104",
        "reaper mutations re-check staleness so a live worker wins",
        "the reaper, its clock ahead of true time, selects a run whose budget is spent and whose snapshot has "
        "no fence, and decides retries_exhausted; before its dead-letter applies (the statement stalls, or on "
        "the Sync transport the invocation runs an earlier row's attempt inline), the live worker stamps a "
        "non-idempotent fence, renewing the lease into the true future but not past the reaper's clock: T14's "
        "re-check passes and the run is dead-lettered retries_exhausted with a non-idempotent write in flight",
        (),
        recognisers.reaper_clock_ahead_exhausted_over_new_fence,
        deployment_ranges=True,
    ),
)


def finding(finding_id: str) -> Finding:
    for entry in FINDINGS:
        if entry.id == finding_id:
            return entry
    raise KeyError(finding_id)


def findings_explaining(claim_id: str) -> tuple[Finding, ...]:
    return tuple(f for f in FINDINGS if claim_id in f.explains)


__all__ = ["FINDINGS", "FINDINGS_DIR", "Finding", "finding", "findings_explaining"]
