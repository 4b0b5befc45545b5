"""Words and numbers for people: the checker's sentence tied to the swim lanes, floats rounded, counts as words.

A checker's explanation cites history records by number ("settled completed at 54 after the audit
... failed at 40") while the swim lanes' axis is in seconds. :func:`cited_records` finds the cited
numbers (the lanes ring and label them ``#54``) and :func:`annotate` writes each as ``#54 (57.20 s)``,
so text, lanes and the text timeline (which prints ``#54`` on every line) meet. The checkers write
their sentences for tests and tools, with Python's own number format; :func:`rounded` gives a long
float three significant digits or two decimals for reading, leaving integers and ids alone.

Knows only the phrasing of :mod:`checks`' explanations: a record is cited as ``at N``,
``of N`` or ``and N`` (never ``first of N``, the count of further violations).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

_CITED = re.compile(r"(?<!first )\b(at|of|and) (\d+)\b(?![.\d])")
_LONG_FLOAT = re.compile(r"(?<![\w.])(-?\d+\.\d{3,})(?![\w.])")


def cited_records(text: str, known: Iterable[int] | None = None) -> list[int]:
    """The record numbers ``text`` cites, in order of first mention; only those in ``known`` when given."""
    keep = None if known is None else set(known)
    out: list[int] = []
    for match in _CITED.finditer(text):
        index = int(match.group(2))
        if index not in out and (keep is None or index in keep):
            out.append(index)
    return out


def number(value: float) -> str:
    """A float for reading: two decimals from 1 up, three significant digits below."""
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.3g}"


def rounded(text: str) -> str:
    """``text`` with every float of three or more decimals rounded for reading (see :func:`number`)."""
    return _LONG_FLOAT.sub(lambda m: number(float(m.group(1))), text)


def annotate(text: str, times: Mapping[int, float], witness: Iterable[int] = ()) -> str:
    """The explanation for people: each cited record that ``times`` knows written ``#n (t s)``, floats
    rounded; witness records the sentence does not cite are listed after it, so every record ringed on
    the lanes is named in the text."""

    def cite(match: re.Match[str]) -> str:
        index = int(match.group(2))
        if index not in times:
            return match.group(0)
        return f"{match.group(1)} #{index} ({times[index]:.2f} s)"

    cited = set(cited_records(text, times))
    rest = [f"#{i} ({times[i]:.2f} s)" for i in sorted(set(witness)) if i in times and i not in cited]
    more = f" (witness records {', '.join(rest)})" if rest else ""
    return rounded(_CITED.sub(cite, text)) + more


def counts(mapping: Mapping[str, Any]) -> str:
    """``{'cancelled': 2, 'completed': 3}`` as 'cancelled 2, completed 3' (zeros left out); 'none' when empty."""
    parts = [f"{key} {value:,}" if isinstance(value, int) else f"{key} {value}" for key, value in mapping.items()]
    parts = [part for part, value in zip(parts, mapping.values(), strict=True) if value]
    return ", ".join(parts) or "none"


def fault_text(text: str) -> str:
    """A fault line ('<request> <family> <kind> <value>') with its value to 3 significant digits for
    reading; the counterexample file keeps the exact value for replay."""
    parts = str(text).split()
    if len(parts) != 4:
        return str(text)
    try:
        value = float(parts[3])
    except ValueError:
        return str(text)
    return " ".join([*parts[:3], readable(value)])


def readable(value: float) -> str:
    """A number for reading, never in scientific notation: 3 significant digits below 1,000 (``1.71``,
    ``0.000123``), whole above (``1480``, ``-2699``)."""
    if abs(value) >= 1000:
        return f"{value:.0f}"
    text = f"{value:.3g}"
    if "e" in text:  # below 0.0001
        text = f"{value:.10f}".rstrip("0").rstrip(".") or "0"
    return text
