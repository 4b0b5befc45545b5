"""Pre-port references, frozen as they were at 9e85049, for checkers this branch rewrote or ported
outside the four outcome modules: ``every_run_terminates`` (an index function run after the pass)
and ``fence_matches_inflight_write`` (a machine whose finish merged every claim and stamp with the
fenced reads). Compared with the judge's versions by test_ported_checkers.py; not used by the judge.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from checks.history import READ, STORE, Op, OpType
from checks.index import WRITE_EFFECTS, Index, merged, row_of
from checks.judgement import Finding, Tally
from model.statements import CLAIMS, MARK_PENDING_EFFECT

_STRANDED = frozenset({"queued", "running"})
_CLAIM_OR_STAMP = (*sorted(CLAIMS), MARK_PENDING_EFFECT)
_by_index = attrgetter("index")


def every_run_terminates(ix: Index) -> Finding:
    tally = Tally()
    if not ix.finals:
        tally.unknown((), "the history has no final rows")
    for final in sorted(ix.finals.values(), key=_by_index):
        status = row_of(final).get("status")
        if status in _STRANDED:
            tally.violate((final.index,), f"run {final.run!r} ended {status!r} (stranded)")
        else:
            tally.hold()
    return tally.finding("final rows")


def fence_matches_inflight_write(ix: Index) -> Finding:
    claim: dict[str, Op] = {}
    stamps: dict[str, dict[str, Op]] = {}
    tally = Tally()
    fenced_reads: list[Op] = []
    for read in ix.of_type(READ, OpType.OK):
        value = read[6]
        if "fence" in value:
            if value["fence"] in WRITE_EFFECTS:
                fenced_reads.append(read)
        else:
            fences = value.get("fences")
            if isinstance(fences, (list, tuple)) and not WRITE_EFFECTS.isdisjoint(fences):
                fenced_reads.append(read)
    if not fenced_reads:
        return tally.finding("reads of a write fence")
    for op in merged(*[ix.rows_of(number) for number in _CLAIM_OR_STAMP], fenced_reads):
        if op.op == STORE:
            number = ix.number(op)
            if number in CLAIMS:
                claim[op.run] = op
            elif number == MARK_PENDING_EFFECT:
                effect = row_of(op).get("pending_effect")
                if effect in WRITE_EFFECTS:
                    stamps.setdefault(op.run, {})[effect] = op
            continue
        for run, fence in _fences(op):
            if fence in WRITE_EFFECTS:
                _judge_fence(tally, op, run, fence, claim.get(run), stamps.get(run, {}).get(fence))
    return tally.finding("reads of a write fence")


def _fences(read: Op) -> list[tuple[str, Any]]:
    if "fence" in read.value:
        return [(read.run, read.get("fence"))]
    runs, fences = read.get("result"), read.get("fences")
    if not isinstance(runs, (list, tuple)) or not isinstance(fences, (list, tuple)):
        return []
    return list(zip(runs, fences, strict=False))


def _judge_fence(tally: Tally, read: Op, run: str, fence: str, claim: Op | None, stamp: Op | None) -> None:
    if stamp is not None and (claim is None or claim.index <= stamp.index):
        tally.hold()
        return
    who = f"{read.get('what')} by {read.process} at {read.index}"
    if stamp is None:
        witness = (read.index,) if claim is None else (claim.index, read.index)
        tally.violate(witness, f"{who} read a {fence!r} fence of run {run!r} that no T5 ever stamped")
    elif claim is not None and claim.index > stamp.index:
        tally.violate(
            (stamp.index, claim.index, read.index),
            f"{who} read the {fence!r} fence of run {run!r} stamped at {stamp.index}, before the latest "
            f"claim at {claim.index}: a previous attempt's write",
        )
