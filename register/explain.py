"""The register's one question: which entry, if any, explains a violation of one judged history?

A registered finding is asked first, then a recorded non-guarantee; each says yes only when its
recogniser sees the route its write-up describes in the violation's witness.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from checks import Index, Validity, Verdict
from checks.fused import as_index
from checks.history import Op
from register.findings import FINDINGS, Finding
from register.nonguarantees import NON_GUARANTEES, NonGuarantee


def explain(invariant: str, history: Sequence[Op] | Index, verdict: Verdict) -> Finding | NonGuarantee | None:
    """The registered finding, else the recorded non-guarantee, whose mechanism the violation shows."""
    ix = as_index(history)
    for entry in FINDINGS:
        if invariant in entry.invariants and entry.recognise(ix, verdict):
            return entry
    for ng in NON_GUARANTEES:
        if invariant in ng.invariants and ng.recognise(ix, verdict):
            return ng
    return None


def unexplained(history: Sequence[Op] | Index, verdicts: Mapping[str, Verdict]) -> list[str]:
    """The violated invariants of one judged history that no registered finding or non-guarantee explains,
    in the order ``verdicts`` gives them: what a sweep, an explorer or the review calls news."""
    ix = as_index(history)
    return [
        name
        for name, verdict in verdicts.items()
        if verdict.valid is Validity.INVALID and explain(name, ix, verdict) is None
    ]


__all__ = ["explain", "unexplained"]
