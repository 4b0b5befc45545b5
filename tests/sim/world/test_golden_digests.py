"""Golden digests: the histories of a fixed seed list of every library scenario, under adr-104 and
head, are exactly those recorded here. A speed change must not alter any history; a change that
must (a new record or field) regenerates the table with ``benchmarks/golden.py`` in one commit that
says why."""

from __future__ import annotations

import pytest

from benchmarks.golden import golden

GOLDEN = {
    "abandoned_interactive": "c395b2f8e087c7f7",
    "approval_write_on_resume": "51efc0ca2464d3ba",
    "audit_blip_read_only": "2331a6213c62aebd",
    "audit_failure_after_write": "18bcd01364a30e79",
    "cancel_mid_run": "25d666153ce2ae87",
    "default": "9ae7fc33f99cab23",
    "deploy_between_attempts": "a40776811806f18f",
    "duplicate_wakeup": "fe8b6a9987cf04c6",
    "happy_path": "1f5ecbcd6546fafb",
    "reaper_races_heartbeat": "89217e01e81db3ef",
    "same_second_renewals": "83403cf7b07b296b",
    "single_run": "4b97cfa624bbbc97",
    "tool_outlives_lease": "2812cfb7e2817cf3",
    "worker_crash_mid_write": "31f2b5d8e7dfa548",
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_library_scenario_replays_its_golden_digests(name: str) -> None:
    assert golden(name) == GOLDEN[name]
