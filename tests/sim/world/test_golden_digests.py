"""Golden digests: the histories of a fixed seed list of every library scenario, under adr-104 and
head, are exactly those recorded here. A speed change must not alter any history; a change that
must (a new record or field) regenerates the table with ``benchmarks/golden.py`` in one commit that
says why."""

from __future__ import annotations

import pytest

from benchmarks.golden import golden

GOLDEN = {
    "abandoned_interactive": "d5110ccd38ce9bea",
    "approval_write_on_resume": "d9cfc87dc4b9a0dc",
    "audit_blip_read_only": "a785de775192cd83",
    "audit_failure_after_write": "c484e2afb274b95e",
    "cancel_mid_run": "a42c5de5784f8bc0",
    "default": "a35417f9ac769583",
    "deploy_between_attempts": "a05d84337cc3e678",
    "duplicate_wakeup": "d675a4c3be1137b0",
    "happy_path": "82d024f20d7d94b0",
    "reaper_races_heartbeat": "63dd9ec5234919a0",
    "same_second_renewals": "0c64739b360e27ca",
    "single_run": "e3362f798c5d3b3a",
    "tool_outlives_lease": "f3c6ff49222f1090",
    "worker_crash_mid_write": "19b8ce5b9c0aeb84",
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_library_scenario_replays_its_golden_digests(name: str) -> None:
    assert golden(name) == GOLDEN[name]
