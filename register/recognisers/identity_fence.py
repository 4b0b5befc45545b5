"""NG-identity's fence routes: a segment whose claim had been taken over shares its identity with the new
owner, so its owner-guarded statements still match. Through ``fence_matches_inflight_write`` its suspend
hands the new owner's standing fence to a resume; through ``terminal_row_no_stale_fence`` its own fence
stamp lands on the new owner's row, its clear fails, and the new owner's settle leaves that fence.

Spec 1.3: "Uniqueness is assumed from the process, not enforced." Kept apart from the other routes of
NG-identity (:func:`register.recognisers.ownership.shared_identity`) because it reads a longer story: which
process held the run, whose guard matched on whose row, and what the resume then read."""

from __future__ import annotations

from checks import Index, Verdict
from checks import history as H
from checks.history import OpType
from checks.index import row_of
from model.statements import CLAIM_FOR_RESUME, CLAIMS, MARK_PENDING_EFFECT, OWNER_GUARDED, SUSPEND_RUN
from register.recognisers.common import rows_of_run, witness_of


def shared_identity_suspend_hands_fence(ix: Index, verdict: Verdict) -> bool:
    """The resume's claim (T10) whose post-claim read met a fence stamped before it followed a suspend
    (T9) by another process than the stamp's; that process held the run before the stamping segment's
    claim, presented the very identity the stamping segment holds the row under, and an ``identity``
    fault gave one of the two that identity; after the stamping segment's claim one of its owner-guarded
    statements (T4, T5) matched that segment's row: the guard could not tell the two apart, so the
    superseded segment carried on and suspended the new owner's run with its fence standing."""
    ops = witness_of(ix, verdict)
    if verdict.name != "fence_matches_inflight_write":
        return False
    stamps = [op for op in ops if op.op == H.STORE and ix.number(op) == MARK_PENDING_EFFECT]
    claims = [op for op in ops if op.op == H.STORE and ix.number(op) == CLAIM_FOR_RESUME]
    if len(stamps) != 1 or len(claims) != 1:
        return False
    stamp, resume = stamps[0], claims[0]
    shared = row_of(stamp).get("claimed_by")
    rows = rows_of_run(ix, resume.run)
    before = [op for op in rows if op.index < resume.index]
    if not before or ix.number(before[-1]) != SUSPEND_RUN:
        return False
    suspend = before[-1]
    if suspend.process == stamp.process or suspend.get("identity") != shared:
        return False
    taken = [op for op in rows if op.index < stamp.index and op.process == stamp.process and ix.number(op) in CLAIMS]
    held = [op for op in rows if op.index < suspend.index and op.process == suspend.process and ix.number(op) in CLAIMS]
    if not taken or not held or held[-1].index > taken[-1].index:
        return False
    faulted = any(
        op.get("family") == "identity"
        and op.get("identity") == shared
        and op.get("target") in (stamp.process, suspend.process)
        for op in ix.of_type(H.FAULT, OpType.INFO)
    )
    passed_guard = any(
        op.process == suspend.process and ix.number(op) in OWNER_GUARDED and taken[-1].index < op.index < suspend.index
        for op in rows
    )
    return faulted and passed_guard


def shared_identity_zombie_fence(ix: Index, verdict: Verdict) -> bool:
    """The terminal row kept a fence stamped (T5 at ``executor.fence``) by another process than the one
    that settled it; the stamping process had held the run before the settling process's last claim (a
    zombie), yet its owner-guarded stamp matched because it presented the very identity the settling
    process holds the row under, and an ``identity`` fault gave one of the two that identity. The zombie's
    write returned and its clear never persisted; the owner's settle does not touch the fence (T7)."""
    ops = witness_of(ix, verdict)
    if verdict.name != "terminal_row_no_stale_fence" or len(ops) != 4:
        return False
    stamp, settle = ops[0], ops[3]
    if stamp.op != H.STORE or ix.number(stamp) != MARK_PENDING_EFFECT or stamp.get("site") != "executor.fence":
        return False
    if settle.op != H.STORE or stamp.process == settle.process:
        return False
    shared = stamp.get("identity")
    if not shared or settle.get("identity") != shared:
        return False
    rows = rows_of_run(ix, stamp.run)
    zombie = [op for op in rows if op.index < stamp.index and op.process == stamp.process and ix.number(op) in CLAIMS]
    owner = [op for op in rows if op.index < stamp.index and op.process == settle.process and ix.number(op) in CLAIMS]
    if not zombie or not owner or zombie[-1].index > owner[-1].index:
        return False
    return any(
        op.get("family") == "identity"
        and op.get("identity") == shared
        and op.get("target") in (stamp.process, settle.process)
        for op in ix.of_type(H.FAULT, OpType.INFO)
    )


__all__ = ["shared_identity_suspend_hands_fence", "shared_identity_zombie_fence"]
