"""Search metrics read off one history, for Hypothesis ``target()``: larger is closer to trouble."""

from __future__ import annotations

from collections.abc import Sequence

from checks import history as H
from checks.history import Op, OpType
from model.constants import LEASE_S
from model.statements import REQUEUES, number


def lease_overrun_s(history: Sequence[Op]) -> float:
    """The longest provider or tool call beyond one lease (negative when none outlived it)."""
    started: dict[tuple[str, str], float] = {}
    worst = -float(LEASE_S)
    for op in history:
        if op.op not in (H.PROVIDER, H.TOOL):
            continue
        key = (op.process, op.op)
        if op.type is OpType.INVOKE:
            started[key] = op.time_s
        elif key in started:
            worst = max(worst, op.time_s - started.pop(key) - LEASE_S)
    return worst


def retries(history: Sequence[Op]) -> int:
    """Requeues that happened (owner retries and reaper reclaims)."""
    return sum(
        1
        for op in history
        if op.op == H.STORE
        and op.type is OpType.OK
        and op.value.get("matched")
        and number(str(op.value.get("transition", ""))) in REQUEUES
    )


def writes_in_flight(history: Sequence[Op]) -> int:
    """Write calls that a crash or a reclaim left without their tool step being recorded."""
    landed = {op.value.get("execution") for op in history if op.op == H.LANDING}
    recorded = {
        op.value.get("execution")
        for op in history
        if op.op == H.EVENT and op.type is OpType.OK and op.value.get("kind") == "tool"
    }
    return len(landed - recorded)
