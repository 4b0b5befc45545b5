"""Invariants of write executions (ADR-111, ADR-112): a non-idempotent call lands at most
once, and never executes again after its audit failed.

Pure checkers over the shared index of one history; they know only the history, never the
runtime or the world that produced it.
"""

from __future__ import annotations

from typing import Any

from model.history import EVENT, LANDING, TOOL, Op, OpType
from model.invariants.index import NON_IDEMPOTENT_WRITE, Index, merged
from model.invariants.judgement import Finding, Tally


def _blocks_retries(event: Op) -> bool:
    return bool(event.get("kind") == "tool" and event.get("true_effect") == NON_IDEMPOTENT_WRITE)


def no_retry_after_failed_write_audit(ix: Index) -> Finding:
    """After a non-idempotent call's audit failed, no invoke of that call executes (replays only)."""
    blocked: dict[tuple[str, Any], Op] = {}
    tally = Tally()
    blocking = [event for event in ix.of_type(EVENT, OpType.FAIL) if _blocks_retries(event)]
    if not blocking:
        return tally.finding("invokes after a failed write audit")
    for op in merged(blocking, ix.of_type(TOOL, OpType.INVOKE)):
        if op.op == EVENT:
            if (op.run, op.get("call")) not in blocked:
                blocked[(op.run, op.get("call"))] = op
                tally.hold()  # a case: a failed non-idempotent write audit (its later invokes are judged too)
            continue
        failed_audit = blocked.get((op.run, op.get("call")))
        if failed_audit is not None:
            _judge_retry(tally, ix, failed_audit, op)
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


def non_idempotent_at_most_once(ix: Index) -> Finding:
    """Each logical non-idempotent call (run, call) lands at most once."""
    first: dict[tuple[str, Any], Op] = {}
    tally = Tally()
    for landing in ix.of_type(LANDING, OpType.OK):
        if landing.get("effect") != NON_IDEMPOTENT_WRITE:
            continue
        key = (landing.run, landing.get("call"))
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


__all__ = ["no_retry_after_failed_write_audit", "non_idempotent_at_most_once"]
