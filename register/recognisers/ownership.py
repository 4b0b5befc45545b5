"""Recognisers of ownership non-guarantees: two live processes sharing one identity (stolen, or equated
by the store's collation), a claim that re-stamps ``started_at``, and the settles the spec leaves without
an owner guard."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from checks import Index, Verdict
from checks import history as H
from checks.history import Op, OpType
from checks.index import row_of
from model.collation import collates_equal
from model.statements import CLAIM_QUEUED
from register.recognisers.common import (
    UNCHECKED_SETTLE_SITES,
    invoke_of,
    witness_of,
)
from register.recognisers.identity_fence import shared_identity_suspend_hands_fence, shared_identity_zombie_fence
from register.recognisers.identity_requeue import shared_identity_stale_requeue


def shared_identity(ix: Index, verdict: Verdict) -> bool:
    """Two live processes shared an identity (the ``identity`` fault), and the witness involves it.
    Through ``fence_matches_inflight_write``, ``terminal_row_no_stale_fence`` and
    ``requeue_budget_respected`` only by their own routes (:mod:`register.recognisers.identity_fence`,
    :mod:`register.recognisers.identity_requeue`)."""
    if verdict.name == "requeue_budget_respected":
        return shared_identity_stale_requeue(ix, verdict)
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


def store_collation(ix: Index) -> str:
    """The store's identity collation, as the world's 'chaos' phase record states it (binary when it
    states none: every history recorded before the collation was a world property)."""
    for op in ix.of_type(H.PHASE, OpType.INFO):
        if op.get("phase") == "chaos":
            return str(op.get("collation") or "binary")
    return "binary"


def holder_of(ix: Index, run: str, identity: str, index: int) -> Op | None:
    """The latest matched statement of ``run`` before history index ``index`` that left the row claimed
    by ``identity`` and matched on its own (no collated match: the holder's claim, renewal or stamp):
    its process is the one that held the row under that identity."""
    rows: Sequence[Op] = ix.rows_by_run.get(run, ())
    for op in rows[::-1]:
        if op.index < index and "equated" not in op.value and row_of(op).get("claimed_by") == identity:
            return op
    return None


def equated_statements(ix: Index, run: str, until: int) -> list[tuple[Op, Op]]:
    """(statement, holder's statement) for each owner-guarded statement of ``run`` up to history index
    ``until`` that matched only because the store's collation equated the identity it carried with the
    distinct identity another process held the row under (the store records both: ``guard`` and
    ``equated``; the statement's record names the issuing process)."""
    collation = store_collation(ix)
    found = []
    for op in ix.rows_by_run.get(run, ()):
        if op.index > until:
            break
        held, identity = op.get("equated"), op.get("guard")
        if not held or held == identity or not collates_equal(collation, str(held), str(identity)):
            continue
        holder = holder_of(ix, run, str(held), op.index)
        if holder is not None and holder.process != op.process:
            found.append((op, holder))
    return found


def collated_identity(ix: Index, verdict: Verdict) -> bool:
    """NG-identity's second route (spec 1.3, "uniqueness is assumed from the process, not enforced"),
    widened by the engine: on a store whose collation equates distinct identities (MariaDB's
    utf8mb4_unicode_ci: ``worker:APP-1:101`` and ``worker:app-1:101``), an owner-guarded statement of one
    process matched the row another process held under a distinct identity the collation equates, and
    every process of the witness (a landing's, the process it names) is one of those two, on that run,
    after that statement."""
    if store_collation(ix) == "binary":
        return False
    witness = witness_of(ix, verdict)
    runs = {op.run for op in witness if op.run}
    if len(runs) != 1:
        return False
    (run,) = runs
    processes = {str(op.get("process") or "") if op.process in (H.WORLD, H.NEMESIS) else op.process for op in witness}
    processes.discard("")  # a world record that names no process (a final row)
    last = max(op.index for op in witness)
    for statement, holder in equated_statements(ix, run, last):
        if processes and processes <= {statement.process, holder.process}:
            return True
    return collated_zombie_event(ix, verdict)


def collated_zombie_event(ix: Index, verdict: Verdict) -> bool:
    """The collated route through ``unique_event_sequence`` when the stream the event collides with is a
    third process's: a process that had lost the run (another process claimed it, matching on its own,
    and stored the colliding event) renewed over the row a distinct identity held, matched only because
    the collation equated the two, and then appended the event at its own next sequence. On a binary
    store that renewal is refused and the process stops before appending (ADR-104: persist after
    renewal); so the colliding stream's owner is a victim, not one of the equated pair."""
    if verdict.name != "unique_event_sequence" or store_collation(ix) == "binary":
        return False
    witness = witness_of(ix, verdict)
    if len(witness) != 2 or any(op.op != H.EVENT for op in witness):
        return False
    first, later = witness
    run, zombie = later.run, later.process
    if not run or first.run != run or first.get("seq") != later.get("seq") or first.process == zombie:
        return False
    rows = ix.rows_by_run.get(run, ())
    mine = [op for op in rows if op.process == zombie and op.index < later.index]
    if not mine or "equated" not in mine[-1].value:
        return False  # its last matched statement before the event matched on its own
    statement = mine[-1]
    if statement.get("guard") != later.get("identity") or not first.index < statement.index:
        return False
    if not any(s is statement for s, _holder in equated_statements(ix, run, later.index)):
        return False
    own = [op for op in mine if "equated" not in op.value]
    if not own:
        return False
    lost_from = own[-1].index  # the zombie's last hold of the run under its own identity
    return any(
        op.process == first.process
        and "equated" not in op.value
        and lost_from < op.index < first.index
        and row_of(op).get("claimed_by") == first.get("identity")
        for op in rows
    )


SHARED_IDENTITY_INVARIANTS = frozenset(
    {
        "settles_by_owner",
        "writes_fenced_under_lease",
        "unique_event_sequence",
        "non_idempotent_at_most_once",
        "every_write_accounted",
        "terminal_is_terminal",
        "fence_matches_inflight_write",
        "terminal_row_no_stale_fence",
        "requeue_budget_respected",
    }
)
"""The invariants whose violations :func:`shared_identity` is accepted for (its routes as triaged: the
last three only by their own narrow fence and requeue routes); the collated route is held to its own, narrower test on
the non-guarantee's every invariant."""


def identity_not_unique(ix: Index, verdict: Verdict) -> bool:
    """NG-identity: two live processes shared an identity (the ``identity`` fault), or the store's
    collation equated two distinct ones (:func:`collated_identity`)."""
    if verdict.name in SHARED_IDENTITY_INVARIANTS and shared_identity(ix, verdict):
        return True
    return collated_identity(ix, verdict)


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


__all__ = [
    "SHARED_IDENTITY_INVARIANTS",
    "claim_restamps_started",
    "collated_identity",
    "collated_zombie_event",
    "equated_statements",
    "holder_of",
    "identity_not_unique",
    "shared_identity",
    "store_collation",
    "unchecked_settle_outcome",
]
