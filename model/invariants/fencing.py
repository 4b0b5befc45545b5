"""Invariants of the write fence and the lease (ADR-122, ADR-141): every write runs under
a held lease with its fence stamped, and a write fence a decider reads belongs to the
current attempt.

Pure checkers over the shared index of one history; they know only the history, never the
runtime or the world that produced it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from model.history import DECIDE, READ, STORE, TOOL, Op, OpType
from model.invariants.index import (
    CLAIMS,
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


_SELECT_STALE = "SelectStale"
_REAPER = "reaper"


@dataclass(frozen=True, slots=True)
class _Attempt:
    """What a decider may judge a fence against: the run's latest claim and, per write effect,
    the latest T5 that stamped it."""

    claim: Op | None
    stamps: Mapping[str, Op]


def fence_matches_inflight_write(ix: Index) -> Finding:
    """A decider reading a write fence reads a stamp of that value made after the run's latest claim.

    The reaper decides on the rows its SELECT returned (spec 5.1), so its decisions are judged
    against the run as it stood at that SELECT: a claim after the snapshot is not held against it.
    """
    claim: dict[str, Op] = {}
    stamps: dict[str, dict[str, Op]] = {}
    snapshot: dict[tuple[str, str], _Attempt] = {}
    tally = Tally()
    for op in merged(ix.rows, ix.of_type(READ, OpType.OK), ix.of_type(DECIDE, OpType.OK)):
        if op.op == STORE:
            _track(ix, op, claim, stamps)
        elif op.op == READ:
            if op.get("what") == _SELECT_STALE:
                for run in _selected(op):
                    snapshot[(op.process, run)] = _Attempt(claim.get(run), dict(stamps.get(run, {})))
        elif op.get("pending_effect") in WRITE_EFFECTS:
            attempt = snapshot.get((op.process, op.run)) if op.get("decider") == _REAPER else None
            if attempt is None:
                attempt = _Attempt(claim.get(op.run), stamps.get(op.run, {}))
            _judge_decision(tally, op, attempt)
    return tally.finding("decisions on a write fence")


def _track(ix: Index, op: Op, claim: dict[str, Op], stamps: dict[str, dict[str, Op]]) -> None:
    number = ix.number(op)
    if number in CLAIMS:
        claim[op.run] = op
    elif number == "T5":
        effect = row_of(op).get("pending_effect")
        if effect in WRITE_EFFECTS:
            stamps.setdefault(op.run, {})[effect] = op


def _selected(read: Op) -> list[str]:
    result = read.get("result")
    if not isinstance(result, list | tuple):
        return []
    return [run for run in result if isinstance(run, str)]


def _judge_decision(tally: Tally, decide: Op, attempt: _Attempt) -> None:
    effect = decide.get("pending_effect")
    who = f"decider {decide.get('decider')!r} of run {decide.run!r} at {decide.index}"
    stamp, claim = attempt.stamps.get(effect), attempt.claim
    if stamp is None:
        witness = (decide.index,) if claim is None else (claim.index, decide.index)
        tally.violate(witness, f"{who} read a fence of {effect!r} that no T5 ever stamped")
    elif claim is not None and claim.index > stamp.index:
        tally.violate(
            (stamp.index, claim.index, decide.index),
            f"{who} read the {effect!r} fence stamped at {stamp.index}, before the latest claim at "
            f"{claim.index}: a previous attempt's write",
        )
    else:
        tally.hold()


__all__ = ["fence_matches_inflight_write", "writes_fenced_under_lease"]
