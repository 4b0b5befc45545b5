"""Invariants of write executions (ADR-111, ADR-112): a non-idempotent call lands at most
once, and never executes again after its audit failed.

Pure checkers over the shared index of one history; they know only the history, never the
runtime or the world that produced it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from checks.fused import Key, Machine
from checks.history import EVENT, LANDING, OP, RUN, VALUE, Op, OpType
from checks.index import NON_IDEMPOTENT_WRITE, Index, merged
from checks.judgement import Finding, Tally, invariant
from checks.verdict import Kind


def _blocks_retries(event: Op) -> bool:
    return bool(event.get("kind") == "tool" and event.get("true_effect") == NON_IDEMPOTENT_WRITE)


@invariant(
    "no_retry_after_failed_write_audit",
    Kind.ALWAYS,
    "a non-idempotent call whose audit failed never executes again "
    '— "no non-idempotent write executes twice after a failed audit"',
)
class NoRetryAfterFailedWriteAudit(Machine):
    """After a non-idempotent call's audit failed, no invoke of that call executes (replays only).

    Judged once the pass is over: the failed audits the pass kept, interleaved with the tool invokes
    the index lists (rarely: most histories have no failed audit of a non-idempotent write), each
    invoke of a blocked call with its completion and any landing."""

    __slots__ = ("failed",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"failed": (EVENT, OpType.FAIL)}
    failed: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        if not any(_blocks_retries(event) for event in self.failed):
            return tally.finding("invokes after a failed write audit")
        blocked: dict[tuple[str, Any], Op] = {}
        retries: list[tuple[Op, Op]] = []
        for op in merged(self.failed, ix.tool_invokes):
            key = (op[RUN], op[VALUE].get("call"))
            if op[OP] == EVENT:
                if _blocks_retries(op) and key not in blocked:
                    blocked[key] = op
                    tally.hold()  # a case: a failed non-idempotent write audit (its later invokes are judged too)
                continue
            failed = blocked.get(key)
            if failed is not None:
                retries.append((failed, op))
        for failed_audit, invoke in retries:
            _judge_retry(tally, ix, failed_audit, invoke)
        return tally.finding("invokes after a failed write audit")


def _judge_retry(tally: Tally, ix: Index, failed_audit: Op, invoke: Op) -> None:
    """A retry is harmless only if nothing landed during it and it completed as a replay.

    Without a completion (or with an info one: the caller crashed) and no landing, the
    invoke may or may not have executed: the case is unknown.
    """
    completion = ix.tool_completions.get(invoke.index)
    landing = ix.landing_of.get(invoke.index)
    prefix = (
        f"call {invoke.get('call')!r} of run {invoke.run!r} was invoked again at {invoke.index} after its "
        f"audit failed at {failed_audit.index} "
    )
    if landing is not None:
        tally.violate((failed_audit.index, invoke.index, landing.index), prefix + f"and landed at {landing.index}")
    elif completion is not None and completion.type is OpType.OK and completion.get("replayed") is True:
        tally.hold()
    elif completion is None or completion.type is OpType.INFO:
        ended = "never completed" if completion is None else f"ended info at {completion.index}"
        tally.unknown((failed_audit.index, invoke.index), prefix + f"and {ended}: may have executed")
    else:
        tally.violate(
            (failed_audit.index, invoke.index, completion.index),
            prefix + f"and executed (completion {completion.index} is not a replay)",
        )


@invariant(
    "non_idempotent_at_most_once",
    Kind.ALWAYS,
    "each logical non-idempotent call lands at most once (ADR-112)",
)
class NonIdempotentAtMostOnce(Machine):
    """Each logical non-idempotent call (run, call) lands at most once: the landings the pass kept,
    in history order, once it is over."""

    __slots__ = ("landings",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"landings": (LANDING, OpType.OK)}
    landings: list[Op]

    def finish(self, ix: Index) -> Finding:
        first: dict[tuple[str, Any], Op] = {}
        tally = Tally()
        for landing in self.landings:
            if landing[VALUE].get("effect") != NON_IDEMPOTENT_WRITE:
                continue
            key = (landing[RUN], landing[VALUE].get("call"))
            earlier = first.setdefault(key, landing)
            if earlier is landing:
                tally.hold()
                continue
            tally.violate(
                (earlier.index, landing.index),
                f"non-idempotent call {key[1]!r} of run {landing.run!r} landed twice, "
                f"at {earlier.index} and {landing.index}",
            )
        return tally.finding("non-idempotent landings")


__all__ = ["NoRetryAfterFailedWriteAudit", "NonIdempotentAtMostOnce"]
