"""Spec 4's classifier judged against the failure the world injected (``failure_classified_per_spec``).

Why a separate rule: the runtime acts on a failure class only through ``isRetryable`` (and, in the PHP,
``tripsCircuit``), so a classifier that files HTTP 400 as ``auth``, or 400-498 as ``unknown``, leaves
every decision the runtime takes unchanged (``auth``, ``clientError`` and ``unknown`` are all
dead-lettered ``not_retryable``). No outcome rule can see it; what changes is the class the runtime's
classifier gives the exception it received, which the provider's ``fail`` record carries
(``failure_class``). Spec 4 promises that class ("401/403 → auth; 429 → rateLimit; 500-599 →
serverError; other 400-499 → clientError; anything else → unknown", the exception family first, a
fallback chain by its last attempt), and the world records, beside it, the class of the failure its
fault plan injected (``true_class``, from the plan's kind, never from the runtime's classifier). The
label is what is judged; the world's record is the truth it is judged against.

Pure checker over one history; it knows only the history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from checks.fused import Key, Machine
from checks.history import PROVIDER, Op, OpType
from checks.index import Index
from checks.judgement import ADR_PROMISE, Finding, Tally, invariant
from checks.spec_rules import SPEC_CLASSES
from checks.verdict import Kind


@invariant(
    "failure_classified_per_spec",
    Kind.ALWAYS,
    "every provider failure the world injected is given, by the runtime's classifier, the class spec 4 gives the "
    "exception and status code injected (the world's record of the fault), never another",
    tags=(ADR_PROMISE,),
)
class FailureClassifiedPerSpec(Machine):
    """Each provider ``fail`` record whose true class (the fault plan's, spec 4) is recorded is judged: the
    class the runtime's classifier gave the exception (``failure_class``) must be that class. A record
    without a true class (a history from before the world kept it) is not judged; one with a true class
    and no classification is a violation (the runtime's answer is missing)."""

    __slots__ = ("tally",)

    def __init__(self) -> None:
        self.tally = Tally()

    HANDLERS: ClassVar[Mapping[Key, str]] = {(PROVIDER, OpType.FAIL): "on_failure"}

    def on_failure(self, op: Op) -> None:
        truth = op.get("true_class")
        if truth not in SPEC_CLASSES:
            return
        given = op.get("failure_class")
        if given == truth:
            self.tally.hold()
            return
        self.tally.violate(
            (op.index,),
            f"the provider failure {op.get('error')!r} of run {op.run!r} at {op.index} was classified {given!r}; "
            f"the world injected a failure of class {truth!r}, and spec 4 classifies it so",
            at=op.index,
        )

    def finish(self, ix: Index) -> Finding:
        return self.tally.finding("provider failures with a true class")


__all__ = ["FailureClassifiedPerSpec"]
