"""Fault scripts: the replayable unit of a found violation, as values and as text.

A :class:`Fault` fires one fault of one family at one global request index. Its text
form ``"<at> <family> <kind> <value>"`` is what counterexample files store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from model.errors import LeaselabError
from scenarios.schema import FAMILIES, FAULT_KINDS


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
    parts = line.split()
    if len(parts) != 4:
        raise LeaselabError(f"fault '{line}' is not '<at> <family> <kind> <value>'", file=source, field=field)
    at, family, kind, value = parts
    if family not in FAMILIES:
        raise LeaselabError(
            f"unknown fault family '{family}'", file=source, field=field, hint="valid: " + ", ".join(FAMILIES)
        )
    if kind not in FAULT_KINDS[family]:
        raise LeaselabError(
            f"fault '{line}': kind '{kind}' is not one of {', '.join(FAULT_KINDS[family])}", file=source, field=field
        )
    try:
        return Fault(int(at), family, kind, float(value))
    except ValueError:
        raise LeaselabError(f"fault '{line}' has a bad number", file=source, field=field) from None


def parse_script(lines: Sequence[str], *, source: str = "") -> list[Fault]:
    """Faults from their text form ``"<at> <family> <kind> <value>"``."""
    return [parse_fault(line, source=source) for line in lines]
