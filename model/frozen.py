"""A faster ``__init__`` for the frozen slotted dataclasses the runtime builds per request.

A frozen dataclass's generated ``__init__`` stores each field through
``object.__setattr__`` (its own ``__setattr__`` refuses). The runtime builds several such
values per request (the request, its transition, steps, events), so that path is a
noticeable share of a simulation. :func:`fast_init` replaces the generated ``__init__``
with one that stores each field through its slot descriptor: the same parameters, the
same defaults, the same instance; the class stays frozen afterwards. Pure Python, no I/O.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    """Apply above ``@dataclass(frozen=True, slots=True)``; only for plain fields (every field
    in ``__init__``, positional, no default factory) and no ``__post_init__``."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if not getattr(cls, "__slots__", None) and fields:
        raise TypeError(f"{cls.__name__}: fast_init needs a slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: fast_init does not run __post_init__")
    scope: dict[str, Any] = {}
    params, body = [], []
    for f in fields:
        if not f.init or f.kw_only or f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: fast_init supports plain fields only")
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            scope[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        scope[f"_set_{f.name}"] = getattr(cls, f.name).__set__  # the slot's member descriptor
        body.append(f"    _set_{f.name}(self, {f.name})\n")
    source = f"def __init__(self{''.join(', ' + p for p in params)}):\n" + ("".join(body) or "    pass\n")
    exec(source, scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
