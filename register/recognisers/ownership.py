"""Recognisers of ownership non-guarantees: two live processes sharing one identity, a claim that
re-stamps ``started_at``, and the settles the spec leaves without an owner guard."""

from __future__ import annotations

from collections.abc import Mapping

from checks import Index, Verdict
from checks import history as H
from checks.history import OpType
from checks.index import row_of
from model.statements import CLAIM_QUEUED
from register.recognisers.common import (
    UNCHECKED_SETTLE_SITES,
    invoke_of,
    witness_of,
)
from register.recognisers.identity_fence import shared_identity_suspend_hands_fence, shared_identity_zombie_fence


def shared_identity(ix: Index, verdict: Verdict) -> bool:
    """Two live processes shared an identity (the ``identity`` fault), and the witness involves it.
    Through ``fence_matches_inflight_write`` and ``terminal_row_no_stale_fence`` only by their own routes
    (:mod:`register.recognisers.identity_fence`)."""
    if verdict.name == "fence_matches_inflight_write":
        return shared_identity_suspend_hands_fence(ix, verdict)
    if verdict.name == "terminal_row_no_stale_fence":
        return shared_identity_zombie_fence(ix, verdict)
    stolen = {
        op.get("identity")
        for op in ix.of_type(H.FAULT, OpType.INFO)
        if op.get("family") == "identity" and op.get("identity")
    }
    if not stolen:
        return False
    for op in witness_of(ix, verdict):
        if op.get("identity") in stolen:
            return True
        row = op.value.get("row")
        if isinstance(row, Mapping) and row.get("claimed_by") in stolen:
            return True
    return False


def claim_restamps_started(ix: Index, verdict: Verdict) -> bool:
    """Spec 2 T3: a claim of a requeued run sets started_at=now again (T10 leaves it untouched)."""
    ops = witness_of(ix, verdict)
    return (
        len(ops) == 2
        and ops[1].op == H.STORE
        and ix.number(ops[1]) == CLAIM_QUEUED
        and row_of(ops[0]).get("started_at") != row_of(ops[1]).get("started_at")
        and row_of(ops[0]).get("finished_at") == row_of(ops[1]).get("finished_at")
    )


def unchecked_settle_outcome(ix: Index, verdict: Verdict) -> bool:
    """Spec 3.1 with 2 (persister wrappers never throw): a pre-execution settleFailed of a resume or
    runQueued segment is unguarded and its result unchecked; the segment reports FAILED although
    that settle failed or matched nothing (the run was cancelled, or the statement threw)."""
    ops = witness_of(ix, verdict)
    if len(ops) != 2 or ops[1].op != H.SEGMENT or ops[1].get("outcome") != "failed":
        return False
    segment = ops[1]
    invoke = invoke_of(ix, segment)
    if invoke is None:
        return False
    for op in ix.of_type(H.STORE, OpType.INVOKE):
        inside = invoke.index < op.index < segment.index and op.process == segment.process
        if inside and op.run == invoke.run and op.get("site") in UNCHECKED_SETTLE_SITES:
            done = ix.completions.get(op.index)
            return done is None or done.type is not OpType.OK or not done.get("matched")
    return False


__all__ = ["claim_restamps_started", "shared_identity", "unchecked_settle_outcome"]
