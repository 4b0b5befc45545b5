"""The spec rules a sweep of automatic mutants showed unjudged (checks/spec_rules.py), on hand-built
histories with near misses."""

from __future__ import annotations

from typing import Any

import pytest
from invariant_histories import FAIL, INFO, INVOKE, OK, WORKER, History, judge

from checks import Validity
from checks.history import EVENT, FAULT, NEMESIS, PLAN, PROVIDER, READ, SEGMENT, TOOL, WORLD
from checks.spec_rules import SPEC_CLASSES, SPEC_RETRYABLE
from model.statements import NAMES, REQUEUE

DEAD_LETTERED = "recovery_per_spec"
NON_RETRYABLE = sorted(SPEC_CLASSES - SPEC_RETRYABLE)


def _worker_failed(b: History, true_class: str, *, entry: str = "run_queued") -> int:
    b.enqueue()
    b.segment(entry)
    b.claim()
    b.event(seq=0, kind="request")
    b.provider()
    return b.provider_fail(true_class)


def _requeue(b: History) -> int:
    return b.store(NAMES[REQUEUE], site="recovery.requeue", status="queued", claimed_by="", lease_expires=0,
                   requeue_count=1)  # fmt: skip


@pytest.mark.parametrize("true_class", NON_RETRYABLE)
def test_a_non_retryable_failure_requeued_is_a_violation(true_class: str) -> None:
    b = History()
    failure = _worker_failed(b, true_class)
    requeue = _requeue(b)
    b.segment_done(outcome="requeued")
    verdict = judge(DEAD_LETTERED, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (failure, requeue)
    assert "requeued" in verdict.explanation and true_class in verdict.explanation


def test_a_recovery_per_spec_retries_exhausted_is_a_violation() -> None:
    b = History()
    _worker_failed(b, "auth")
    b.settle("failed", site="recovery.dead_letter", termination_reason="retries_exhausted", error_class="E")
    verdict = judge(DEAD_LETTERED, b)
    assert verdict.valid is Validity.INVALID
    assert "retries_exhausted" in verdict.explanation


@pytest.mark.parametrize("true_class", NON_RETRYABLE)
def test_a_recovery_per_spec_not_retryable_holds(true_class: str) -> None:
    b = History()
    _worker_failed(b, true_class)
    b.settle("failed", site="recovery.dead_letter", termination_reason="not_retryable", error_class="E")
    b.segment_done(outcome="failed")
    verdict = judge(DEAD_LETTERED, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("1 ")


@pytest.mark.parametrize("true_class", sorted(SPEC_RETRYABLE))
def test_near_miss_a_retryable_failure_may_be_requeued_after_its_re_read(true_class: str) -> None:
    b = History()
    _worker_failed(b, true_class)
    b.find()
    _requeue(b)
    verdict = judge(DEAD_LETTERED, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("1 ")


@pytest.mark.parametrize("reread", ["none", "failed"])
def test_a_retryable_failure_requeued_without_an_answered_re_read_is_a_violation(reread: str) -> None:
    """Spec 5.2 step 3: an unreadable row counts -1, which dead-letters retries_exhausted."""
    b = History()
    failure = _worker_failed(b, "serverError")
    if reread == "failed":
        b.add(READ, FAIL, what="FindRun", site="", error="StoreError")
    requeue = _requeue(b)
    verdict = judge(DEAD_LETTERED, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (failure, requeue)
    assert "re-read" in verdict.explanation


def test_near_miss_an_interactive_segment_is_not_judged() -> None:
    """Spec 3.5: outside the worker path the generic arm settles provider_failed; no recovery."""
    b = History()
    _worker_failed(b, "auth", entry="run_interactive")
    b.settle("failed", termination_reason="provider_failed", error_class="E")
    assert judge(DEAD_LETTERED, b).explanation.startswith("0 ")


def test_near_miss_a_requeue_under_another_identity_is_not_the_segments() -> None:
    """The reaper's (or another worker's) statement does not resolve this segment's failure."""
    b = History()
    _worker_failed(b, "clientError")
    b.store(NAMES[REQUEUE], identity="worker:h:9", status="queued", claimed_by="", requeue_count=1,
            process=WORKER)  # fmt: skip
    assert judge(DEAD_LETTERED, b).valid is Validity.VALID


def test_near_miss_a_later_retryable_failure_resets_the_case() -> None:
    """Only the segment's last failure before its resolving statement counts."""
    b = History()
    _worker_failed(b, "auth")
    b.provider()
    b.provider_fail("connection")
    b.find()
    _requeue(b)
    assert judge(DEAD_LETTERED, b).valid is Validity.VALID


def test_a_failure_with_no_true_class_is_not_judged() -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    b.claim()
    b.provider()
    b.provider_fail(None, "auth")
    _requeue(b)
    assert judge(DEAD_LETTERED, b).explanation.startswith("0 ")


# ---- rounds_per_spec ------------------------------------------------------------------------------

RESUMER = "resume:h:3"


ROUNDS = "rounds_per_spec"


def _plan(b: History, calls: list[int] | None, *, cap: int | None = None, stops: dict[int, str] | None = None,
          tools: int = 1) -> int:  # fmt: skip
    rounds = sorted(stops or {})
    return b.add(PLAN, OK, process=WORLD, kind="queued", stops=rounds,
                 stop_kinds=[(stops or {})[r] for r in rounds], cap=cap, calls=calls, tools=tools)  # fmt: skip


def _call(b: History, round_no: int, *, synthesis: bool = False, answered: bool = True, process: str = WORKER) -> int:
    at = b.add(PROVIDER, INVOKE, process=process, round=round_no, synthesis=synthesis)
    if answered:
        b.add(PROVIDER, OK, process=process, tokens=10)
    return at


def _loop(b: History, calls: list[int], rounds: list[int], **plan: Any) -> None:
    _plan(b, calls, **plan)
    b.enqueue()
    b.segment("run_queued")
    b.claim()
    for round_no in rounds:
        _call(b, round_no)


def _complete(b: History, reason: str, iterations: int) -> int:
    return b.settle("completed", termination_reason=reason, iterations=iterations)


def test_a_loop_that_completes_where_its_plan_does_holds() -> None:
    b = History()
    _loop(b, [1, 1, 0], [1, 2, 3])
    _complete(b, "completed", 3)
    b.segment_done(outcome="completed")
    verdict = judge(ROUNDS, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("4 ")


def test_a_call_past_a_turn_that_asked_for_no_tool_is_a_violation() -> None:
    b = History()
    _loop(b, [1, 0], [1, 2])
    late = _call(b, 3)
    verdict = judge(ROUNDS, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (late,)
    assert "round 2's turn asks for no tool" in verdict.explanation


@pytest.mark.parametrize(("cap", "last"), [(None, 5), (2, 2), (25, 20)])
def test_a_round_past_the_spec_cap_is_a_violation(cap: int | None, last: int) -> None:
    b = History()
    _loop(b, [1] * 30, list(range(1, last + 1)), cap=cap)
    extra = _call(b, last + 1)
    verdict = judge(ROUNDS, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (extra,)
    assert f"1..{last}" in verdict.explanation


@pytest.mark.parametrize(("cap", "last"), [(None, 5), (2, 2), (25, 20)])
def test_near_miss_a_synthesis_after_the_last_round_holds(cap: int | None, last: int) -> None:
    b = History()
    _loop(b, [1] * 30, list(range(1, last + 1)), cap=cap)
    _call(b, last + 1, synthesis=True)
    _complete(b, "max_iterations", last)
    assert judge(ROUNDS, b).valid is Validity.VALID


def test_a_synthesis_at_the_wrong_round_is_a_violation() -> None:
    b = History()
    _loop(b, [1] * 6, [1, 2, 3, 4])
    wrong = _call(b, 5, synthesis=True)
    verdict = judge(ROUNDS, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (wrong,)


def test_a_synthesis_after_a_turn_without_tools_is_a_violation() -> None:
    b = History()
    _loop(b, [1, 0], [1, 2], cap=2)
    wrong = _call(b, 3, synthesis=True)
    assert judge(ROUNDS, b).witness == (wrong,)


def test_a_call_in_a_round_the_pipeline_stops_is_a_violation() -> None:
    b = History()
    _loop(b, [1, 1, 0], [1], stops={2: "guardrail_denied"})
    stopped = _call(b, 2)
    verdict = judge(ROUNDS, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (stopped,)
    assert "guardrail_denied" in verdict.explanation


@pytest.mark.parametrize(("reason", "iterations"), [("max_iterations", 3), ("completed", 2), ("completed", 3)])
def test_a_completion_with_the_wrong_reason_or_rounds_is_a_violation(reason: str, iterations: int) -> None:
    b = History()
    _loop(b, [1, 0], [1, 2])
    settle = _complete(b, reason, iterations)
    verdict = judge(ROUNDS, b)
    expected = Validity.VALID if (reason, iterations) == ("completed", 2) else Validity.INVALID
    assert verdict.valid is expected
    if expected is Validity.INVALID:
        assert settle in verdict.witness


def test_after_a_synthesis_the_reason_is_max_iterations() -> None:
    b = History()
    _loop(b, [1, 1], [1, 2], cap=2)
    _call(b, 3, synthesis=True)
    settle = _complete(b, "completed", 2)
    verdict = judge(ROUNDS, b)
    assert verdict.valid is Validity.INVALID
    assert settle in verdict.witness and "'max_iterations'" in verdict.explanation


@pytest.mark.parametrize("stop", ["budget_exhausted", "context_truncated"])
def test_a_truncating_stop_sets_its_reason_and_round(stop: str) -> None:
    b = History()
    _loop(b, [1, 1, 0], [1], stops={2: stop})
    _complete(b, stop, 2)
    assert judge(ROUNDS, b).valid is Validity.VALID
    b = History()
    _loop(b, [1, 1, 0], [1], stops={2: stop})
    _complete(b, "completed", 1)
    assert judge(ROUNDS, b).valid is Validity.INVALID


def test_with_no_tool_offered_the_loop_makes_one_plain_completion() -> None:
    """Spec C2: with no tool offered the loop makes one plain completion, whatever the turn asks."""
    b = History()
    _loop(b, [1, 1], [1], tools=0)
    _complete(b, "completed", 1)
    assert judge(ROUNDS, b).valid is Validity.VALID
    b = History()
    _loop(b, [1, 1], [1, 2], tools=0)
    verdict = judge(ROUNDS, b)
    assert verdict.valid is Validity.INVALID and "no further call" in verdict.explanation


def test_near_miss_after_a_deploy_fault_only_the_bounds_are_judged() -> None:
    b = History()
    _plan(b, [1, 0])
    b.record(FAULT, INFO, {"family": "deploy", "kind": "remove", "target": "world", "detail": {}}, run="",
             process=NEMESIS)  # fmt: skip
    b.enqueue()
    b.segment("run_queued")
    b.claim()
    _call(b, 1)
    _call(b, 2)
    _call(b, 6)
    assert judge(ROUNDS, b).valid is Validity.VALID
    beyond = _call(b, 7)
    verdict = judge(ROUNDS, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (beyond,)


def test_a_history_without_plans_is_not_judged() -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    b.claim()
    _call(b, 9)
    assert judge(ROUNDS, b).explanation.startswith("0 ")


def test_a_completion_after_a_failed_call_is_judged_against_the_loop() -> None:
    b = History()
    _loop(b, [1, 0], [1])
    _call(b, 2, answered=False)
    b.provider_fail("connection")
    settle = _complete(b, "max_iterations", 9)
    verdict = judge(ROUNDS, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (settle,)


def test_a_fresh_segment_that_skips_round_one_is_a_violation() -> None:
    b = History()
    _loop(b, [1, 1, 0], [])
    skipped = _call(b, 2)
    verdict = judge(ROUNDS, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (skipped,)
    assert "a call for round 1" in verdict.explanation


def test_a_completion_before_the_loop_is_done_is_a_violation() -> None:
    b = History()
    _loop(b, [1, 1, 0], [1, 2])
    settle = _complete(b, "completed", 2)
    verdict = judge(ROUNDS, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (settle,)
    assert "after 2 of its 3 calls" in verdict.explanation


def test_a_completion_where_the_pipeline_denies_is_a_violation() -> None:
    b = History()
    _loop(b, [1, 1, 0], [1], stops={2: "guardrail_denied"})
    settle = _complete(b, "completed", 1)
    verdict = judge(ROUNDS, b)
    assert verdict.valid is Validity.INVALID and "ends otherwise" in verdict.explanation
    assert verdict.witness == (settle,)


def test_a_resume_continues_from_its_first_call() -> None:
    b = History()
    _plan(b, [1, 1, 1, 0])
    b.enqueue()
    b.segment("approve", process=RESUMER)
    b.store("T10 claimForResume", identity=RESUMER, process=RESUMER, status="running", claimed_by=RESUMER)
    for round_no in (3, 4):
        _call(b, round_no, process=RESUMER)
    b.settle("completed", identity=RESUMER, process=RESUMER, termination_reason="completed", iterations=4)
    assert judge(ROUNDS, b).valid is Validity.VALID
    late = _call(b, 6, process=RESUMER)
    assert judge(ROUNDS, b).witness == (late,)


def test_near_miss_a_lease_lost_segment_stops_anywhere_in_the_loop() -> None:
    b = History()
    _loop(b, [1, 1, 1, 0], [1, 2])
    b.segment_done(outcome="lease_lost")
    assert judge(ROUNDS, b).valid is Validity.VALID


# ---- claim_follows_precheck -----------------------------------------------------------------------

CLAIM = "claim_follows_precheck"


def _read(b: History, result: str | None, *, process: str = WORKER, what: str = "FindRun", ok: bool = True) -> int:
    if not ok:
        return b.add(READ, FAIL, process=process, what=what, site="", error="StoreError")
    return b.add(READ, OK, process=process, what=what, site="", result=result, fence="")


def test_a_claim_after_a_pre_check_that_found_the_row_queued_holds() -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    _read(b, "queued")
    b.claim()
    b.settle("completed")
    b.segment_done(outcome="completed")
    verdict = judge(CLAIM, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("1 ")


@pytest.mark.parametrize("entry", ["run_queued", "submit_input", "approve"])
def test_a_segment_that_returns_right_after_its_claim_is_a_violation(entry: str) -> None:
    b = History()
    b.enqueue()
    status = {"run_queued": "queued", "submit_input": "waiting_for_input", "approve": "waiting_for_approval"}[entry]
    if entry != "run_queued":
        b.store("T9 suspendRun", status=status, claimed_by="", lease_expires=0, has_state=True)
    b.segment(entry)
    _read(b, status)
    claim = b.store("T3 claimQueued" if entry == "run_queued" else "T10 claimForResume", status="running",
                    claimed_by=WORKER, lease_expires=5)  # fmt: skip
    b.add(READ, OK, what="MaxSequence", site="resume.position", result=2)
    done = b.segment_done(outcome="awaiting_input")
    verdict = judge(CLAIM, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (claim, done)
    assert "without another statement or step" in verdict.explanation


@pytest.mark.parametrize("after", ["event", "settle", "renewal_refused"])
def test_near_miss_a_claim_followed_by_a_step_or_a_statement_holds(after: str) -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    _read(b, "queued")
    b.claim()
    if after == "event":
        b.add(EVENT, INVOKE, seq=0, kind="dropped", round=0, tool="", call="", execution=0, effect="",
              true_effect="", identity=WORKER)  # fmt: skip
    elif after == "settle":
        b.settle("failed", error_class="RunPositionException")
    else:
        b.store("T4 renewLease", matched=False)
    b.segment_done(outcome="lease_lost")
    assert judge(CLAIM, b).valid is Validity.VALID


@pytest.mark.parametrize("end", [FAIL, INFO])
def test_near_miss_a_claim_then_a_crash_or_a_throw_is_not_judged_by_what_follows(end: object) -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    _read(b, "queued")
    b.claim()
    b.segment_done(end)  # type: ignore[arg-type]
    assert judge(CLAIM, b).valid is Validity.VALID


def test_near_miss_a_claim_that_did_not_match_is_followed_by_nothing() -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    _read(b, "queued")
    b.store("T3 claimQueued", matched=False)
    b.segment_done(outcome="none")
    assert judge(CLAIM, b).valid is Validity.VALID


@pytest.mark.parametrize("found", ["running", "completed", None])
def test_a_claim_after_a_pre_check_that_found_another_status_is_a_violation(found: str | None) -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    read = _read(b, found)
    claim = b.claim()
    verdict = judge(CLAIM, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (read, claim)


def test_a_claim_of_a_row_without_its_request_is_a_violation() -> None:
    b = History()
    b.store("T2 enqueueRun", identity="", status="queued", has_request=False)
    b.segment("run_queued")
    _read(b, "queued")
    b.claim()
    verdict = judge(CLAIM, b)
    assert verdict.valid is Validity.INVALID
    assert "stored request" in verdict.explanation


def test_a_claim_without_a_read_is_a_violation() -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    claim = b.claim()
    verdict = judge(CLAIM, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (claim,)
    assert "without reading" in verdict.explanation


def test_a_worker_that_found_the_row_claimable_and_returned_is_a_violation() -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    read = _read(b, "queued")
    done = b.segment_done(outcome="None")
    verdict = judge(CLAIM, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (read, done)


def test_near_miss_a_worker_whose_pre_check_failed_or_found_it_taken_returns() -> None:
    for found, ok in (("queued", False), ("running", True), ("cancelled", True)):
        b = History()
        b.enqueue()
        b.segment("run_queued")
        _read(b, found, ok=ok)
        b.segment_done(outcome="None")
        assert judge(CLAIM, b).valid is Validity.VALID, found


def test_near_miss_a_worker_that_crashed_after_its_pre_check_is_not_judged() -> None:
    b = History()
    b.enqueue()
    b.segment("run_queued")
    _read(b, "queued")
    b.segment_done(INFO)
    assert judge(CLAIM, b).explanation.startswith("0 ")


def _waiting(b: History, status: str = "waiting_for_approval") -> None:
    b.enqueue()
    b.store("T9 suspendRun", status=status, claimed_by="", lease_expires=0, has_state=True)


def _resume_claim(b: History) -> int:
    return b.store("T10 claimForResume", identity=RESUMER, process=RESUMER, status="running", claimed_by=RESUMER)


@pytest.mark.parametrize(
    ("entry", "status"), [("approve", "waiting_for_approval"), ("submit_input", "waiting_for_input")]
)
def test_a_resume_claims_the_row_it_found_waiting_for_its_decision(entry: str, status: str) -> None:
    b = History()
    _waiting(b, status)
    b.segment(entry, process=RESUMER)
    _read(b, status, process=RESUMER)
    _read(b, "3", process=RESUMER, what="MaxSequence")
    _resume_claim(b)
    assert judge(CLAIM, b).valid is Validity.VALID
    b = History()
    _waiting(b, status)
    b.segment(entry, process=RESUMER)
    _read(b, "running", process=RESUMER)
    claim = _resume_claim(b)
    verdict = judge(CLAIM, b)
    assert verdict.valid is Validity.INVALID and claim in verdict.witness


def test_an_approval_that_claims_a_row_waiting_for_input_is_a_violation() -> None:
    b = History()
    _waiting(b, "waiting_for_input")
    b.segment("approve", process=RESUMER)
    _read(b, "waiting_for_input", process=RESUMER)
    _read(b, "3", process=RESUMER, what="MaxSequence")
    _resume_claim(b)
    assert judge(CLAIM, b).valid is Validity.INVALID


def test_a_resume_that_read_its_row_and_probe_and_did_not_claim_is_a_violation() -> None:
    b = History()
    _waiting(b)
    b.segment("approve", process=RESUMER)
    _read(b, "waiting_for_approval", process=RESUMER)
    _read(b, "3", process=RESUMER, what="MaxSequence")
    done = b.segment_done(outcome="None", process=RESUMER)
    verdict = judge(CLAIM, b)
    assert verdict.valid is Validity.INVALID and done in verdict.witness


def test_near_miss_a_resume_whose_probe_failed_refuses_before_the_claim() -> None:
    """Spec 1.2: MAX+1 probed before the claim, refuse if unreadable."""
    b = History()
    _waiting(b)
    b.segment("approve", process=RESUMER)
    _read(b, "waiting_for_approval", process=RESUMER)
    _read(b, None, process=RESUMER, what="MaxSequence", ok=False)
    b.segment_done(outcome="None", process=RESUMER)
    assert judge(CLAIM, b).valid is Validity.VALID


def test_near_miss_a_resume_of_a_row_without_a_state_refuses() -> None:
    b = History()
    b.enqueue()
    b.store("T9 suspendRun", status="waiting_for_approval", has_state=False)
    b.segment("approve", process=RESUMER)
    _read(b, "waiting_for_approval", process=RESUMER)
    b.segment_done(outcome="None", process=RESUMER)
    assert judge(CLAIM, b).valid is Validity.VALID


# ---- inserted_row_per_spec ------------------------------------------------------------------------

INSERTED = "inserted_row_per_spec"
CLIENT = "interactive:h:4"


def _start(b: History, **changes: Any) -> int:
    row: dict[str, Any] = {"status": "running", "claimed_by": CLIENT, "lease_expires": 1900, "has_request": False,
                           "started_at": 1000, **changes}  # fmt: skip
    return b.store("T1 startRun", identity=CLIENT, clock_s=1000, **row)


def test_an_interactive_insert_as_the_spec_gives_holds() -> None:
    b = History()
    _start(b)
    b.enqueue(run="r2")
    verdict = judge(INSERTED, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("2 ")


def test_near_miss_an_unleased_begin_inserts_no_owner() -> None:
    """Spec T1: begin() called with no identity gives ''/0 (KB-10's form)."""
    b = History()
    _start(b, claimed_by="", lease_expires=0)
    assert judge(INSERTED, b).valid is Validity.VALID


@pytest.mark.parametrize(
    "changes",
    [
        {"claimed_by": "interactive:h:5"},
        {"started_at": 999},
        {"requeue_count": 1},
        {"pending_effect": "read_only"},
        {"has_request": True},
        {"iterations": 1},
        {"termination_reason": "completed"},
        {"status": "queued"},
    ],
)
def test_an_interactive_insert_off_the_spec_is_a_violation(changes: dict[str, Any]) -> None:
    b = History()
    insert = _start(b, **changes)
    verdict = judge(INSERTED, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (insert,)
    assert next(iter(changes)) in verdict.explanation


@pytest.mark.parametrize(
    "changes",
    [
        {"claimed_by": WORKER},
        {"lease_expires": 5},
        {"has_request": False},
        {"started_at": 1000},
        {"requeue_count": 3},
        {"total_tokens": 7},
        {"status": "running"},
    ],
)
def test_an_enqueued_insert_off_the_spec_is_a_violation(changes: dict[str, Any]) -> None:
    b = History()
    insert = b.store("T2 enqueueRun", identity="", **{**{"status": "queued", "started_at": 0}, **changes})
    verdict = judge(INSERTED, b)
    assert verdict.valid is Validity.INVALID
    assert verdict.witness == (insert,)


def test_near_miss_a_later_statement_may_change_what_the_insert_set() -> None:
    b = History()
    b.enqueue()
    b.claim()
    assert judge(INSERTED, b).explanation.startswith("1 ")


def test_a_resume_that_found_its_row_waiting_and_returned_before_its_probe_is_a_violation() -> None:
    b = History()
    _waiting(b)
    b.segment("approve", process=RESUMER)
    read = _read(b, "waiting_for_approval", process=RESUMER)
    done = b.segment_done(outcome="None", process=RESUMER)
    verdict = judge(CLAIM, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (read, done)


# ---- settled_totals_per_spec ----------------------------------------------------------------------

TOTALS = "settled_totals_per_spec"


def _answered_segment(b: History, tokens: list[int]) -> None:
    b.enqueue()
    b.segment("run_queued")
    b.claim()
    for round_no, count in enumerate(tokens, 1):
        b.add(PROVIDER, INVOKE, round=round_no, synthesis=False)
        b.add(PROVIDER, OK, tokens=count)


def test_a_completion_writes_the_tokens_its_segment_was_answered() -> None:
    b = History()
    _answered_segment(b, [10, 15])
    b.settle("completed", termination_reason="completed", iterations=2, total_tokens=25)
    verdict = judge(TOTALS, b)
    assert verdict.valid is Validity.VALID
    assert verdict.explanation.startswith("1 ")


@pytest.mark.parametrize("written", [24, 26, 0, -1])
def test_a_completion_with_other_tokens_is_a_violation(written: int) -> None:
    b = History()
    _answered_segment(b, [10, 15])
    settle = b.settle("completed", termination_reason="completed", iterations=2, total_tokens=written)
    verdict = judge(TOTALS, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (settle,)


def test_near_miss_tokens_of_an_earlier_segment_do_not_count() -> None:
    """A segment's loop result counts its own calls (a resume starts a fresh trace)."""
    b = History()
    _answered_segment(b, [10])
    b.segment_done(outcome="lease_lost")
    b.segment("run_queued")
    b.add(PROVIDER, INVOKE, round=1, synthesis=False)
    b.add(PROVIDER, OK, tokens=7)
    b.settle("completed", termination_reason="completed", iterations=1, total_tokens=7)
    assert judge(TOTALS, b).valid is Validity.VALID


@pytest.mark.parametrize(("iterations", "tokens", "valid"), [(0, 0, True), (2, 0, False), (0, 25, False)])
def test_a_failed_settle_writes_zero_totals(iterations: int, tokens: int, valid: bool) -> None:
    b = History()
    _answered_segment(b, [10, 15])
    b.settle("failed", termination_reason="provider_failed", error_class="E", iterations=iterations,
             total_tokens=tokens)  # fmt: skip
    assert (judge(TOTALS, b).valid is Validity.VALID) is valid


def test_near_miss_an_identity_taken_mid_call_may_be_either() -> None:
    """An identity fault makes the process take another's: the row may name the one its call began with."""
    b = History()
    b.add(SEGMENT, INVOKE, process=CLIENT, entry="run_interactive", identity="interactive:h:9")
    row = {"status": "running", "claimed_by": "interactive:h:9", "lease_expires": 1900, "has_request": False,
           "started_at": 1000}  # fmt: skip
    b.store("T1 startRun", identity=CLIENT, clock_s=1000, **row)
    assert judge(INSERTED, b).valid is Validity.VALID


# ---- payload_failure_has_cause --------------------------------------------------------------------

PAYLOAD = "payload_failure_has_cause"


@pytest.mark.parametrize("error", ["RunRehydrationException", "SuspendedStateException"])
def test_a_payload_failure_the_world_never_stored_is_a_violation(error: str) -> None:
    b = History()
    b.enqueue()
    b.claim()
    settle = b.settle("failed", termination_reason="provider_failed", error_class=error)
    verdict = judge(PAYLOAD, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (settle,)


def test_near_miss_a_plan_that_stored_an_unreadable_payload_explains_it() -> None:
    b = History()
    b.add(PLAN, OK, process=WORLD, kind="queued", stops=[], stop_kinds=[], payload="undecodable")
    b.enqueue()
    b.claim()
    b.settle("failed", termination_reason="provider_failed", error_class="RunRehydrationException")
    assert judge(PAYLOAD, b).valid is Validity.VALID


@pytest.mark.parametrize("error", ["RunPositionException", "DBALException", ""])
def test_near_miss_other_failures_are_not_this_invariants(error: str) -> None:
    b = History()
    b.enqueue()
    b.claim()
    b.settle("failed", termination_reason="provider_failed", error_class=error)
    verdict = judge(PAYLOAD, b)
    assert verdict.valid is Validity.VALID and verdict.explanation.startswith("1 ")


# ---- stale_selection_per_spec ---------------------------------------------------------------------

STALE = "stale_selection_per_spec"


def _running(b: History, run: str, uid: int, lease: int) -> None:
    b.store("T3 claimQueued", run=run, status="running", claimed_by=WORKER, lease_expires=lease, uid=uid)


def _select(b: History, *runs: str) -> int:
    return b.add(READ, OK, run="", process="reaper", what="SelectStale", site="", result=list(runs),
                 fences=["" for _ in runs])  # fmt: skip


def test_a_selection_oldest_lease_first_holds() -> None:
    b = History()
    _running(b, "r1", 1, 500)
    _running(b, "r2", 2, 300)
    _running(b, "r3", 3, 300)
    _select(b, "r2", "r3", "r1")
    verdict = judge(STALE, b)
    assert verdict.valid is Validity.VALID and verdict.explanation.startswith("1 ")


@pytest.mark.parametrize("order", [("r1", "r2"), ("r3", "r2")])
def test_a_selection_out_of_lease_order_is_a_violation(order: tuple[str, str]) -> None:
    """Spec T12: ORDER BY lease_expires ASC (uid breaks a tie, as the store does)."""
    b = History()
    _running(b, "r1", 1, 500)
    _running(b, "r2", 2, 300)
    _running(b, "r3", 3, 300)
    read = _select(b, *order)
    verdict = judge(STALE, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (read,)


@pytest.mark.parametrize(("status", "lease"), [("queued", 0), ("running", 0), ("completed", 0)])
def test_a_selected_row_that_is_not_running_under_a_lease_is_a_violation(status: str, lease: int) -> None:
    b = History()
    b.store("T3 claimQueued", run="r1", status=status, lease_expires=lease, uid=1)
    _select(b, "r1")
    assert judge(STALE, b).valid is Validity.INVALID


def test_near_miss_the_row_as_the_store_held_it_at_the_read_counts() -> None:
    b = History()
    _running(b, "r1", 1, 500)
    _select(b, "r1")
    b.settle("completed", run="r1", termination_reason="completed")
    assert judge(STALE, b).valid is Validity.VALID


# ---- input_resume_runs_its_calls ------------------------------------------------------------------

INPUT = "input_resume_runs_its_calls"


def _input_resume(b: History) -> None:
    b.enqueue()
    b.store("T9 suspendRun", status="waiting_for_input", claimed_by="", lease_expires=0, has_state=True)
    b.segment("submit_input", process=RESUMER)
    b.store("T10 claimForResume", identity=RESUMER, process=RESUMER, status="running", claimed_by=RESUMER)


def _pending(b: History, call: str, *, ran: bool, true_effect: str = "read_only", tool: str = "ask_user") -> int:
    if ran:
        b.add(TOOL, INVOKE, process=RESUMER, call=call, tool=tool, effect=true_effect, true_effect=true_effect,
              identity=RESUMER, key="", remote=False)  # fmt: skip
        b.add(TOOL, OK, process=RESUMER, execution=1, landed=False, replayed=False)
    return b.add(EVENT, INVOKE, process=RESUMER, seq=3, kind="tool", round=2, tool=tool, call=call,
                 execution=1 if ran else 0, effect=true_effect, true_effect=true_effect, identity=RESUMER)  # fmt: skip


def test_an_input_resume_that_runs_its_pending_calls_holds() -> None:
    b = History()
    _input_resume(b)
    _pending(b, "2.0", ran=True)
    _pending(b, "2.1", ran=True, tool="search_pages")
    _call(b, 3, process=RESUMER)
    verdict = judge(INPUT, b)
    assert verdict.valid is Validity.VALID and verdict.explanation.startswith("2 ")


def test_an_input_resume_that_refuses_a_pending_call_is_a_violation() -> None:
    b = History()
    _input_resume(b)
    _pending(b, "2.0", ran=True)
    refused = _pending(b, "2.1", ran=False)
    verdict = judge(INPUT, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (refused,)


def test_near_miss_a_call_to_a_tool_the_process_no_longer_has_is_refused() -> None:
    b = History()
    _input_resume(b)
    _pending(b, "2.0", ran=False, true_effect="unknown", tool="gone_tool")
    assert judge(INPUT, b).explanation.startswith("0 ")


def test_near_miss_a_call_to_a_tool_the_run_does_not_offer_is_refused() -> None:
    b = History()
    b.add(PLAN, OK, process=WORLD, kind="queued", stops=[], stop_kinds=[], offered=["ask_user"])
    _input_resume(b)
    _pending(b, "2.0", ran=False, tool="search_pages")
    assert judge(INPUT, b).explanation.startswith("0 ")


def test_near_miss_tool_steps_after_the_first_provider_call_are_the_loops() -> None:
    b = History()
    _input_resume(b)
    _call(b, 3, process=RESUMER)
    _pending(b, "3.0", ran=False)
    assert judge(INPUT, b).explanation.startswith("0 ")


def test_near_miss_an_approval_resume_is_not_judged() -> None:
    """On the approval path a denial refuses the calls; the decision is the approver's."""
    b = History()
    b.enqueue()
    b.segment("approve", process=RESUMER)
    _pending(b, "2.0", ran=False)
    assert judge(INPUT, b).explanation.startswith("0 ")


# ---- approval_runs_as_decided ---------------------------------------------------------------------

DECIDED = "approval_runs_as_decided"


def _approve(b: History, **truth: bool) -> int:
    """A run waiting for approval, and an approve segment whose invoke carries the approver's decision."""
    b.enqueue()
    b.store("T9 suspendRun", status="waiting_for_approval", claimed_by="", lease_expires=0, has_state=True)
    segment = b.add(SEGMENT, INVOKE, process=RESUMER, entry="approve", identity=RESUMER, **truth)
    b.store("T10 claimForResume", identity=RESUMER, process=RESUMER, status="running", claimed_by=RESUMER)
    return segment


def _decision_step(b: History) -> int:
    return b.add(EVENT, INVOKE, process=RESUMER, seq=3, kind="approval", round=1, tool="", call="", execution=0,
                 effect="", true_effect="", identity=RESUMER)  # fmt: skip


def _release(b: History) -> int:
    return b.store("T9 suspendRun", identity=RESUMER, process=RESUMER, site="resume.release",
                   status="waiting_for_approval", claimed_by="", lease_expires=0)  # fmt: skip


def test_an_approval_that_runs_its_approved_calls_holds() -> None:
    b = History()
    _approve(b)
    _decision_step(b)
    _pending(b, "1.0", ran=True, tool="write_file", true_effect="idempotent_write")
    _call(b, 2, process=RESUMER)
    verdict = judge(DECIDED, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_an_approval_that_refuses_an_approved_call_is_a_violation() -> None:
    b = History()
    _approve(b)
    _decision_step(b)
    refused = _pending(b, "1.0", ran=False, tool="write_file", true_effect="idempotent_write")
    verdict = judge(DECIDED, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (refused,)
    assert "its approver approved it" in verdict.explanation


def test_a_denial_that_runs_a_denied_call_is_a_violation() -> None:
    b = History()
    _approve(b, denied=True)
    _decision_step(b)
    _pending(b, "1.0", ran=True, tool="write_file", true_effect="idempotent_write")
    verdict = judge(DECIDED, b)
    assert verdict.valid is Validity.INVALID and "which its approver denied" in verdict.explanation


def test_a_denial_that_refuses_its_calls_holds() -> None:
    b = History()
    _approve(b, denied=True)
    _decision_step(b)
    _pending(b, "1.0", ran=False, tool="write_file", true_effect="idempotent_write")
    _call(b, 2, process=RESUMER)
    verdict = judge(DECIDED, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 1


def test_a_current_approval_released_before_its_decision_is_recorded_is_a_violation() -> None:
    b = History()
    _approve(b)
    release = _release(b)
    verdict = judge(DECIDED, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (release,)


def test_near_miss_a_stale_approval_may_be_released() -> None:
    b = History()
    _approve(b, stale=True)
    _release(b)
    verdict = judge(DECIDED, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 0


def test_near_miss_a_write_turn_whose_decision_could_not_be_stored_may_be_released() -> None:
    """ADR-132: the release comes after the attempt to store the decision."""
    b = History()
    _approve(b)
    _decision_step(b)
    b.add(EVENT, FAIL, process=RESUMER, seq=3, kind="approval", error="StoreError")
    _release(b)
    assert judge(DECIDED, b).valid is Validity.VALID


def test_near_miss_a_release_without_a_claim_is_not_judged() -> None:
    b = History()
    b.enqueue()
    b.add(SEGMENT, INVOKE, process=RESUMER, entry="approve", identity=RESUMER)
    b.store("T10 claimForResume", identity=RESUMER, process=RESUMER, matched=False)
    _release(b)
    verdict = judge(DECIDED, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 0


def test_near_miss_calls_the_process_no_longer_has_or_the_run_does_not_offer_are_refused() -> None:
    b = History()
    b.add(PLAN, OK, process=WORLD, kind="queued", stops=[], stop_kinds=[], offered=["write_file", "gone_tool"])
    _approve(b)
    _decision_step(b)
    _pending(b, "1.0", ran=False, true_effect="unknown", tool="gone_tool")
    _pending(b, "1.1", ran=False, tool="search_pages")
    assert judge(DECIDED, b).valid is Validity.VALID


def test_near_miss_a_denials_loop_calls_after_the_first_provider_call_are_not_pending() -> None:
    b = History()
    _approve(b, denied=True)
    _decision_step(b)
    _call(b, 2, process=RESUMER)
    _pending(b, "2.0", ran=True)
    assert judge(DECIDED, b).valid is Validity.VALID


def test_near_miss_an_input_resume_is_not_judged() -> None:
    b = History()
    _input_resume(b)
    _pending(b, "2.0", ran=False)
    verdict = judge(DECIDED, b)
    assert verdict.valid is Validity.VALID and verdict.judged == 0
