"""F-22: a reaper clock ahead dead-letters a run ``retries_exhausted`` on a snapshot with no fence, after
the live worker stamped a non-idempotent one. The recogniser accepts the shrunk counterexample and the
search's unshrunk case, and refuses near misses that change one step: the reason, the snapshot's fence,
the decision, who stamped and where, the clock lead; F-20's and F-14's histories are not F-22."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from checks import Index
from checks import history as H
from checks.fused import index_of
from checks.history import Op
from checks.index import row_of
from register.explain import explain
from register.findings import finding
from sim.explore.counterexample import read
from sim.world.simulate import SimulationResult

DATA = Path(__file__).parent / "data"
F14, F20, F22 = finding("F-14"), finding("F-20"), finding("F-22")
DLR, SBO = "dead_letter_reason_matches_cause", "settles_by_owner"


def replay(path: Path, invariant: str = DLR) -> SimulationResult:
    cx = read(path)
    result = cx.run()
    assert result.digest == cx.digest
    assert invariant in result.violations
    return result


def edited(result: SimulationResult, pick: Callable[[Op], bool], change: Mapping[str, Any]) -> Index:
    ops = [op._replace(value={**op.value, **change}) if pick(op) else op for op in result.history]
    assert ops != list(result.history), "the edit selected no record"
    return index_of(ops)


def witness(result: SimulationResult) -> tuple[Op, Op]:
    prior, dead_letter = (result.history[i] for i in result.verdicts[DLR].witness)
    return prior, dead_letter


def test_the_counterexample_is_f22_and_its_settle_f14() -> None:
    result = replay(F22.path)
    ix = index_of(result.history)
    prior, dead_letter = witness(result)
    assert row_of(dead_letter).get("termination_reason") == "retries_exhausted"
    assert row_of(prior).get("pending_effect") == "non_idempotent_write"
    assert explain(DLR, ix, result.verdicts[DLR]) is F22
    assert not F20.recognise(ix, result.verdicts[DLR]), "the snapshot had no fence to clear"
    assert explain(SBO, ix, result.verdicts[SBO]) is F14, "the same T14 over a live row is F-14's symptom"


def test_the_searchs_unshrunk_case_is_f22() -> None:
    result = replay(DATA / "f22-sync-unshrunk.toml")
    assert explain(DLR, index_of(result.history), result.verdicts[DLR]) is F22


def test_the_same_dead_letter_named_not_retryable_is_not_f22() -> None:
    result = replay(F22.path)
    _, dead_letter = witness(result)
    ix = edited(
        result, lambda op: op is dead_letter, {"row": {**row_of(dead_letter), "termination_reason": "not_retryable"}}
    )
    assert not F22.recognise(ix, result.verdicts[DLR])


def test_a_snapshot_that_read_the_fence_is_not_f22() -> None:
    result = replay(F22.path)
    _, dead_letter = witness(result)
    ix = edited(
        result,
        lambda op: (
            op.op == H.READ
            and op.process == dead_letter.process
            and op.get("what") == "SelectStale"
            and dead_letter.run in (op.get("result") or ())
        ),
        {"fences": ["non_idempotent_write"]},
    )
    assert not F22.recognise(ix, result.verdicts[DLR])


def test_a_decision_other_than_retries_exhausted_is_not_f22() -> None:
    result = replay(F22.path)
    _, dead_letter = witness(result)
    ix = edited(
        result,
        lambda op: op.op == H.DECIDE and op.run == dead_letter.run and op.get("decision") == "retries_exhausted",
        {"decision": "requeue"},
    )
    assert not F22.recognise(ix, result.verdicts[DLR])


def test_a_fence_from_the_boundary_not_the_stamp_is_not_f22() -> None:
    result = replay(F22.path)
    prior, _ = witness(result)
    ix = edited(result, lambda op: op is prior, {"site": "executor.boundary"})
    assert not F22.recognise(ix, result.verdicts[DLR])


def test_the_same_dead_letter_without_the_reapers_clock_lead_is_not_f22() -> None:
    result = replay(F22.path)
    _, dead_letter = witness(result)
    ix = edited(
        result,
        lambda op: op.op == H.FAULT and op.get("family") == "clock_skew" and op.get("target") == dead_letter.process,
        {"offset_s": 0.0},
    )
    assert not F22.recognise(ix, result.verdicts[DLR])


def test_a_lease_already_past_in_true_time_is_not_f22() -> None:
    """A lease the true clock's re-check would pass needs no reaper lead: not this mechanism."""
    result = replay(F22.path)
    prior, _ = witness(result)
    ix = edited(result, lambda op: op is prior, {"row": {**row_of(prior), "lease_expires": 1_700_000_100}})
    assert not F22.recognise(ix, result.verdicts[DLR])


def test_f20s_dead_letter_is_not_f22() -> None:
    result = replay(F20.path)
    ix = index_of(result.history)
    assert not F22.recognise(ix, result.verdicts[DLR])
    assert explain(DLR, ix, result.verdicts[DLR]) is F20
