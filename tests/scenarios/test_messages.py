"""``scenarios.messages``: pydantic's errors in one short line naming the field and what is allowed,
on hand-built models (the schemas' own messages are tested with their loaders)."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scenarios.messages import allowed_keys, describe, kind_of, validation_error
from scenarios.schema import Scenario


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    probability: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0
    colour: Literal["red", "green", "blue", "cyan", "magenta", "yellow", "black", "white", "orange"] = "red"


class Outer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    name: str
    count: Annotated[int, Field(ge=1)] = 1
    inner: Inner = Inner()
    items: list[Inner] = Field(default_factory=list)
    maybe: Inner | None = None


def message(data: object) -> tuple[str, str]:
    with pytest.raises(ValidationError) as caught:
        Outer.model_validate(data)
    error = validation_error(caught.value, model=Outer, source="f.toml")
    assert error.file == "f.toml"
    return error.field, error.what


@pytest.mark.parametrize(
    ("data", "field", "what"),
    [
        ({"name": "x", "count": True}, "count", "must be an integer, not a boolean"),
        ({"name": "x", "count": "3"}, "count", "must be an integer, not a string"),
        ({"name": "x", "count": 0}, "count", "must be >= 1, got 0"),
        ({"name": 5}, "name", "must be a string, not an integer"),
        ({"name": "x", "inner": 3}, "inner", "must be a table, not an integer"),
        ({"name": "x", "inner": {"probability": float("nan")}}, "inner.probability", "must be a finite number, not"),
        ({"name": "x", "inner": {"probability": 2}}, "inner.probability", "must be <= 1.0, got 2"),
        ({"name": "x", "items": [{}, {"probabilty": 1}]}, "items.1.probabilty", "unknown key; did you mean 'probabil"),
        ({"name": "x", "maybe": {"zz": 1}}, "maybe.zz", "unknown key; allowed: probability, colour"),
        ({"name": "x", "zz": 1}, "zz", "unknown key; allowed: name, count, inner, items, maybe"),
        ({}, "name", "required field missing"),
        ({"nmae": "x"}, "nmae", "unknown key; did you mean 'name'?"),  # the typo, not the missing key
        (
            {"name": "x", "inner": {"colour": "teal"}},
            "inner.colour",
            "must be one of: red, green, blue, cyan, magenta, yellow, black, white, orange",
        ),
    ],
)
def test_each_kind_of_error_is_a_short_sentence_naming_what_is_allowed(data: object, field: str, what: str) -> None:
    got_field, got_what = message(data)
    assert got_field == field and got_what.startswith(what), (got_field, got_what)


def test_a_long_list_of_choices_is_summarised() -> None:
    with pytest.raises(ValidationError) as caught:
        Scenario.model_validate({"name": "x", "runs": [{}], "faults": {"provider": {"classes": ["x"]}}})
    what = validation_error(caught.value, model=Scenario, source="s").what
    assert what == "must be one of: connection, rateLimit, serverError, circuitOpen, auth, ... (29 in all)"


def test_a_validator_naming_a_deeper_field_moves_it_into_the_field() -> None:
    error = {"type": "value_error", "loc": ("runs", 0), "msg": "Value error, arrival_s: must be [low, high]"}
    assert describe(error, model=Scenario, loc=("runs", 0)) == ("runs.0.arrival_s", "must be [low, high]")


def test_allowed_keys_follow_lists_optionals_and_nested_models() -> None:
    assert allowed_keys(Scenario, ("faults", "audit")) == ["probability", "outages"]
    assert allowed_keys(Scenario, ("runs", 3))[:3] == ["kind", "count", "arrival_s"]
    assert allowed_keys(Outer, ("maybe",)) == ["probability", "colour"]
    assert allowed_keys(Outer, ("name",)) == [] and allowed_keys(Outer, ("nothing", "here")) == []


def test_kinds_are_toml_words() -> None:
    assert [kind_of(v) for v in (True, 1, 1.5, "s", [], {})] == [
        "a boolean",
        "an integer",
        "a number",
        "a string",
        "an array",
        "a table",
    ]
