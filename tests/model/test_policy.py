"""Policies and presets (model/policy.py): the ADR history as flags.

Consecutive presets differ exactly by the mechanisms the ADR between them added and the defects it
removed; the implementation defects fixed in passing are off in every preset.
"""

from __future__ import annotations

import dataclasses

import pytest

from model.errors import LeaselabError
from model.policy import (
    FLAG_DOCS,
    FLAG_NAMES,
    HEAD,
    PRESET_ALIASES,
    PRESET_DOCS,
    PRESETS,
    Policy,
    parse_flag_assignment,
    parse_flag_value,
    preset,
    preset_name,
    resolve_policy,
)

OFF_TO_ON = (False, True)
ON_TO_OFF = (True, False)

# ---- presets -----------------------------------------------------------------------------------


def test_presets_are_listed_oldest_first() -> None:
    assert list(PRESETS) == ["adr-104", "adr-111", "adr-112", "adr-122", "adr-141"]


def test_adr_111_adds_typed_effects_fail_closed_write_audit_and_the_strictest_unknown_name() -> None:
    assert PRESETS["adr-104"].differences(PRESETS["adr-111"]) == {
        "typed_effects": OFF_TO_ON,
        "fail_closed_write_audit": OFF_TO_ON,
        "unknown_tool_is_strictest": OFF_TO_ON,
    }


def test_adr_112_adds_the_write_fence_and_its_retry_refusal_with_kb9_present() -> None:
    assert PRESETS["adr-111"].differences(PRESETS["adr-112"]) == {
        "write_fence": OFF_TO_ON,
        "fence_blocks_retry": OFF_TO_ON,
        "kb9_fence_survives_requeue": OFF_TO_ON,
    }


def test_adr_122_only_clears_the_fence_on_requeue() -> None:
    assert PRESETS["adr-112"].differences(PRESETS["adr-122"]) == {"kb9_fence_survives_requeue": ON_TO_OFF}


def test_adr_141_leases_every_segment_dead_letters_payloadless_rows_and_audits_approvals() -> None:
    assert PRESETS["adr-122"].differences(PRESETS["adr-141"]) == {
        "writes_require_approval": OFF_TO_ON,
        "dead_letter_payloadless": OFF_TO_ON,
        "kb10_unleased_segments": ON_TO_OFF,
        "kb12_approval_not_audited": ON_TO_OFF,
    }


@pytest.mark.parametrize(
    "flag",
    [
        "kb1_finish_unguarded",
        "kb2_resume_position_by_count",
        "kb3_suspend_unguarded",
        "kb5_persist_before_renewal",
        "kb6_renew_trusts_changed_rows",
        "kb7_worker_settles_unguarded",
        "kb8_reaper_dispatch_failure_only_logged",
        "kb13_fallback_chain_unknown",
    ],
)
def test_a_defect_fixed_in_passing_is_off_in_every_preset(flag: str) -> None:
    assert [name for name, p in PRESETS.items() if getattr(p, flag)] == []


@pytest.mark.parametrize("flag", ["operation_deadline", "idempotency_keys"])
def test_no_preset_turns_a_proposal_on(flag: str) -> None:
    assert [name for name, p in PRESETS.items() if getattr(p, flag)] == []


def test_head_is_adr_141_and_the_field_defaults() -> None:
    assert preset("head") == PRESETS["adr-141"] == HEAD == Policy()
    assert PRESET_ALIASES == {"head": "adr-141"}


def test_every_preset_is_distinct() -> None:
    assert len(set(PRESETS.values())) == len(PRESETS)


def test_preset_name_finds_a_preset_and_none_for_a_modified_policy() -> None:
    assert preset_name(PRESETS["adr-112"]) == "adr-112"
    assert preset_name(HEAD.with_flags(kb1_finish_unguarded=True)) is None


# ---- documentation -----------------------------------------------------------------------------


def test_every_flag_has_a_doc_line_and_every_doc_line_a_flag() -> None:
    assert list(FLAG_DOCS) == list(FLAG_NAMES) == [f.name for f in dataclasses.fields(Policy)]


def test_every_preset_has_a_doc_line_and_every_doc_line_a_preset() -> None:
    assert list(PRESET_DOCS) == list(PRESETS)


def test_every_doc_is_one_nonempty_line() -> None:
    docs = [*FLAG_DOCS.values(), *PRESET_DOCS.values()]
    assert all(doc.strip() and "\n" not in doc for doc in docs)


def test_every_flag_is_a_boolean() -> None:
    assert all(isinstance(value, bool) for value in HEAD.as_dict().values())


# ---- unknown names -----------------------------------------------------------------------------


def test_an_unknown_policy_is_an_error_listing_the_valid_policies() -> None:
    with pytest.raises(LeaselabError) as caught:
        preset("adr-999")
    message = str(caught.value)
    assert "unknown policy 'adr-999'" in message
    assert all(name in message for name in [*PRESETS, *PRESET_ALIASES])


def test_an_unknown_flag_is_an_error_naming_the_nearest_flag_and_where_all_are_listed() -> None:
    with pytest.raises(LeaselabError) as caught:
        HEAD.with_flags(write_fences=False)
    message = str(caught.value)
    assert "unknown flag 'write_fences'" in message
    assert f"did you mean 'write_fence'? ({len(FLAG_NAMES)} in all: `leaselab policies`)" in message


def test_an_unknown_flag_far_from_every_name_says_where_the_flags_are_listed() -> None:
    with pytest.raises(LeaselabError) as caught:
        HEAD.with_flags(zzzzzzzz=False)
    assert str(caught.value).endswith(f"({len(FLAG_NAMES)} in all: `leaselab policies`)")
    assert "did you mean" not in str(caught.value)


def test_resolve_policy_rejects_an_unknown_flag() -> None:
    with pytest.raises(LeaselabError, match="unknown flag 'nope'"):
        resolve_policy("head", {"nope": True})


def test_parse_flag_value_rejects_an_unknown_flag_before_its_value() -> None:
    with pytest.raises(LeaselabError, match="unknown flag 'nope'"):
        parse_flag_value("nope", "maybe")


@pytest.mark.parametrize("text", ["idempotency_keys=maybe", "nope=true", "idempotency_keys"])
def test_a_bad_flag_option_names_the_option_the_user_typed(text: str) -> None:
    with pytest.raises(LeaselabError) as caught:
        parse_flag_assignment(text)
    assert caught.value.field == "--flag"


def test_a_bad_flag_value_in_a_file_names_the_flag_as_its_table_has_it() -> None:
    with pytest.raises(LeaselabError) as caught:
        parse_flag_value("idempotency_keys", "maybe", source="s.toml")
    assert (caught.value.file, caught.value.field) == ("s.toml", "idempotency_keys")


def test_a_policy_error_is_one_line() -> None:
    with pytest.raises(LeaselabError) as caught:
        preset("x")
    assert "\n" not in str(caught.value)


# ---- flag parsing ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["on", "true", "1", "yes", "ON", " True "])
def test_a_flag_value_of_on_true_or_1_is_true(text: str) -> None:
    assert parse_flag_value("write_fence", text) is True


@pytest.mark.parametrize("text", ["off", "false", "0", "no", "OFF", " False "])
def test_a_flag_value_of_off_false_or_0_is_false(text: str) -> None:
    assert parse_flag_value("write_fence", text) is False


@pytest.mark.parametrize("value", [True, False])
def test_a_boolean_flag_value_passes_through(value: bool) -> None:
    assert parse_flag_value("write_fence", value) is value


def test_a_bad_flag_value_is_an_error_naming_the_flag_and_the_accepted_values() -> None:
    with pytest.raises(LeaselabError) as caught:
        parse_flag_value("write_fence", "maybe")
    message = str(caught.value)
    assert "write_fence" in message and "'maybe'" in message and "on/off" in message


def test_a_flag_assignment_is_name_equals_value() -> None:
    assert parse_flag_assignment("write_fence=off") == ("write_fence", False)
    assert parse_flag_assignment(" kb9_fence_survives_requeue = on") == ("kb9_fence_survives_requeue", True)


def test_a_flag_assignment_without_equals_is_an_error() -> None:
    with pytest.raises(LeaselabError, match="is not NAME=VALUE"):
        parse_flag_assignment("write_fence")


def test_resolve_policy_applies_overrides_to_a_preset_name_or_a_policy() -> None:
    by_name = resolve_policy("adr-122", {"kb9_fence_survives_requeue": "on"})
    by_policy = resolve_policy(PRESETS["adr-122"], {"kb9_fence_survives_requeue": True})
    assert by_name == by_policy == PRESETS["adr-112"]


def test_resolve_policy_without_overrides_is_the_preset() -> None:
    assert resolve_policy("adr-104") is PRESETS["adr-104"]


def test_with_flags_returns_a_new_policy_and_leaves_the_preset_alone() -> None:
    changed = HEAD.with_flags(write_fence=False)
    assert (changed.write_fence, HEAD.write_fence) == (False, True)
