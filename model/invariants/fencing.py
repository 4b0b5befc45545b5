"""Invariants of the write fence and the lease (ADR-122, ADR-141): every write runs under
a held lease with its fence stamped, and a decider's non-idempotent fence belongs to the
current attempt.

Pure checkers over the shared index of one history; they know only the history, never the
runtime or the world that produced it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model.history import DECIDE, STORE, TOOL, Op, OpType
from model.invariants.index import (
    CLAIMS,
    NON_IDEMPOTENT_WRITE,
    WRITE_EFFECTS,
    Index,
    merged,
    row_of,
)
from model.invariants.judgement import Finding, Tally


def _lease_problems(row: Mapping[str, Any], invoke: Op, effect: str) -> list[str]:
    """What is wrong with the row a write executes under (empty: fenced under a held lease)."""
    problems = []
    if row.get("status") != "running":
        problems.append(f"status is {row.get('status')!r}")
    if row.get("claimed_by") != invoke.get("identity"):
        problems.append(f"claimed by {row.get('claimed_by')!r}, not {invoke.get('identity')!r}")
    lease = row.get("lease_expires")
    if not isinstance(lease, int | float) or lease < invoke.time_s:
        problems.append(f"lease expired ({lease!r} < {invoke.time_s!r})")
    if row.get("pending_effect") != effect:
        problems.append(f"fence is {row.get('pending_effect')!r}, not {effect!r}")
    return problems


def writes_fenced_under_lease(ix: Index) -> Finding:
    """At every write invoke the run's current row is RUNNING, ours, leased and fenced with its effect."""
    current: dict[str, Op] = {}
    tally = Tally()
    for op in merged(ix.rows, ix.of_type(TOOL, OpType.INVOKE)):
        if op.op == STORE:
            current[op.run] = op
            continue
        effect = op.get("true_effect")
        if effect not in WRITE_EFFECTS:
            continue
        store = current.get(op.run)
        if store is None:
            tally.violate((op.index,), f"write {op.get('tool')!r} at {op.index} ran with no persisted row")
            continue
        problems = _lease_problems(row_of(store), op, effect)
        if not problems:
            tally.hold()
            continue
        tally.violate(
            (store.index, op.index),
            f"write {op.get('tool')!r} of run {op.run!r} at {op.index} ran under the row of {store.index}: "
            + "; ".join(problems),
        )
    return tally.finding("write invokes")


def _is_non_idempotent_stamp(ix: Index, op: Op) -> bool:
    return ix.number(op) == "T5" and row_of(op).get("pending_effect") == NON_IDEMPOTENT_WRITE


def fence_matches_inflight_write(ix: Index) -> Finding:
    """A decider reading a non-idempotent fence reads a stamp made after the run's latest claim."""
    claim: dict[str, Op] = {}
    stamp: dict[str, Op] = {}
    tally = Tally()
    for op in merged(ix.rows, ix.of_type(DECIDE, OpType.OK)):
        if op.op == STORE:
            if ix.number(op) in CLAIMS:
                claim[op.run] = op
            elif _is_non_idempotent_stamp(ix, op):
                stamp[op.run] = op
            continue
        if op.get("pending_effect") != NON_IDEMPOTENT_WRITE:
            continue
        _judge_decision(tally, op, stamp.get(op.run), claim.get(op.run))
    return tally.finding("decisions on a non-idempotent fence")


def _judge_decision(tally: Tally, decide: Op, stamp: Op | None, claim: Op | None) -> None:
    who = f"decider {decide.get('decider')!r} of run {decide.run!r} at {decide.index}"
    if stamp is None:
        witness = (decide.index,) if claim is None else (claim.index, decide.index)
        tally.violate(witness, f"{who} read a non-idempotent fence no T5 ever stamped")
    elif claim is not None and claim.index > stamp.index:
        tally.violate(
            (stamp.index, claim.index, decide.index),
            f"{who} read the fence stamped at {stamp.index}, before the latest claim at {claim.index}: "
            "a previous attempt's write",
        )
    else:
        tally.hold()


__all__ = ["fence_matches_inflight_write", "writes_fenced_under_lease"]
