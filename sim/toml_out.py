"""A minimal TOML writer for plain nested data (a scenario's ``model_dump()``).

The standard library reads TOML but cannot write it; sweeps write the scenario a
counterexample ran (with its latency and transport overrides) so that ``leaselab replay``
reproduces it exactly. Handles what a dump holds: str, bool, int, float, None (omitted:
TOML has no null, and every schema field that may be None defaults to it), lists, tuples
and nested mappings (tables, arrays of tables). Knows nothing of scenarios.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"TOML cannot hold {value!r} here")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in value.items() if v is not None) + " }"
    raise TypeError(f"cannot write {value!r} as TOML")


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list | tuple) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _emit(lines: list[str], path: Sequence[str], table: Mapping[str, Any], header: str) -> None:
    scalars = [(k, v) for k, v in table.items() if not isinstance(v, Mapping) and not _is_table_array(v)]
    if header:
        lines += ["", header]
    lines += [f"{k} = {_value(v)}" for k, v in scalars if v is not None]
    for k, v in table.items():
        if isinstance(v, Mapping):
            name = ".".join((*path, k))
            _emit(lines, (*path, k), v, f"[{name}]")
    for k, v in table.items():
        if _is_table_array(v):
            name = ".".join((*path, k))
            for item in v:
                _emit(lines, (*path, k), item, f"[[{name}]]")


def dumps(data: Mapping[str, Any]) -> str:
    lines: list[str] = []
    _emit(lines, (), data, "")
    return "\n".join(lines).lstrip("\n") + "\n"
