"""The spec's event position after a claim: re-resolved from a fresh read, judged from the store's log.

- ``position_reresolved_after_claim`` (spec 1.2: "claimed queued run → `MAX(sequence)+1` read from a
  fresh row **after** the claim; resume → `MAX+1` probed before the claim (refuse if unreadable) and
  re-resolved after the claim"; spec 3.1: "T3 claim → fresh findRun + MAX+1"; the runtime's test
  `approveResolvesTheEventPositionAgainAfterWinningTheClaim`): a worker or resume segment whose claim
  (T3, T10) matched reads the row again as its next store request, and when that read found the row,
  probes MAX(sequence) next, before any statement or audit step. What is judged is the store's own
  log of the requests it answered (the request's type, its answer), never the runtime's site labels.

Why it matters although the stream usually cannot tell: a position probed before the claim is stale
when anything appended between the probe and the claim, and a post-claim read that fails must fail the
resume (RunPositionException) rather than carry on. KB-2's flag (a COUNT(events) position taken before
the claim) violates it, as the fixed runtime's test says. A sweep of automatic mutants showed the gap:
with the flag's test negated, head's resume took the pre-claim probe and no invariant said so.
Pure checker over the shared index of one history; it knows only the history.
"""

from __future__ import annotations

from checks.fused import Machine
from checks.history import EVENT, OP, READ, STORE, TYPE, VALUE, Op, OpType
from checks.index import Index, Span
from checks.judgement import ADR_PROMISE, Finding, Tally, invariant
from checks.own import spans_of_entries
from checks.verdict import Kind
from model.statements import CLAIM_FOR_RESUME, CLAIM_QUEUED

_CLAIMS = {"run_queued": CLAIM_QUEUED, "approve": CLAIM_FOR_RESUME, "submit_input": CLAIM_FOR_RESUME}
"""Entry -> the claim whose success obliges a fresh read and probe."""


@invariant(
    "position_reresolved_after_claim",
    Kind.ALWAYS,
    "a worker or resume that won its claim (T3, T10) reads the row afresh and, when it found it, probes "
    "MAX(sequence) before any statement or step (spec 1.2, 3.1)",
    tags=(ADR_PROMISE,),
)
class PositionReresolvedAfterClaim(Machine):
    """For each ``run_queued``, ``approve`` and ``submit_input`` segment: after its claim completed
    matched, its next store request (a read, or a statement's completion) or audit step is a ``FindRun``
    read; when that read answered a row, the next one is a ``MaxSequence`` read. A segment that ends
    (a crash) before either is judged on what it did."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for span in spans_of_entries(ix, frozenset(_CLAIMS)):
            _judge(tally, span, _CLAIMS[span.entry])
        return tally.finding("claims won")


def _next_requests(span: Span, claim_number: str) -> tuple[Op, list[Op]] | None:
    """The matched claim's completion and the requests and steps after it (reads, completions, steps)."""
    claim: Op | None = None
    after: list[Op] = []
    for op in span.records:
        name, type_ = op[OP], op[TYPE]
        if claim is None:
            if name == STORE and type_ is not OpType.INVOKE and type_ is not OpType.INFO:
                if str(op[VALUE].get("transition", "")).partition(" ")[0] != claim_number:
                    return None  # a statement before the claim: no claim won here
                if type_ is not OpType.OK or not op[VALUE].get("matched"):
                    return None  # the claim failed or lost
                claim = op
            continue
        if (
            name == READ
            or (name == STORE and type_ is not OpType.INVOKE and type_ is not OpType.INFO)
            or (name == EVENT and type_ is OpType.INVOKE)
        ):
            after.append(op)
            if len(after) == 2:
                break
    return None if claim is None else (claim, after)


def _judge(tally: Tally, span: Span, claim_number: str) -> None:
    found = _next_requests(span, claim_number)
    if found is None:
        return
    claim, after = found
    if not after:
        tally.hold()  # the segment ended (a crash) right after its claim
        return
    first = after[0]
    if not _is_read(first, "FindRun"):
        _violate(tally, span, claim, first, "without reading the row afresh")
        return
    if first[TYPE] is not OpType.OK or first[VALUE].get("result") is None or len(after) < 2:
        tally.hold()  # the fresh read failed or found no row (the segment settles FAILED), or it crashed
        return
    if not _is_read(after[1], "MaxSequence"):
        _violate(tally, span, claim, after[1], f"after its fresh read at {first.index} without probing MAX(sequence)")
        return
    tally.hold()


def _is_read(op: Op, what: str) -> bool:
    return op[OP] == READ and op[VALUE].get("what") == what


def _violate(tally: Tally, span: Span, claim: Op, at: Op, how: str) -> None:
    shown = at[VALUE].get("what") or at[VALUE].get("transition") or at[VALUE].get("kind")
    tally.violate((claim.index, at.index),
                  f"the {span.entry} segment of run {span.run!r} won its claim at {claim.index} and went on at "
                  f"{at.index} ({at[OP]} {shown!r}) {how}; spec 1.2 re-resolves the position after the claim",
                  at=at.index)  # fmt: skip
