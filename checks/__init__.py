"""The judge: everything that turns one simulation history into verdicts, metrics and explanations' inputs.

A history (:mod:`checks.history`, the record format the world writes) goes through one judging
pass (:mod:`checks.fused`) that builds the shared :class:`Index` and feeds every invariant
(always / eventually properties), the coverage probes (sometimes properties), the run metrics
(:mod:`checks.metrics`) and liveness (:mod:`checks.liveness`).

May import :mod:`model` (the runtime's vocabulary and values) and the standard library only: it
is pure — never simpy, ``random``, a clock, I/O, the world, the register or a report.

    judged = judge(history)                # one pass: .index, .verdicts, .coverage; never raises
    verdicts = check_all(history)          # name -> Verdict, never raises
    overall = compose(verdicts.values())   # false beats unknown beats true
    reached = coverage(history)            # name -> bool ("sometimes" properties)
"""

from __future__ import annotations

from checks.catalog import INVARIANTS, Judgement, check_all, judge
from checks.coverage import COVERAGE, Coverage, coverage
from checks.fused import as_index, index_of
from checks.index import Index
from checks.judgement import Finding, Invariant
from checks.verdict import Kind, Validity, Verdict, compose

__all__ = [
    "COVERAGE",
    "INVARIANTS",
    "Coverage",
    "Finding",
    "Index",
    "Invariant",
    "Judgement",
    "Kind",
    "Validity",
    "Verdict",
    "as_index",
    "check_all",
    "compose",
    "coverage",
    "index_of",
    "judge",
]
