"""Invariants of the write fence and the lease (ADR-122, ADR-141): every write runs under
a held lease with its fence stamped, and a write fence a decider reads belongs to the
current attempt.

Pure checkers over the shared index of one history; they know only the history, never the
runtime or the world that produced it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from checks.fused import Machine
from checks.history import INDEX, RUN, VALUE, Op
from checks.index import WRITE_EFFECTS, Index, row_of
from checks.judgement import Finding, Tally, invariant
from checks.verdict import Kind


def _lease_problems(row: Mapping[str, Any], invoke: Op, effect: str, epoch_s: int) -> list[str]:
    """What is wrong with the row a write executes under (empty: fenced under a held lease). The
    lease is a clock reading (unix seconds), compared with the call's true time on the records'
    axis (``epoch_s``: the true clock at time 0)."""
    problems = []
    if row.get("status") != "running":
        problems.append(f"status is {row.get('status')!r}")
    if row.get("claimed_by") != invoke.get("identity"):
        problems.append(f"claimed by {row.get('claimed_by')!r}, not {invoke.get('identity')!r}")
    lease = row.get("lease_expires")
    if not isinstance(lease, (int, float)) or lease - epoch_s < invoke.time_s:
        shown = lease - epoch_s if isinstance(lease, (int, float)) and lease else lease  # 0: no lease
        problems.append(f"lease expired ({shown!r} < {invoke.time_s!r})")
    if row.get("pending_effect") != effect:
        problems.append(f"fence is {row.get('pending_effect')!r}, not {effect!r}")
    return problems


@invariant(
    "writes_fenced_under_lease",
    Kind.ALWAYS,
    "every write executes while its segment holds the lease and the fence is stamped (ADR-141)",
)
class WritesFencedUnderLease(Machine):
    """At every write invoke the run's current row is RUNNING, ours, leased and fenced with its effect.
    Judged once the pass is over, each write invoke (the index lists them) against the run's latest
    matched row before it: a handler per tool invoke cost more than reading them back."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for op in ix.tool_invokes:
            effect = op[VALUE].get("true_effect")
            if effect not in WRITE_EFFECTS:
                continue
            store = ix.row_before(op[RUN], op[INDEX])
            if store is None:
                tally.violate((op.index,), f"write {op.get('tool')!r} at {op.index} ran with no persisted row")
                continue
            problems = _lease_problems(row_of(store), op, effect, ix.epoch_s)
            if not problems:
                tally.hold()
                continue
            tally.violate(
                (store.index, op.index),
                f"write {op.get('tool')!r} of run {op.run!r} at {op.index} ran under the row of {store.index}: "
                + "; ".join(problems),
            )
        return tally.finding("write invokes")


__all__ = ["WritesFencedUnderLease"]
