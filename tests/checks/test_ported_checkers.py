"""The checkers ported to the single pass (issue 19) judge exactly as their pre-port originals did.

The originals, frozen at 9e85049 (``preport_*.py``: ten functions of an index run after the pass, or
rewritten since, and ten machines that judged per record with a handler), and the judge's
machines are compared verdict for verdict (validity, witness, explanation, judged count; coverage)
on library histories with their faults doubled and on random hand-built histories (Hypothesis), which
also hold the index's new lists to a direct reading of the history: each segment's records and
statements as the pass listed them, the tool invokes and the statements that matched nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import preport_accounts
import preport_handlers
import preport_misc
import preport_outcomes
import preport_promises
import preport_reasons
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from invariant_histories import FAIL, INFO, OK, History

from checks import INVARIANTS, Finding, Index, Validity, Verdict, judge
from checks.coverage import run_probe
from checks.fused import Machine, index_of
from checks.history import STORE, TOOL, Op
from checks.index import UNLISTED_ENTRIES
from checks.judgement import run_alone
from model.statements import (
    CANCEL,
    CLAIM_FOR_RESUME,
    CLAIM_QUEUED,
    DEAD_LETTER_STALE,
    ENQUEUE_RUN,
    FINISH_RUN,
    MARK_PENDING_EFFECT,
    NAMES,
    RENEW_LEASE,
    REQUEUE,
    REQUEUE_STALE,
    START_RUN,
    SUSPEND_RUN,
)
from scenarios.intensity import scale_faults
from scenarios.loader import load_scenario
from sim.world.simulate import simulate

REFERENCES: dict[str, Callable[[Index], Finding]] = {
    "every_run_terminates": preport_misc.every_run_terminates,
    "fence_matches_inflight_write": preport_misc.fence_matches_inflight_write,
    "segment_outcome_true": preport_outcomes.segment_outcome_true,
    "lease_lost_means_lost": preport_outcomes.lease_lost_means_lost,
    "reaper_account_true": preport_accounts.reaper_account_true,
    "enqueue_cancel_result_true": preport_accounts.enqueue_cancel_result_true,
    "terminal_reason_names_cause": preport_reasons.terminal_reason_names_cause,
    "lost_lease_stops": preport_promises.lost_lease_stops,
    "cancel_observed_at_boundary": preport_promises.cancel_observed_at_boundary,
    "lease_within_bound": preport_promises.lease_within_bound,
}
_HANDLED: dict[str, type[Machine]] = {
    "writes_fenced_under_lease": preport_handlers.WritesFencedUnderLease,
    "approved_write_turn_recorded": preport_handlers.ApprovedWriteTurnRecorded,
    "builtin_write_approved": preport_handlers.BuiltinWriteApproved,
    "no_retry_after_failed_write_audit": preport_handlers.NoRetryAfterFailedWriteAudit,
    "settles_by_owner": preport_handlers.SettlesByOwner,
    "requeue_budget_respected": preport_handlers.RequeueBudgetRespected,
    "non_idempotent_at_most_once": preport_handlers.NonIdempotentAtMostOnce,
    "dead_letter_reason_matches_cause": preport_handlers.DeadLetterReasonMatchesCause,
}
"""Machines that judged per record with a handler, now once the pass is over."""
for _name, _kind in _HANDLED.items():
    REFERENCES[_name] = lambda ix, kind=_kind: run_alone(kind(), ix)
PROBES: dict[str, type[Machine]] = {
    "lease_expired_mid_write": preport_handlers.LeaseExpiredMidWrite,
    "crash_after_landing": preport_handlers.CrashAfterLanding,
}
_BY_NAME = {inv.name: inv for inv in INVARIANTS}


def _reference(name: str, history: list[Op]) -> Verdict:
    inv = _BY_NAME[name]
    try:
        return inv.verdict(REFERENCES[name](index_of(history)))
    except Exception as exc:  # as the judge turns a raising checker into an unknown verdict
        return inv.unknown(exc)


def _assert_as_before(history: list[Op]) -> dict[str, Verdict]:
    judged = judge(history)
    for name in REFERENCES:
        assert judged.verdicts[name] == _reference(name, history), name
    for name, probe in PROBES.items():
        assert judged.coverage[name] == run_probe(probe(), index_of(history)), name
    return judged.verdicts


def _assert_lists_read_directly(history: list[Op]) -> None:
    ix = index_of(history)
    assert list(ix.tool_invokes) == [op for op in history if op.op == TOOL and op.type.value == "invoke"]
    assert list(ix.refused) == [op for op in history if op.op == STORE and op.type is OK and not op.get("matched")]
    assert list(ix.listed_spans) == [span for span in ix.spans if span.entry not in UNLISTED_ENTRIES]
    for span in ix.spans:
        walked = span._records_until(span.completion)
        assert span.records == walked
        assert span.statements == [op for op in walked if op.op == STORE and op.type in (OK, FAIL)]


def _library() -> list[tuple[str, list[Op]]]:
    cases = []
    for name, policy in (
        ("default", "head"),
        ("default", "adr-104"),
        ("cancel_mid_run", "head"),
        ("reaper_races_heartbeat", "head"),
        ("abandoned_interactive", "head"),
        ("same_second_renewals", "adr-104"),
        ("approval_write_on_resume", "adr-111"),
        ("tool_outlives_lease", "adr-111"),
        ("audit_failure_after_write", "head"),
        ("worker_crash_mid_write", "head"),
    ):
        scenario = scale_faults(load_scenario(name), 2.0)
        cases += [(f"{name}/{policy}/{seed}", simulate(scenario, policy, seed, judge=False).history) for seed in (0, 1)]
    return cases


LIBRARY = _library()


@pytest.mark.parametrize(("name", "history"), LIBRARY, ids=[name for name, _ in LIBRARY])
def test_each_ported_checker_judges_a_library_history_as_its_original(name: str, history: list[Op]) -> None:
    _assert_as_before(history)
    _assert_lists_read_directly(history)


def test_the_library_histories_hold_cases_for_every_ported_checker() -> None:
    """What makes the comparison mean something: each ported checker judged cases there, and each
    ported coverage property was reached in some history and missed in another."""
    judged = {name: 0 for name in REFERENCES}
    reached = {name: set() for name in PROBES}
    for _, history in LIBRARY:
        judgement = judge(history)
        for name, verdict in judgement.verdicts.items():
            if name in judged:
                judged[name] += verdict.judged
        for name in PROBES:
            reached[name].add(judgement.coverage[name])
    assert all(count > 0 for count in judged.values()), judged
    assert all(answers == {True, False} for answers in reached.values()), reached


_WORKERS = ("w1", "w2")
_RUNS = ("r1", "r2")
_TRANSITIONS = tuple(
    NAMES[number]
    for number in (
        START_RUN, CLAIM_QUEUED, RENEW_LEASE, MARK_PENDING_EFFECT, FINISH_RUN, CANCEL, SUSPEND_RUN, CLAIM_FOR_RESUME,
        REQUEUE, REQUEUE_STALE, DEAD_LETTER_STALE, ENQUEUE_RUN,
    )
)  # fmt: skip
_STATUSES = ("running", "completed", "failed", "cancelled", "queued", "waiting_for_approval")
_REASONS = ("", "completed", "max_iterations", "provider_failed", "not_retryable", "retries_exhausted",
            "policy_denied", "budget_exhausted")  # fmt: skip
_ERRORS = ("", "ProviderException", "TransportException", "DBALException", "AuditPersistenceFailedException")
_OUTCOMES = ("completed", "failed", "cancelled", "requeued", "lease_lost", "awaiting_approval", "suspend_failed",
             "guardrail_blocked", None)  # fmt: skip
_ENTRIES = ("run_queued", "run_interactive", "approve", "enqueue", "cancel", "reap")
_EFFECTS = ("read_only", "idempotent_write", "non_idempotent_write", "unknown", "")


def _step(b: History, draw: Callable[..., Any]) -> None:
    """One random record or small act, on a random run by a random process."""
    run, worker = draw(st.sampled_from(_RUNS)), draw(st.sampled_from(_WORKERS))
    kind = draw(st.integers(0, 13))
    if kind == 0:
        b.segment(draw(st.sampled_from(_ENTRIES)), run=run, process=worker)
    elif kind == 1:
        b.segment_done(draw(st.sampled_from((OK, OK, FAIL, INFO))), outcome=draw(st.sampled_from(_OUTCOMES)),
                       run=run, process=worker)  # type: ignore[arg-type]  # fmt: skip
    elif kind in (2, 3):
        changes = {
            "status": draw(st.sampled_from(_STATUSES)),
            "termination_reason": draw(st.sampled_from(_REASONS)),
            "error_class": draw(st.sampled_from(_ERRORS)),
            "claimed_by": draw(st.sampled_from(("", *_WORKERS))),
            "pending_effect": draw(st.sampled_from(_EFFECTS)),
            "lease_expires": draw(st.integers(0, 2000)),
        }
        transition, matched = draw(st.sampled_from(_TRANSITIONS)), draw(st.booleans())
        b.store(transition, run=run, identity=worker, matched=matched, clock_s=draw(st.integers(0, 1200)), **changes)
    elif kind == 4:
        b.store_fail(draw(st.sampled_from(_TRANSITIONS)), run=run, identity=worker)
    elif kind == 5:
        b.provider(run=run, process=worker, round_no=draw(st.integers(1, 3)))
    elif kind == 6:
        b.provider_fail(draw(st.sampled_from(("connection", "invalidRequest", None))), run=run, process=worker)
    elif kind == 7:
        b.tool(draw(st.sampled_from(("c1", "c2"))), draw(st.sampled_from(_EFFECTS)), run=run, identity=worker)
    elif kind == 8:
        b.tool_done(draw(st.sampled_from((OK, FAIL, INFO))), run=run, process=worker)
    elif kind == 9:
        b.event(draw(st.sampled_from((OK, FAIL))), kind=draw(st.sampled_from(("tool", "approval", "step"))),
                true_effect=draw(st.sampled_from(_EFFECTS)), run=run, identity=worker)  # fmt: skip
    elif kind == 10:
        b.probe(draw(st.sampled_from(("running", "cancelled"))), run=run, process=worker)
    elif kind == 11:
        b.dispatch(draw(st.sampled_from((OK, FAIL))), run=run, process=worker)
    elif kind == 12:
        account = draw(st.sampled_from(("requeued", "dead_lettered", "skipped")))
        reason = draw(st.sampled_from(("", "not_retryable", "retries_exhausted")))
        b.account(account, reason, run=run, process=worker)
    else:
        b.find(run=run, process=worker)


@st.composite
def _histories(draw: Callable[..., Any]) -> list[Op]:
    b = History()
    b.phase(lease_s=draw(st.sampled_from((900, 30))), deadline_s=draw(st.sampled_from((0, 60))))
    if draw(st.booleans()):
        b.plan({2: "budget_exhausted"}, run="r1")
    for _ in range(draw(st.integers(0, 40))):
        _step(b, draw)
    if draw(st.booleans()):
        b.final(run="r1")
    return b.ops


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(_histories())
def test_each_ported_checker_judges_a_built_history_as_its_original(history: list[Op]) -> None:
    _assert_as_before(history)
    _assert_lists_read_directly(history)


def test_the_built_histories_reach_violations_of_the_ported_checkers() -> None:
    """The random histories are not all trivially valid: a fixed one of them violates several."""
    b = History()
    b.phase(lease_s=30)
    b.segment("run_queued", process="w1")
    b.store(NAMES[CLAIM_QUEUED], identity="w1", status="running", claimed_by="w1", lease_expires=5000, clock_s=0)
    b.store(NAMES[RENEW_LEASE], identity="w1", matched=False)
    b.provider(process="w1")
    b.settle("completed", identity="w1", termination_reason="budget_exhausted")
    b.segment_done(outcome="failed", process="w1")
    verdicts = _assert_as_before(b.ops)
    invalid = {name for name in REFERENCES if verdicts[name].valid is Validity.INVALID}
    assert {"segment_outcome_true", "lost_lease_stops", "lease_within_bound", "terminal_reason_names_cause"} <= invalid


def test_a_fence_read_after_a_later_claim_is_judged_against_the_latest_claim_and_stamp() -> None:
    """The rewritten fence check reads claims and stamps backwards from each read: the latest of each
    decides, as the merge of every claim and stamp did (a stamp of an earlier attempt is a violation)."""
    b = History()
    b.claim(identity="w1")
    first = b.stamp("non_idempotent_write", identity="w1")
    b.stamp("non_idempotent_write", identity="w1")
    b.claim(identity="w1")
    latest = b.claim(identity="w2")
    read = b.find(process="w2")
    b.stamp("non_idempotent_write", identity="w2")
    held = b.find(process="w2")
    verdict = _assert_as_before(b.ops)["fence_matches_inflight_write"]
    assert verdict.valid is Validity.INVALID and verdict.judged == 2
    assert verdict.witness == (first + 1, latest, read)
    assert held > read


def test_a_write_of_another_run_inside_an_approve_segment_is_not_its_turn() -> None:
    """Judged once the pass is over, a write invoke still counts only on its own run's approve segment
    (as the handler's ``own_span`` had it): a write of another run in it is no write of the turn."""
    b = History()
    b.segment("approve", process="w1")
    b.tool("c1", "non_idempotent_write", run="r2", identity="w1")
    b.segment_done(process="w1")
    b.segment("approve", process="w1")
    own = b.tool("c2", "non_idempotent_write", identity="w1")
    verdict = _assert_as_before(b.ops)["approved_write_turn_recorded"]
    assert verdict.valid is Validity.INVALID and verdict.judged == 1
    assert own in verdict.witness
