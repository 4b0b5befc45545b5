"""NG-identity's requeue route: a superseded segment shares its identity with the new owner, so its
owner-guarded recovery requeue (T11) still matches the new owner's row and spends one more requeue than
the budget allows.

Spec 1.3: "Uniqueness is assumed from the process, not enforced." T11 is guarded by the owner alone
(``uid AND status=running AND claimed_by=me``, spec 2) and carries no requeue-count predicate, so once
the guard cannot tell the two processes apart, the superseded segment's retry decision (read on the
count its own claim saw) requeues the run past MAX_REQUEUES. Kept apart from the shared route's other
readings (:func:`register.recognisers.ownership.shared_identity`): it reads whose claim held the row the
requeue matched, and which fault gave the two processes one identity."""

from __future__ import annotations

from checks import Index, Verdict
from checks import history as H
from checks.history import OpType
from checks.index import row_of
from model.statements import CLAIMS, REQUEUE
from register.recognisers.common import rows_of_run, witness_of


def shared_identity_stale_requeue(ix: Index, verdict: Verdict) -> bool:
    """The witness is one recovery requeue (T11 at ``recovery.requeue``) that matched; the last claim of
    the run before it was by another process, which left the row claimed by the very identity the
    requeue presented; the requeuing process had claimed the run before that claim (its segment was
    superseded); and an ``identity`` fault gave one of the two processes that identity."""
    ops = witness_of(ix, verdict)
    if verdict.name != "requeue_budget_respected" or len(ops) != 1:
        return False
    requeue = ops[0]
    if requeue.op != H.STORE or requeue.type is not OpType.OK or not requeue.get("matched"):
        return False
    if ix.number(requeue) != REQUEUE or requeue.get("site") != "recovery.requeue":
        return False
    shared = requeue.get("identity")
    if not shared:
        return False
    claims = [op for op in rows_of_run(ix, requeue.run) if op.index < requeue.index and ix.number(op) in CLAIMS]
    if not claims:
        return False
    holder = claims[-1]
    if holder.process == requeue.process or row_of(holder).get("claimed_by") != shared:
        return False
    if not any(op.process == requeue.process for op in claims):
        return False
    return any(
        op.get("family") == "identity"
        and op.get("identity") == shared
        and op.get("target") in (requeue.process, holder.process)
        for op in ix.of_type(H.FAULT, OpType.INFO)
    )


__all__ = ["shared_identity_stale_requeue"]
