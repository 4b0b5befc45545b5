"""Fault scripts: the replayable unit of a found violation, as values and as text.

A :class:`Fault` fires one fault of one family at one global request index. Its text
form ``"<at> <family> <kind> <value>"`` is what counterexample files store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from model.errors import LeaselabError, choices, shown
from scenarios.families import FAMILIES, FAULT_KINDS, fault_value_problem
from scenarios.limits import MAX_REQUEST_INDEX


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault at one request: the replayable unit of a fault script."""

    at: int
    family: str
    kind: str
    value: float = 0.0
    anchor: str = field(default="", compare=False)
    """Where it struck, as ``run/RequestType/n`` (the n-th such request of that run)."""

    def text(self) -> str:
        return f"{self.at} {self.family} {self.kind} {self.value!r}"

    def anchor_key(self) -> tuple[str, str, int]:
        run, rtype, nth = self.anchor.rsplit("/", 2)
        return run, rtype, int(nth)


def parse_fault(line: str, *, source: str = "", field: str = "faults") -> Fault:
    """One fault from ``"<at> <family> <kind> <value>"``: ``at`` a request index from 0 to
    :data:`MAX_REQUEST_INDEX`, ``value`` finite and in its family's range (:data:`FAULT_VALUES`)."""
    parts = line.split()
    if len(parts) != 4:
        what = f"fault {shown(line, 40)} is not '<at> <family> <kind> <value>'"
        raise LeaselabError(what, file=source, field=field)
    at, family, kind, value = parts
    if family not in FAMILIES:
        what = f"family {shown(family, 16)} must be one of: {choices(FAMILIES, limit=60)}"
        raise LeaselabError(what, file=source, field=field)
    if kind not in FAULT_KINDS[family]:
        what = f"{family} kind must be one of: {choices(FAULT_KINDS[family], limit=60)}"
        raise LeaselabError(what, file=source, field=field)
    if not at.isdecimal() or not at.isascii() or int(at) > MAX_REQUEST_INDEX:
        what = f"request index {shown(at, 16)} must be a whole number from 0 to {MAX_REQUEST_INDEX:,}"
        raise LeaselabError(what, file=source, field=field)
    try:
        number = float(value)
    except ValueError:
        raise LeaselabError(f"value {shown(value, 16)} is not a number", file=source, field=field) from None
    problem = fault_value_problem(family, number)
    if problem is not None:
        raise LeaselabError(problem, file=source, field=field)
    return Fault(int(at), family, kind, number)


def parse_script(lines: Sequence[str], *, source: str = "", field: str = "faults") -> list[Fault]:
    """Faults from their text form ``"<at> <family> <kind> <value>"``; an error names ``field.<i>``."""
    return [parse_fault(line, source=source, field=f"{field}.{i}") for i, line in enumerate(lines)]
