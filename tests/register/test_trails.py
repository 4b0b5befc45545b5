"""The trail bookkeeping the chains share (:mod:`register.trails`), on hand-built histories."""

from __future__ import annotations

from checks import history as H
from checks.history import Op, OpType
from register.trails import struck


def _op(index: int, process: str, op: str, value: dict[str, object]) -> Op:
    return Op(index, float(index), process, op, "run-001", OpType.INVOKE, value)


def test_a_fault_is_paired_with_the_last_record_of_the_process_it_targets() -> None:
    history = [
        _op(0, "worker-1", H.STORE, {"transition": "T5 markPendingEffect"}),
        _op(1, "reaper", H.STORE, {"transition": "T12 staleRuns"}),
        _op(2, "nemesis", H.FAULT, {"family": "store", "kind": "slow", "target": "worker-1"}),
        _op(3, "nemesis", H.FAULT, {"family": "store", "kind": "slow", "target": "worker-2"}),
        _op(4, "worker-1", H.STORE, {"transition": "T6 clearPendingEffect"}),
        _op(5, "nemesis", H.FAULT, {"family": "store", "kind": "fail", "target": "worker-1"}),
    ]
    pairs = [(op.index, None if before is None else before.index) for op, before in struck(history)]
    # a fault is never the record a later fault struck; a process with no record yet was struck at nothing
    assert pairs == [(0, None), (1, None), (2, 0), (3, None), (4, None), (5, 4)]
