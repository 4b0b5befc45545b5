"""Golden digests: the histories of a fixed seed list of every library scenario, under adr-104 and
head, are exactly those recorded here. A speed change must not alter any history; a change that
must (a new record or field) regenerates the table with ``benchmarks/golden.py`` in one commit that
says why."""

from __future__ import annotations

import pytest

from benchmarks.golden import golden

GOLDEN = {
    "abandoned_interactive": "c56a5adc115b00e5",
    "approval_write_on_resume": "379a35d01ed097af",
    "audit_blip_read_only": "ef0eee42ad0b6922",
    "audit_failure_after_write": "ba16c19dd27f6ed3",
    "cancel_mid_run": "6154e2f3f02778f9",
    "collated_hosts": "c2e1a1deed2cb610",
    "default": "95156240f584567f",
    "deploy_between_attempts": "b769125c63307d31",
    "duplicate_wakeup": "4efad3592e1b3d9b",
    "happy_path": "6c0c87a14e9e0172",
    "input_and_unpersisted": "f5b053cd68c9eb2e",
    "pipeline_stops": "ef21b9ea56507cdd",
    "provider_status_codes": "fb35fbbe1b7b92ea",
    "reaper_races_heartbeat": "20f145ceeae42697",
    "same_second_renewals": "6a700fdb7836881e",
    "single_run": "89a559cb292468c8",
    "tool_outlives_lease": "aab9488278709f8a",
    "worker_crash_mid_write": "6425392aae19bc44",
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_library_scenario_replays_its_golden_digests(name: str) -> None:
    assert golden(name) == GOLDEN[name]
