"""The Hypothesis settings profiles of tests/conftest.py are registered and the chosen one is loaded."""

from __future__ import annotations

import os

from hypothesis import settings

EXPECTED: dict[str, dict[str, object]] = {
    "dev": {"max_examples": 50},
    "ci": {"max_examples": 100, "deadline": None, "derandomize": True, "database": None},
    "nightly": {"max_examples": 2000, "deadline": None},
}


def test_each_profile_sets_the_documented_effort() -> None:
    for name, expected in EXPECTED.items():
        profile = settings.get_profile(name)
        assert {key: getattr(profile, key) for key in expected} == expected, name


def test_the_profile_named_by_hypothesis_profile_is_loaded() -> None:
    name = os.environ.get("HYPOTHESIS_PROFILE", "dev")
    assert settings().max_examples == EXPECTED[name]["max_examples"]
