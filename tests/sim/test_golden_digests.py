"""Golden digests: the histories of a fixed seed list of every library scenario, under adr-104 and
head, are exactly those recorded here. A speed change must not alter any history; a change that
must (a new record or field) regenerates the table with ``benchmarks/golden.py`` in one commit that
says why."""

from __future__ import annotations

import pytest

from benchmarks.golden import golden

GOLDEN = {
    "abandoned_interactive": "95a6a35c423dedcc",
    "approval_write_on_resume": "aba18191892003e5",
    "audit_blip_read_only": "d6ffb8241dee0570",
    "audit_failure_after_write": "03c31d8bb159f7b5",
    "cancel_mid_run": "5ec8578725465436",
    "default": "889322c7e95fde14",
    "deploy_between_attempts": "a880352c3bbe8111",
    "duplicate_wakeup": "8853779b15a3d5dc",
    "happy_path": "42905bfd913453bb",
    "reaper_races_heartbeat": "73cc955444a0724f",
    "same_second_renewals": "f45d0e8ad3eafb48",
    "single_run": "9f138937897ec244",
    "tool_outlives_lease": "6c6716ba1559776a",
    "worker_crash_mid_write": "f01eb3932840e180",
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_library_scenario_replays_its_golden_digests(name: str) -> None:
    assert golden(name) == GOLDEN[name]
