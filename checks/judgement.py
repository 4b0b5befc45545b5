"""How a checker accumulates what it saw into one finding, and the catalogue's entry type.

A checker walks the history once and reports each judged case to a :class:`Tally`:
held, violated (with witnesses) or undecidable. The tally folds them by "false beats
unknown beats true" into a :class:`Finding`; an :class:`Invariant` names the checker and
turns its finding into a :class:`~checks.verdict.Verdict`, turning an exception
into an unknown verdict. Knows only the history, through the shared index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

from checks.fused import Machine, as_index, run_pass
from checks.history import Op
from checks.index import Index
from checks.verdict import Kind, Validity, Verdict, verdict_of


class Finding(NamedTuple):
    """What a checker concluded, before it is named. A NamedTuple: every checker of every
    simulation returns one, and tuple construction is several times cheaper than a frozen
    dataclass's."""

    valid: Validity
    witness: tuple[int, ...] = ()
    explanation: str = ""
    judged: int = 0


class Tally:
    """Counts the cases a checker judged and keeps the first violation and first unknown.

    "First" is the order of the calls, or, for a checker that visits its cases out of history
    order (segment by segment), the least ``at`` it passes: the history index of the record
    that decided the case, so the finding is the one a walk in history order would keep."""

    __slots__ = ("_unknown", "_violation", "held", "unknowns", "violations")

    def __init__(self) -> None:
        self.held = 0
        self.violations = 0
        self.unknowns = 0
        self._violation: tuple[tuple[int, ...], str, int] | None = None
        self._unknown: tuple[tuple[int, ...], str, int] | None = None

    def hold(self) -> None:
        self.held += 1

    def violate(self, witness: Iterable[int], why: str, at: int = -1) -> None:
        self.violations += 1
        if self._violation is None or 0 <= at < self._violation[2]:
            self._violation = (tuple(sorted(set(witness))), why, at)

    def unknown(self, witness: Iterable[int], why: str, at: int = -1) -> None:
        self.unknowns += 1
        if self._unknown is None or 0 <= at < self._unknown[2]:
            self._unknown = (tuple(sorted(set(witness))), why, at)

    @property
    def judged(self) -> int:
        return self.held + self.violations + self.unknowns

    def finding(self, subject: str) -> Finding:
        """Fold the tally; ``subject`` names what was judged (e.g. 'landings')."""
        judged = self.judged
        if self._violation is not None:
            witness, why, _ = self._violation
            return Finding(Validity.INVALID, witness, _counted(why, self.violations, "violations"), judged)
        if self._unknown is not None:
            witness, why, _ = self._unknown
            return Finding(Validity.UNKNOWN, witness, _counted(why, self.unknowns, "undecided cases"), judged)
        key = (subject, judged)
        found = _VALID_FINDINGS.get(key)
        if found is None:
            found = Finding(Validity.VALID, (), f"{judged} {subject} checked, none violates", judged)
            if len(_VALID_FINDINGS) < _MEMO_LIMIT:
                _VALID_FINDINGS[key] = found
        return found


_MEMO_LIMIT = 4096
_VALID_FINDINGS: dict[tuple[str, int], Finding] = {}
"""A valid finding is a function of what was judged and how many: (subject, count) -> the one
Finding, kept (up to ``_MEMO_LIMIT`` of them) because most verdicts of every simulation are
valid ones whose counts recur; findings and verdicts are immutable, so sharing them is safe."""
_VALID_VERDICTS: dict[tuple[str, str], Verdict] = {}
"""(invariant name, explanation of a valid finding) -> the one Verdict, as above."""


def _counted(why: str, count: int, noun: str) -> str:
    return why if count == 1 else f"{why} (first of {count} {noun})"


Checker = Callable[[Index], Finding]
MachineFactory = Callable[[], Machine]


@dataclass(frozen=True, slots=True)
class Invariant:
    """One catalogue entry: a fixed name, a kind, one line of meaning and its checker.

    ``machine`` makes a fresh :class:`~checks.fused.Machine` of the checker, which the
    single pass feeds (:func:`checks.catalog.judge`); ``judge`` is the checker as a
    function of an index. A ported checker has both (its function runs its machine alone); a
    checker written against the index only has ``judge``, and runs after the pass over its index."""

    name: str
    kind: Kind
    meaning: str
    judge: Checker
    machine: MachineFactory | None = None
    tags: tuple[str, ...] = ()
    """What kind of promise it judges beyond its kind (:data:`OUTCOME_ORACLE`, :data:`ADR_PROMISE`)."""

    def check(self, history: Iterable[Op] | Index) -> Verdict:
        """Judge a history; a checker that raises yields UNKNOWN carrying the exception."""
        try:
            if self.machine is not None:
                records = history.history if isinstance(history, Index) else history
                machine = self.machine()
                ix, failed = run_pass(records, (machine,))
                if failed:
                    return self.unknown(failed[0])
                return self.verdict(machine.finish(ix))
            return self.verdict(self.judge(history if type(history) is Index else as_index(history)))
        except Exception as exc:  # a checker bug must never lose the history's verdicts
            return self.unknown(exc)

    def verdict(self, finding: Finding) -> Verdict:
        """The named verdict of a finding (valid ones shared, see ``_VALID_VERDICTS``)."""
        valid, witness, explanation, judged = finding
        if valid is not Validity.VALID or witness:
            return verdict_of(self.name, self.kind, valid, witness, explanation, judged)
        key = (self.name, explanation)
        verdict = _VALID_VERDICTS.get(key)
        if verdict is None or verdict.judged != judged or verdict.kind is not self.kind:
            verdict = verdict_of(self.name, self.kind, valid, witness, explanation, judged)
            if len(_VALID_VERDICTS) < _MEMO_LIMIT:
                _VALID_VERDICTS[key] = verdict
        return verdict

    def unknown(self, exc: BaseException) -> Verdict:
        why = f"checker raised {type(exc).__name__}: {exc}"
        return Verdict(self.name, self.kind, Validity.UNKNOWN, (), why)


OUTCOME_ORACLE = "outcome oracle"
"""Tag of an invariant that judges what the runtime tells its callers (an outcome, a count, a reason)."""
ADR_PROMISE = "ADR promise"
"""Tag of an invariant that judges an ADR promise no other invariant states."""

REGISTERED: dict[str, Invariant] = {}
"""Every invariant registered with :func:`invariant`, by name, in registration order: the catalogue
(:mod:`checks.catalog`) orders them."""

C = TypeVar("C", bound="type[Machine] | Checker")


def invariant(name: str, kind: Kind, meaning: str, *, tags: tuple[str, ...] = ()) -> Callable[[C], C]:
    """Register the decorated checker as invariant ``name``: its one declaration (name, kind, one line of
    meaning, tags), where the checker is defined. The checker is a :class:`~checks.fused.Machine` (the
    judging pass feeds a fresh one per history; its function form, the machine fed alone, is derived)
    or a function of an index (run after the pass, over the index it built)."""

    def register(checker: C) -> C:
        if name in REGISTERED:
            raise ValueError(f"invariant {name!r} is registered twice ({REGISTERED[name].judge} and {checker})")
        if isinstance(checker, type) and issubclass(checker, Machine):
            REGISTERED[name] = Invariant(name, kind, meaning, _alone(checker), checker, tags)
        else:
            REGISTERED[name] = Invariant(name, kind, meaning, checker, None, tags)  # type: ignore[arg-type]
        return checker

    return register


def unregister(name: str) -> None:
    """Forget a registered invariant (for a test that registers a toy one)."""
    del REGISTERED[name]


def _alone(machine: MachineFactory) -> Checker:
    def judge_alone(ix: Index) -> Finding:
        return run_alone(machine(), ix)

    return judge_alone


def run_alone(machine: Machine, ix: Index) -> Finding:
    """A ported checker as a function of an index: its machine fed alone by a pass over the index's
    history (the single pass of :func:`checks.catalog.judge` feeds every machine at once)."""
    fresh, failed = run_pass(ix.history, (machine,))
    if failed:
        raise failed[0]
    finding: Finding = machine.finish(fresh)
    return finding


__all__ = [
    "ADR_PROMISE",
    "OUTCOME_ORACLE",
    "REGISTERED",
    "Checker",
    "Finding",
    "Invariant",
    "MachineFactory",
    "Tally",
    "invariant",
    "run_alone",
    "unregister",
]
