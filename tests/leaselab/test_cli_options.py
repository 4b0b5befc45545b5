"""``leaselab.options.policy_from_cli``: a preset name plus ``NAME=VALUE`` flag overrides."""

from __future__ import annotations

import pytest

from leaselab.options import policy_from_cli
from model.errors import LeaselabError
from model.policy import FLAG_NAMES, HEAD, PRESETS


def test_a_preset_name_without_flags_is_that_preset() -> None:
    assert policy_from_cli("adr-112", []) == PRESETS["adr-112"]


def test_the_head_alias_is_accepted() -> None:
    assert policy_from_cli("head", []) == HEAD


def test_flag_assignments_override_the_preset() -> None:
    policy = policy_from_cli("adr-122", ["kb9_fence_survives_requeue=on"])
    assert policy == PRESETS["adr-112"]


def test_a_later_assignment_of_the_same_flag_wins() -> None:
    assert policy_from_cli("head", ["write_fence=off", "write_fence=on"]).write_fence is True


def test_an_unknown_policy_is_a_one_line_error_listing_the_valid_policies() -> None:
    with pytest.raises(LeaselabError) as caught:
        policy_from_cli("adr-999", [])
    message = str(caught.value)
    assert "\n" not in message
    assert "unknown policy 'adr-999'" in message
    assert all(name in message for name in [*PRESETS, "head"])


def test_an_unknown_flag_is_a_one_line_error_naming_the_nearest_and_where_all_are() -> None:
    with pytest.raises(LeaselabError) as caught:
        policy_from_cli("head", ["write_fences=off"])
    message = str(caught.value)
    assert "\n" not in message
    assert "unknown flag 'write_fences'" in message
    assert f"did you mean 'write_fence'? ({len(FLAG_NAMES)} in all: `leaselab policies`)" in message


def test_a_bad_flag_value_is_an_error() -> None:
    with pytest.raises(LeaselabError, match="needs a boolean, got 'maybe'"):
        policy_from_cli("head", ["write_fence=maybe"])


def test_a_flag_without_a_value_is_an_error() -> None:
    with pytest.raises(LeaselabError, match="is not NAME=VALUE"):
        policy_from_cli("head", ["write_fence"])
