"""pydantic's first validation error as one short line: the field, what is wrong and what is allowed.

Every schema a user writes (scenarios, sweep configurations, counterexample files) reports bad
input through :func:`validation_error`, so the three speak alike: ``runs.0.count: must be >= 1,
got 0``; ``world.workers: must be an integer, not a boolean``; ``faults.audit.probabilty: unknown
key; allowed: probability, outages``. pydantic's own texts list every literal in full (up to 150
characters for the failure classes) and never say which keys a table allows; these do, within
the length :class:`model.errors.LeaselabError` keeps. Knows pydantic's error types, no schema.
"""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Mapping
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from model.errors import LeaselabError, choices, shown

_FIELD = re.compile(r"[a-z_]+(\.[a-z0-9_]+)*")
_QUOTED = re.compile(r"'([^']*)'")
_KINDS = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array", dict: "a table"}
_TYPE_NEEDS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "an array",
    "tuple_type": "an array",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
}
_BOUNDS = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}
_BOUND_KEYS = {"greater_than_equal": "ge", "greater_than": "gt", "less_than_equal": "le", "less_than": "lt"}


def kind_of(value: object) -> str:
    """What a TOML value is, in TOML's words ("a boolean", "a table")."""
    return next((name for t, name in _KINDS.items() if isinstance(value, t)), type(value).__name__)


def validation_error(
    error: ValidationError, *, model: type[BaseModel], source: str, hint: str = "", prefix: tuple[str, ...] = ()
) -> LeaselabError:
    """The first error of ``error`` (raised validating ``model``) as a LeaselabError naming ``source``;
    ``prefix`` is where the validated mapping sits in the file (``("profile",)``)."""
    first = _first(error)
    loc = tuple(p for p in first.get("loc", ()) if not (isinstance(p, str) and "[" in p))  # union member tags
    field, what = describe(first, model=model, loc=loc)
    return LeaselabError(what, file=source, field=".".join((*prefix, field)) if field else ".".join(prefix), hint=hint)


def _first(error: ValidationError) -> Mapping[str, Any]:
    """The error to report: pydantic's first, except that a key missing from a table that also holds
    an unknown key is reported as the unknown key (``[[gird]]``: the typo, not the missing ``grid``)."""
    errors = error.errors()
    first = errors[0]
    if first.get("type") == "missing":
        parent = tuple(first.get("loc", ()))[:-1]
        for other in errors:
            if other.get("type") == "extra_forbidden" and tuple(other.get("loc", ()))[:-1] == parent:
                return other
    return first


def describe(error: Mapping[str, Any], *, model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[str, str]:
    """(field path, message) of one pydantic error."""
    kind = str(error.get("type", ""))
    ctx: Mapping[str, Any] = error.get("ctx") or {}
    value = error.get("input")
    field = ".".join(str(p) for p in loc)
    if kind == "extra_forbidden":
        allowed = allowed_keys(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1) if loc else []
        if close:
            return field, f"unknown key; did you mean '{close[0]}'?"
        return field, "unknown key" + (f"; allowed: {choices(allowed, limit=80)}" if allowed else "")
    if kind == "missing":
        return field, "too few entries" if loc and isinstance(loc[-1], int) else "required field missing"
    if kind in _TYPE_NEEDS:
        return field, f"must be {_TYPE_NEEDS[kind]}, not {kind_of(value)}"
    if kind == "finite_number":
        return field, f"must be a finite number, not {shown(value)}"
    if kind in _BOUNDS:
        return field, f"must be {_BOUNDS[kind]} {ctx.get(_BOUND_KEYS[kind])}, got {shown(value)}"
    if kind == "literal_error":
        names = _QUOTED.findall(str(ctx.get("expected", "")))
        return field, f"must be one of: {choices(names, limit=80)}"
    if kind == "string_too_short":
        minimum = ctx.get("min_length", 1)
        return field, "must not be empty" if minimum == 1 else f"needs at least {minimum} characters"
    if kind == "string_too_long":
        return field, f"at most {ctx.get('max_length')} characters"
    if kind == "string_pattern_mismatch":
        return field, f"{shown(value)} does not match {ctx.get('pattern')}"
    if kind == "too_short":
        return field, f"needs at least {ctx.get('min_length')} entries, has {ctx.get('actual_length')}"
    if kind == "too_long":
        return field, f"at most {ctx.get('max_length')} entries"
    message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
    head, sep, rest = message.partition(": ")
    if sep and _FIELD.fullmatch(head):  # a validator that knows the deeper field says "field.path: message"
        return ".".join(p for p in (field, head) if p), rest
    return field, message


def allowed_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys the table at ``loc`` of ``model`` allows ([] when it is not a model's table)."""
    current: Any = model
    for part in loc:
        current = _unwrapped(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            info = current.model_fields.get(str(part))
            if info is None:
                return []
            current = info.annotation
            continue
        args = get_args(current)
        if get_origin(current) in (list, tuple) and args and isinstance(part, int):
            current = args[min(part, len(args) - 1)]
        else:
            return []
    current = _unwrapped(current)
    return list(current.model_fields) if isinstance(current, type) and issubclass(current, BaseModel) else []


def _unwrapped(annotation: Any) -> Any:
    """``annotation`` without Annotated metadata and without None in a union (a model when it has one)."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(annotation) if a is not type(None)]
            models = [a for a in members if isinstance(a, type) and issubclass(a, BaseModel)]
            annotation = models[0] if models else members[0]
        else:
            return annotation
