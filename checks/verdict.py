"""Verdicts of the invariant checkers and how they compose (Jepsen style).

A verdict says whether one named property held over one history: ``valid`` is true,
false or unknown, ``witness`` names the history indexes of the records that show it,
``explanation`` says why in one sentence. Verdicts compose by "false beats unknown
beats true". Pure values; this module knows nothing of the history's contents.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any


class Validity(Enum):
    """Whether a property held. The value is json-friendly: true, false or "unknown"."""

    VALID = True
    INVALID = False
    UNKNOWN = "unknown"

    @property
    def json(self) -> bool | str:
        value: bool | str = self.value
        return value


class Kind(StrEnum):
    """The temporal kind of a property (Stateright's vocabulary)."""

    ALWAYS = "always"
    EVENTUALLY = "eventually"
    SOMETIMES = "sometimes"


@dataclass(frozen=True, slots=True)
class Verdict:
    """The judgement of one property over one history."""

    name: str
    kind: Kind
    valid: Validity
    witness: tuple[int, ...] = ()
    explanation: str = ""
    judged: int = 0
    """How many cases the checker judged (held + violated + undecided): a valid verdict over
    zero cases is vacuous, and claims assert a minimum of it."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind.value,
            "valid": self.valid.json,
            "witness": list(self.witness),
            "explanation": self.explanation,
            "judged": self.judged,
        }


_new = object.__new__
_set_name, _set_kind, _set_valid, _set_witness, _set_explanation, _set_judged = (
    getattr(Verdict, name).__set__ for name in ("name", "kind", "valid", "witness", "explanation", "judged")
)


def verdict_of(
    name: str, kind: Kind, valid: Validity, witness: tuple[int, ...], explanation: str, judged: int
) -> Verdict:
    """``Verdict(name, kind, valid, witness, explanation, judged)``, built through the slots
    directly: a frozen dataclass's ``__init__`` pays an ``object.__setattr__`` call per field,
    and the catalogue builds a verdict per invariant of every simulation."""
    verdict: Verdict = _new(Verdict)
    _set_name(verdict, name)
    _set_kind(verdict, kind)
    _set_valid(verdict, valid)
    _set_witness(verdict, witness)
    _set_explanation(verdict, explanation)
    _set_judged(verdict, judged)
    return verdict


_RANK = {Validity.VALID: 0, Validity.UNKNOWN: 1, Validity.INVALID: 2}


def compose(verdicts: Iterable[Verdict | Validity]) -> Validity:
    """Fold verdicts: false beats unknown beats true; nothing at all is valid."""
    worst = Validity.VALID
    for item in verdicts:
        validity = item.valid if isinstance(item, Verdict) else item
        if _RANK[validity] > _RANK[worst]:
            worst = validity
            if worst is Validity.INVALID:
                break
    return worst


__all__ = ["Kind", "Validity", "Verdict", "compose", "verdict_of"]
