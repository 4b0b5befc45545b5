"""TOML writing for plain nested data (a scenario's or a sweep configuration's ``model_dump()``).

The standard library reads TOML but cannot write it, so this wraps ``tomli_w``. The one thing a
dump holds that TOML cannot is None: every schema field that may be None defaults to it, so a
None (and, where asked, an empty list, the default of every list field) is simply left out.
Knows nothing of scenarios or sweeps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import tomli_w


def _pruned(value: Any, drop_empty: bool) -> Any:
    if isinstance(value, Mapping):
        return {
            k: _pruned(v, drop_empty)
            for k, v in value.items()
            if v is not None and not (drop_empty and isinstance(v, list | tuple) and not v)
        }
    if isinstance(value, list | tuple):
        return [_pruned(v, drop_empty) for v in value]
    return value


def dumps(data: Mapping[str, Any], *, drop_empty: bool = False) -> str:
    """``data`` as TOML, None values left out (and empty lists too with ``drop_empty``)."""
    return tomli_w.dumps(_pruned(data, drop_empty))
