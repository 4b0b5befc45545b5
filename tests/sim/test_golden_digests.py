"""Golden digests: the histories of a fixed seed list of every library scenario, under adr-104 and
head, are exactly those recorded here. A speed change must not alter any history; a change that
must (a new record or field) regenerates the table with ``benchmarks/golden.py`` in one commit that
says why."""

from __future__ import annotations

import pytest

from benchmarks.golden import golden

GOLDEN = {
    "abandoned_interactive": "9e3186e6c973d241",
    "approval_write_on_resume": "63ddf1292dda9cd6",
    "audit_blip_read_only": "31bc0c1002d8a169",
    "audit_failure_after_write": "f9169226cce22f76",
    "cancel_mid_run": "969e5113aab04195",
    "default": "174e5f1f252dfe82",
    "deploy_between_attempts": "a0dd25349af38180",
    "duplicate_wakeup": "2a567a6e6552cbab",
    "happy_path": "042967a27edeb941",
    "reaper_races_heartbeat": "73d64c0b0610e640",
    "same_second_renewals": "fb64b2aa26e2a2a9",
    "single_run": "6d68e47e764330f3",
    "tool_outlives_lease": "8a30e83edb8ab97e",
    "worker_crash_mid_write": "c36db1408b400fcf",
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_library_scenario_replays_its_golden_digests(name: str) -> None:
    assert golden(name) == GOLDEN[name]
