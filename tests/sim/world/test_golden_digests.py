"""Golden digests: the histories of a fixed seed list of every library scenario, under adr-104 and
head, are exactly those recorded here. A speed change must not alter any history; a change that
must (a new record or field) regenerates the table with ``benchmarks/golden.py`` in one commit that
says why."""

from __future__ import annotations

import pytest

from benchmarks.golden import golden

GOLDEN = {
    "abandoned_interactive": "5fac83253882a939",
    "approval_write_on_resume": "59336ab9444bb9ab",
    "audit_blip_read_only": "16aa75fe692e52db",
    "audit_failure_after_write": "f2f7ba3056075841",
    "cancel_mid_run": "ea39c484a09761d8",
    "default": "6c0bca4a68155e15",
    "deploy_between_attempts": "f1ce0eb4c6de985d",
    "duplicate_wakeup": "f1ff2459e6487b2f",
    "happy_path": "b838fb711a68fcdc",
    "reaper_races_heartbeat": "ba30737ef6a59571",
    "same_second_renewals": "750d8a4336e9523e",
    "single_run": "57936798a94366f9",
    "tool_outlives_lease": "48db70abc3f00ff2",
    "worker_crash_mid_write": "a9dc39e6e1aac50d",
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_library_scenario_replays_its_golden_digests(name: str) -> None:
    assert golden(name) == GOLDEN[name]
