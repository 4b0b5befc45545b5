"""What an entry point returned, in a form a history record can hold.

The runtime's outcomes are enums and small frozen dataclasses (the reaper's report of a tick);
a record holds plain values, so each is flattened here once per segment. Knows nothing of the
world; shared by the simulated processes and the sync transport's nested segments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from enum import Enum
from typing import Any


def outcome_value(outcome: Any) -> Any:
    """A history-friendly form of what an entry point returned (an enum's value, a report's fields)."""
    flatten = _FLATTEN.get(type(outcome))
    if flatten is not None:
        flat = flatten(outcome)
        if _ATOMS.issuperset(map(type, flat.values())):  # only atoms: what asdict returns, without its deep copy
            return flat
    elif isinstance(outcome, Enum):
        return outcome._value_
    if dataclasses.is_dataclass(outcome) and not isinstance(outcome, type):
        _FLATTEN.setdefault(type(outcome), _flattener(tuple(f.name for f in dataclasses.fields(outcome))))
        return dataclasses.asdict(outcome)
    return outcome


def _flattener(names: tuple[str, ...]) -> Callable[[Any], dict[str, Any]]:
    """``lambda o: {name: o.name, ...}`` for these field names, generated once per dataclass."""
    source = "def flat(o):\n    return {" + ", ".join(f"{n!r}: o.{n}" for n in names) + "}\n"
    scope: dict[str, Any] = {}
    exec(source, scope)
    flat: Callable[[Any], dict[str, Any]] = scope["flat"]
    return flat


_ATOMS = frozenset({int, str, float, bool, type(None)})
_FLATTEN: dict[type, Callable[[Any], dict[str, Any]]] = {}
"""A flat-dict builder per dataclass outcome seen so far: most (the reaper's report, every tick)
hold only atoms, whose ``asdict`` is exactly that dict; ``asdict``'s recursion and deep copy cost
more than the rest of a reaper tick."""
