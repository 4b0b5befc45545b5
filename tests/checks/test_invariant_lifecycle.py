"""Row-lifecycle invariants: terminal_is_terminal, settles_by_owner, requeue_budget_respected,
every_run_terminates."""

from __future__ import annotations

import pytest
from invariant_histories import LEASE, OK, OTHER, WORKER, History, judge

from checks import Validity
from checks.history import FINAL, IDLE, WORLD
from model.constants import MAX_REQUEUES
from model.statements import (
    CANCEL,
    CLAIM_FOR_RESUME,
    CLAIM_QUEUED,
    DEAD_LETTER_STALE,
    FINISH_RUN,
    NAMES,
    REQUEUE,
    REQUEUE_STALE,
    START_RUN,
    SUSPEND_RUN,
)

# -- terminal_is_terminal ----------------------------------------------------------------


def test_settle_overwriting_a_completed_row_is_a_violation() -> None:
    b = History()
    b.start()
    completed = b.settle("completed", iterations=2, total_tokens=40)
    late = b.settle("failed", iterations=0, total_tokens=0)
    verdict = judge("terminal_is_terminal", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (completed, late)


def test_rewriting_only_the_totals_of_a_terminal_row_is_a_violation() -> None:
    b = History()
    b.start()
    completed = b.settle("completed", total_tokens=40)
    late = b.settle("completed", total_tokens=0)
    assert judge("terminal_is_terminal", b).witness == (completed, late)


def test_single_settle_is_terminal() -> None:
    b = History()
    b.start()
    b.settle("completed", total_tokens=40)
    b.store(NAMES[FINISH_RUN], matched=False)
    assert judge("terminal_is_terminal", b).valid is Validity.VALID


def test_write_that_keeps_status_and_totals_of_a_terminal_row_is_allowed() -> None:
    b = History()
    b.start()
    b.settle("failed", total_tokens=5)
    b.settle("failed", total_tokens=5, error_class="Other")
    assert judge("terminal_is_terminal", b).valid is Validity.VALID


# -- settles_by_owner --------------------------------------------------------------------


def test_settle_of_a_row_running_under_another_segment_is_a_violation() -> None:
    b = History()
    b.enqueue()
    claim = b.claim(identity=OTHER)
    settle = b.settle("completed", identity=WORKER, site="executor.settle_completed")
    verdict = judge("settles_by_owner", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (claim, settle)


def test_owner_may_settle_its_row() -> None:
    b = History()
    b.enqueue()
    b.claim()
    b.settle("completed", site="executor.settle_completed")
    assert judge("settles_by_owner", b).valid is Validity.VALID


def test_a_user_cancel_may_settle_a_row_it_does_not_hold() -> None:
    b = History()
    b.enqueue()
    b.claim(identity=OTHER)
    b.store(NAMES[CANCEL], identity="user", actor="user", status="cancelled", claimed_by="")
    assert judge("settles_by_owner", b).valid is Validity.VALID


def test_a_reaper_dead_letter_may_settle_a_row_whose_lease_was_past_in_true_time() -> None:
    b = History()
    b.enqueue()
    b.store(NAMES[CLAIM_QUEUED], identity=OTHER, status="running", claimed_by=OTHER, lease_expires=900, time_s=0.0)
    b.store(NAMES[DEAD_LETTER_STALE], identity="reaper", actor="reaper", status="failed", claimed_by="", time_s=901.0)
    verdict = judge("settles_by_owner", b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_a_reaper_dead_letter_of_a_lease_still_ahead_of_true_time_is_a_violation() -> None:
    """The dead-letter is judged on the row the store held just before it, not exempted because
    its WHERE re-checks staleness (with the reaper's own clock)."""
    b = History()
    b.enqueue()
    claim = b.store(
        NAMES[CLAIM_QUEUED], identity=OTHER, status="running", claimed_by=OTHER, lease_expires=900, time_s=0.0
    )
    settle = b.store(NAMES[DEAD_LETTER_STALE], identity="reaper", actor="reaper", status="failed", claimed_by="",
                     time_s=850.0)  # fmt: skip
    verdict = judge("settles_by_owner", b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (claim, settle)
    assert "lease to 900" in verdict.explanation


EPOCH_S = 1_700_000_000


@pytest.mark.parametrize(("lease_after_epoch_s", "valid"), [(900, Validity.VALID), (1200, Validity.INVALID)])
def test_a_reaper_dead_letter_is_judged_on_the_lease_put_back_on_the_records_axis(
    lease_after_epoch_s: int, valid: Validity
) -> None:
    """The world's rows hold unix seconds (epoch + clock): the lease is compared with true time only after
    the epoch the history states is taken off, or every lease would look ahead of the true time."""
    b = History()
    b.phase(epoch_s=EPOCH_S)
    b.enqueue()
    b.store(NAMES[CLAIM_QUEUED], identity=OTHER, status="running", claimed_by=OTHER,
            lease_expires=EPOCH_S + lease_after_epoch_s, time_s=0.0)  # fmt: skip
    b.store(NAMES[DEAD_LETTER_STALE], identity="reaper", actor="reaper", status="failed", claimed_by="", time_s=1000.0)
    verdict = judge("settles_by_owner", b)
    assert verdict.valid is valid and verdict.judged == 1
    if valid is Validity.INVALID:
        assert "lease to 1200 (true time 1000.00)" in verdict.explanation


@pytest.mark.parametrize("site", ["reaper.dead_letter", "cancel", "run_queued.position_failed"])
def test_a_site_label_exempts_nothing(site: str) -> None:
    """Who settled is the world's record of the process, not the label the runtime gave the statement."""
    b = History()
    b.enqueue()
    claim = b.claim(identity=OTHER)
    settle = b.settle("failed", identity=WORKER, site=site, actor="worker")
    assert judge("settles_by_owner", b).witness == (claim, settle)


def test_a_reaper_settle_other_than_its_dead_letter_needs_the_owner() -> None:
    """The reaper's T7 after a failed dispatch has no staleness predicate (spec C6)."""
    b = History()
    b.enqueue()
    claim = b.claim(identity=OTHER)
    settle = b.settle("failed", identity="reaper:h1:1", site="reaper.dispatch_failed", actor="reaper")
    assert judge("settles_by_owner", b).witness == (claim, settle)


def test_cancel_by_a_non_owner_that_is_not_a_user_is_a_violation() -> None:
    b = History()
    b.start(identity=OTHER)
    b.store(NAMES[SUSPEND_RUN], identity=OTHER, status="waiting_for_approval", claimed_by="")
    claim = b.store(NAMES[CLAIM_FOR_RESUME], identity="resume:h:1", status="running", claimed_by="resume:h:1")
    cancel = b.store(NAMES[CANCEL], identity="cli", site="cancel", actor="client", status="cancelled", claimed_by="")
    assert judge("settles_by_owner", b).witness == (claim, cancel)


def test_settle_of_a_row_that_is_not_running_needs_no_owner() -> None:
    b = History()
    b.enqueue()
    b.settle("failed", identity=WORKER, site="executor.settle_failed")
    assert judge("settles_by_owner", b).valid is Validity.VALID


def test_settle_of_an_unleased_running_row_needs_no_owner() -> None:
    b = History()
    b.store(NAMES[START_RUN], identity="", status="running", claimed_by="", lease_expires=0)
    b.settle("completed", identity=WORKER)
    assert judge("settles_by_owner", b).valid is Validity.VALID


def test_settle_with_no_earlier_row_is_unknown() -> None:
    b = History()
    settle = b.settle("completed")
    verdict = judge("settles_by_owner", b)
    assert verdict.valid is Validity.UNKNOWN
    assert verdict.witness == (settle,)


# -- requeue_budget_respected ------------------------------------------------------------


def test_requeue_past_the_budget_is_a_violation() -> None:
    b = History()
    b.enqueue()
    b.claim()
    requeue = b.store(NAMES[REQUEUE_STALE], identity="reaper", status="queued", requeue_count=MAX_REQUEUES + 1)
    verdict = judge("requeue_budget_respected", b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (requeue,)


def test_in_process_requeue_past_the_budget_is_a_violation() -> None:
    b = History()
    b.enqueue()
    b.claim()
    requeue = b.store(NAMES[REQUEUE], status="queued", requeue_count=MAX_REQUEUES + 1)
    assert judge("requeue_budget_respected", b).witness == (requeue,)


def test_requeue_up_to_the_budget_is_valid() -> None:
    b = History()
    b.enqueue()
    for count in range(1, MAX_REQUEUES + 1):
        b.claim()
        b.store(NAMES[REQUEUE], status="queued", requeue_count=count)
    assert judge("requeue_budget_respected", b).valid is Validity.VALID


# -- every_run_terminates ----------------------------------------------------------------


def test_run_ending_running_is_stranded() -> None:
    """Its lease expired before the reaper's last tick began and nothing else moves it."""
    b = History()
    b.start()
    b.add(IDLE, OK, process="reaper", time_s=LEASE + 1, identity="reaper:h:1", invoked_s=LEASE + 1)
    b.final(run="r0", status="completed")
    final = b.add(FINAL, OK, process=WORLD, time_s=LEASE + 2, row=b.rows["r1"])
    verdict = judge("every_run_terminates", b)
    assert verdict.kind.value == "eventually"
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (final,)


def test_run_ending_queued_is_stranded() -> None:
    b = History()
    b.enqueue()
    final = b.final()
    assert judge("every_run_terminates", b).witness == (final,)


def test_runs_ending_terminal_or_waiting_terminate() -> None:
    b = History()
    b.final(run="r1", status="completed")
    b.final(run="r2", status="waiting_for_approval")
    assert judge("every_run_terminates", b).valid is Validity.VALID


def test_history_without_final_rows_is_unknown() -> None:
    b = History()
    b.start()
    assert judge("every_run_terminates", b).valid is Validity.UNKNOWN
