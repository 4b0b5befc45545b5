"""The invariant catalogue: pure checkers over one simulation history.

Rules of this package: standard library only; it reads a history
(:mod:`model.history`) and nothing else — never simpy, ``random``, a clock or I/O.
Each checker is one linear pass over a shared :class:`Index` built once per history.

    verdicts = check_all(history)          # name -> Verdict, never raises
    overall = compose(verdicts.values())   # false beats unknown beats true
    reached = coverage(history)            # name -> bool ("sometimes" properties)
"""

from __future__ import annotations

from model.invariants.catalog import INVARIANTS, check_all
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
    "Kind",
    "Validity",
    "Verdict",
    "check_all",
    "compose",
    "coverage",
]
