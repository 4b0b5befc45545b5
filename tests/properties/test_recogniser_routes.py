"""Each recogniser of F-01 .. F-08 accepts only the route its write-up describes: its
counterexample is recognised, and a near-miss history that differs only in the route (the requeue that
re-ran the write, the audit that failed or not, the cancel, the stamp, the reaper's change, the final
status, the dispatch) is refused, so that another mechanism with the same symptom shows as unregistered.
(F-09 .. F-13 are held to the same rule in test_deployment_range_findings.py, F-14 and the non-guarantees
of what the runtime tells in test_outcome_findings.py.)"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from checks import Index, Verdict
from checks import history as H
from checks.fused import index_of
from checks.history import Op, OpType
from checks.index import row_of
from model.statements import (
    CANCEL,
    DEAD_LETTER_STALE,
    FINISH_RUN,
    MARK_PENDING_EFFECT,
    NAMES,
    RENEW_LEASE,
    REQUEUE,
    REQUEUE_STALE,
)
from register.explain import explain
from register.findings import Finding, finding
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult


def replayed(f: Finding) -> tuple[SimulationResult, Index, Verdict]:
    cx = read(f.path)
    result = cx.run()
    assert result.digest == cx.digest
    verdict = result.verdicts[f.invariant]
    ix = index_of(result.history)
    assert explain(f.invariant, ix, verdict) is f
    return result, ix, verdict


def edited(result: SimulationResult, pick: Callable[[Op], bool], change: Mapping[str, Any] | None = None,
           **fields: Any) -> Index:  # fmt: skip
    ops = [op._replace(value={**op.value, **dict(change or {})}, **fields) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def number(op: Op) -> str:
    return str(op.get("transition", "")).partition(" ")[0]


def test_f01_needs_the_requeue_that_restarted_the_run_after_the_clear() -> None:
    f = finding("F-01")
    result, _, verdict = replayed(f)
    first, second = (result.history[i] for i in verdict.witness)
    requeues = [op for op in result.history if op.op == H.STORE and number(op) in (REQUEUE, REQUEUE_STALE) and
                first.index < op.index < second.index]  # fmt: skip
    assert requeues
    ix = edited(result, lambda op: op in requeues, {"transition": NAMES[RENEW_LEASE]})
    assert not f.recognise(ix, verdict), "no requeue between the completed write and its re-run"


def test_f01_is_not_a_write_whose_audit_failed() -> None:
    f = finding("F-01")
    result, _, verdict = replayed(f)
    execution = result.history[verdict.witness[0]].get("execution")
    ix = edited(result, lambda op: op.op == H.EVENT and op.get("execution") == execution, {}, type=OpType.FAIL)
    assert not f.recognise(ix, verdict), "a failed audit is F-06's route"


def test_f02_needs_the_segment_to_have_stopped_before_recording_the_step() -> None:
    f = finding("F-02")
    result, _, verdict = replayed(f)
    landing = next(result.history[i] for i in verdict.witness if result.history[i].op == H.LANDING)
    process = landing.get("process")
    after = next(op for op in result.history if op.op == H.STORE and op.type is not OpType.INVOKE and
                 op.process == process and op.index > landing.index and op.run == landing.run)  # fmt: skip
    assert after.type is OpType.FAIL or not after.get("matched"), "the zombie's boundary lost the lease"
    ix = edited(result, lambda op: op is after, {"matched": True, "row": {}}, type=OpType.OK)
    assert not f.recognise(ix, verdict), "a boundary that kept the lease and a process that lived on"


def test_f03_needs_a_cancel() -> None:
    f = finding("F-03")
    result, _, verdict = replayed(f)
    ix = edited(result, lambda op: op.op == H.STORE and number(op) == CANCEL, {"transition": NAMES[RENEW_LEASE]})
    assert not f.recognise(ix, verdict), "a zombie's collision without a cancel is KB-5's route"


def test_f04_needs_the_writes_own_stamp_just_before_the_cancel() -> None:
    f = finding("F-04")
    result, _, verdict = replayed(f)
    ix = edited(
        result, lambda op: op.op == H.STORE and number(op) == MARK_PENDING_EFFECT, {"identity": "worker:h9:999"}
    )
    assert not f.recognise(ix, verdict)


def test_f05_needs_recoverys_own_requeue_and_its_failed_dispatch() -> None:
    f = finding("F-05")
    result, _, verdict = replayed(f)
    ix = edited(result, lambda op: op.op == H.DISPATCH and op.type is OpType.FAIL, {}, type=OpType.OK)
    assert not f.recognise(ix, verdict)


def test_f06_needs_the_reaper_to_change_the_row_after_the_failed_audit() -> None:
    f = finding("F-06")
    result, _, verdict = replayed(f)
    ix = edited(result, lambda op: op.op == H.STORE and number(op) in (REQUEUE, REQUEUE_STALE, DEAD_LETTER_STALE),
                {"transition": NAMES[FINISH_RUN]})  # fmt: skip
    assert not f.recognise(ix, verdict), "the fail-closed settle took effect: the audit failure is recorded"


def test_f07_needs_the_cancelled_final_row() -> None:
    f = finding("F-07")
    result, _, verdict = replayed(f)
    final = next(result.history[i] for i in verdict.witness if result.history[i].op == H.FINAL)
    row = {**row_of(final), "status": "completed"}
    ix = edited(result, lambda op: op is final, {"row": row})
    assert not f.recognise(ix, verdict)


def test_f08_needs_the_enqueues_failed_dispatch() -> None:
    f = finding("F-08")
    result, _, verdict = replayed(f)
    ix = edited(result, lambda op: op.op == H.DISPATCH and op.type is OpType.FAIL, {}, type=OpType.OK)
    assert not f.recognise(ix, verdict)


@pytest.mark.parametrize("finding_id", [f"F-0{i}" for i in range(1, 9)])
def test_no_other_finding_claims_the_counterexample(finding_id: str) -> None:
    """Recognisers of different routes do not overlap on each other's counterexamples."""
    from register.findings import FINDINGS

    f = finding(finding_id)
    _, ix, verdict = replayed(f)
    others = [g.id for g in FINDINGS if g is not f and f.invariant in g.invariants and g.recognise(ix, verdict)]
    assert others == []
