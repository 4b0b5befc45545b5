"""A violation's mechanism: what shrinking must keep and what triage groups by.

Two violations of one invariant can be different defects: the same ``settles_by_owner`` fails when a
stalled worker settle lands on a new owner (F-12) and when the reaper's settle after a failed dispatch
does (an open case). A shrinker that keeps only "the invariant still fails" may trade the first for the
second, and then the counterexample shows another story than the one found. So a violation's mechanism
is the registered finding or recorded non-guarantee whose recogniser accepts it (:func:`explain`), and
for a violation nothing explains, the shape of its witness: the kind of every record the verdict names
(a store statement by its T-number, site and issuing process kind; a read by what and where; an event by
kind and true effect; a segment by entry and outcome; a final row by status), without indices, runs,
identities or times, which shrinking moves. Two unexplained violations with the same shape went through
the same statements at the same sites.

A pure function of one judged history; knows the register (:mod:`register.findings`) and the history
vocabulary, never the world.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from checks import Index, Verdict
from checks import history as H
from checks.fused import as_index
from checks.history import Op
from checks.index import row_of
from register.explain import explain

UNEXPLAINED = ""


@dataclass(frozen=True, slots=True)
class Mechanism:
    """``explained_by``: a finding or non-guarantee id, or '' (then ``witness`` says the shape)."""

    invariant: str
    explained_by: str
    witness: tuple[str, ...] = ()

    @property
    def explained(self) -> bool:
        return self.explained_by != UNEXPLAINED

    def label(self) -> str:
        """One line: the register entry, or 'unexplained: <shape>'."""
        if self.explained:
            return self.explained_by
        return "unexplained: " + " ; ".join(self.witness)


def _shape(ix: Index, op: Op) -> str:
    """The kind of one witness record, with nothing shrinking moves (no index, run, identity or time)."""
    v = op.value
    kind = f"{op.op} {op.type.value}"
    if op.op == H.STORE:
        number = ix.numbers.get(op.index) or str(v.get("transition", "")).partition(" ")[0]
        return f"{kind} {number} at {v.get('site', '')} by {v.get('actor', '')}".rstrip()
    if op.op == H.READ:
        return f"{kind} {v.get('what', '')} at {v.get('site', '')}"
    if op.op == H.EVENT:
        return f"{kind} {v.get('kind', '')} {v.get('true_effect', '')}".rstrip()
    if op.op in (H.TOOL, H.LANDING):
        return f"{kind} {v.get('true_effect', v.get('effect', ''))}"
    if op.op == H.SEGMENT:
        outcome = v.get("outcome")
        shown = outcome if isinstance(outcome, str) else ("error" if "error" in v else "")
        return f"{kind} {v.get('entry', '')}{' ' + shown if shown else ''}"
    if op.op == H.FINAL:
        return f"{kind} {row_of(op).get('status', '')}"
    if op.op == H.DECIDE:
        return f"{kind} {v.get('decider', '')} {v.get('decision', '')}"
    if op.op == H.FAULT:
        return f"{kind} {v.get('family', '')}/{v.get('kind', '')}"
    if op.op == H.DISPATCH:
        return f"{kind} {v.get('site', '')}"
    return kind


def witness_shape(ix: Index, verdict: Verdict) -> tuple[str, ...]:
    """The shape of a verdict's witness, record by record, in the verdict's order."""
    return tuple(_shape(ix, ix.history[i]) for i in verdict.witness if 0 <= i < len(ix.history))


def mechanism_of(invariant: str, history: Sequence[Op] | Index, verdict: Verdict) -> Mechanism:
    """The mechanism of a violation of ``invariant`` (its verdict must be a violation)."""
    ix = as_index(history)
    entry = explain(invariant, ix, verdict)
    if entry is not None:
        return Mechanism(invariant, entry.id)
    return Mechanism(invariant, UNEXPLAINED, witness_shape(ix, verdict))


__all__ = ["UNEXPLAINED", "Mechanism", "mechanism_of", "witness_shape"]
