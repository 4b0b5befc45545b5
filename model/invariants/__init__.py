"""The invariant catalogue: pure checkers over one simulation history.

Rules of this package: standard library only; it reads a history
(:mod:`model.history`) and nothing else — never simpy, ``random``, a clock or I/O.
One pass over a history builds the shared :class:`Index` and feeds every checker
(:mod:`model.invariants.fused`); a checker written against the index runs after it.

    judged = judge(history)                # one pass: .index, .verdicts, .coverage; never raises
    verdicts = check_all(history)          # name -> Verdict, never raises
    overall = compose(verdicts.values())   # false beats unknown beats true
    reached = coverage(history)            # name -> bool ("sometimes" properties)
"""

from __future__ import annotations

from model.invariants.catalog import INVARIANTS, Judgement, check_all, judge
from model.invariants.coverage import COVERAGE, Coverage, coverage
from model.invariants.index import Index
from model.invariants.judgement import Finding, Invariant
from model.invariants.verdict import Kind, Validity, Verdict, compose

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
    "check_all",
    "compose",
    "coverage",
    "judge",
]
