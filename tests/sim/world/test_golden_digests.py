"""Golden digests: the histories of a fixed seed list of every library scenario, under adr-104 and
head, are exactly those recorded here. A speed change must not alter any history; a change that
must (a new record or field) regenerates the table with ``benchmarks/golden.py`` in one commit that
says why."""

from __future__ import annotations

import pytest

from benchmarks.golden import golden

GOLDEN = {
    "abandoned_interactive": "559c050975cce01b",
    "approval_write_on_resume": "232b1104876e4cf9",
    "audit_blip_read_only": "ef0eee42ad0b6922",
    "audit_failure_after_write": "ba16c19dd27f6ed3",
    "cancel_mid_run": "6154e2f3f02778f9",
    "default": "c3705e4d1aa95450",
    "deploy_between_attempts": "f797cd3a6ceba99d",
    "duplicate_wakeup": "4efad3592e1b3d9b",
    "happy_path": "40d556b9c8984e52",
    "reaper_races_heartbeat": "3ba8b0ce25094732",
    "same_second_renewals": "6a700fdb7836881e",
    "single_run": "89a559cb292468c8",
    "tool_outlives_lease": "5f2a8ec261e64065",
    "worker_crash_mid_write": "35e80e3315c2ad9e",
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_library_scenario_replays_its_golden_digests(name: str) -> None:
    assert golden(name) == GOLDEN[name]
