"""Where each registered finding and non-guarantee was met: the register's memory of its grids.

A changed runtime (or a model that drifted) removes mechanisms as well as adding them, so a finding or a
non-guarantee that a grid met before and meets no longer is news, not silence. :data:`MET` records, per
grid and scenario, the entries whose recognisers explained a violation there; :func:`gone` compares what
a run of that grid met with it and returns what stopped reproducing.

Grids:

- ``head-sweep``: the property suite's head sweep (tests/properties/test_head_has_no_unregistered_violation.py):
  ``head``, every fault family, swarm seed 5, 25 simulations per library scenario (5 on the slow one);
- ``head-sweep-deployment``: the same at the fault ranges of real deployments;
- ``head-sweep-deployment-sync``: the same on the Sync transport (spec 5.2: a wake-up runs inline).

The sweeps users run (``leaselab sweep``, ``leaselab report``) draw other simulations: their record,
with rates, is :mod:`register.met_rates`. Recorded from those sweeps on this tree; re-record by running
them when a change of the runtime, the world or a recogniser moves what they meet, and say why in the
commit. Pure data, kept in one piece so that every grid's record reads at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MET: Mapping[str, Mapping[str, frozenset[str]]] = {
    "head-sweep": {
        "abandoned_interactive": frozenset({"F-14", "NG-clear-not-persisted", "NG-store-error-lease-lost"}),
        "approval_write_on_resume": frozenset(
            {
                "F-01",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "audit_blip_read_only": frozenset(
            {"F-05", "NG-claim-restamps-started", "NG-identity", "NG-queued-orphan", "NG-store-error-lease-lost"}
        ),
        "audit_failure_after_write": frozenset(
            {
                "F-05",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "cancel_mid_run": frozenset(
            {
                "F-03",
                "F-05",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-store-error-lease-lost",
            }
        ),
        "collated_hosts": frozenset(
            {
                "F-01",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-unchecked-settle",
            }
        ),
        "default": frozenset(
            {
                "F-01",
                "F-03",
                "F-08",
                "NG-claim-restamps-started",
                "NG-clear-not-persisted",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-unchecked-settle",
            }
        ),
        "deploy_between_attempts": frozenset(
            {
                "F-02",
                "F-05",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-unchecked-settle",
            }
        ),
        "duplicate_wakeup": frozenset(
            {
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "happy_path": frozenset(
            {"F-02", "F-03", "F-05", "NG-claim-restamps-started", "NG-queued-orphan", "NG-store-error-lease-lost"}
        ),
        "input_and_unpersisted": frozenset(
            {
                "F-08",
                "NG-claim-restamps-started",
                "NG-clear-not-persisted",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-unchecked-settle",
            }
        ),
        "pipeline_stops": frozenset(
            {
                "F-08",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "provider_status_codes": frozenset(
            {
                "F-05",
                "F-08",
                "F-14",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-unchecked-settle",
            }
        ),
        "reaper_races_heartbeat": frozenset(
            {"NG-claim-restamps-started", "NG-identity", "NG-queued-orphan", "NG-reaper-dispatch-dead-letter"}
        ),
        "same_second_renewals": frozenset(
            {
                "F-01",
                "F-02",
                "F-05",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-unchecked-settle",
            }
        ),
        "single_run": frozenset(
            {"F-03", "F-05", "NG-claim-restamps-started", "NG-queued-orphan", "NG-store-error-lease-lost"}
        ),
        "tool_outlives_lease": frozenset(
            {
                "F-02",
                "F-03",
                "F-05",
                "NG-claim-restamps-started",
                "NG-clear-not-persisted",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "worker_crash_mid_write": frozenset(
            {"F-05", "NG-claim-restamps-started", "NG-queued-orphan", "NG-store-error-lease-lost"}
        ),
    },
    "head-sweep-deployment": {
        "abandoned_interactive": frozenset({"F-09", "F-14", "NG-store-error-lease-lost", "NG-unchecked-settle"}),
        "approval_write_on_resume": frozenset(
            {
                "F-01",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "audit_blip_read_only": frozenset(
            {"F-05", "NG-claim-restamps-started", "NG-identity", "NG-queued-orphan", "NG-store-error-lease-lost"}
        ),
        "audit_failure_after_write": frozenset(
            {"F-05", "NG-claim-restamps-started", "NG-identity", "NG-queued-orphan", "NG-store-error-lease-lost"}
        ),
        "cancel_mid_run": frozenset(
            {
                "F-03",
                "F-05",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-store-error-lease-lost",
            }
        ),
        "collated_hosts": frozenset(
            {
                "F-05",
                "F-14",
                "NG-claim-restamps-started",
                "NG-clear-not-persisted",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "default": frozenset(
            {
                "F-01",
                "F-03",
                "F-05",
                "F-08",
                "F-09",
                "F-14",
                "NG-claim-restamps-started",
                "NG-clear-not-persisted",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "deploy_between_attempts": frozenset(
            {
                "F-02",
                "F-05",
                "F-09",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-store-error-lease-lost",
            }
        ),
        "duplicate_wakeup": frozenset(
            {
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "happy_path": frozenset(
            {
                "F-02",
                "F-03",
                "F-05",
                "F-09",
                "NG-claim-restamps-started",
                "NG-queued-orphan",
                "NG-store-error-lease-lost",
            }
        ),
        "input_and_unpersisted": frozenset(
            {
                "NG-claim-restamps-started",
                "NG-clear-not-persisted",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "pipeline_stops": frozenset(
            {
                "F-08",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-unchecked-settle",
            }
        ),
        "provider_status_codes": frozenset(
            {
                "F-05",
                "F-08",
                "F-14",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "reaper_races_heartbeat": frozenset(
            {"NG-claim-restamps-started", "NG-queued-orphan", "NG-reaper-dispatch-dead-letter"}
        ),
        "same_second_renewals": frozenset(
            {
                "F-01",
                "F-02",
                "F-05",
                "F-09",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-unchecked-settle",
            }
        ),
        "single_run": frozenset(
            {"F-03", "F-05", "NG-claim-restamps-started", "NG-queued-orphan", "NG-store-error-lease-lost"}
        ),
        "tool_outlives_lease": frozenset(
            {
                "F-01",
                "F-02",
                "F-03",
                "F-05",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "worker_crash_mid_write": frozenset(
            {"F-05", "F-14", "NG-claim-restamps-started", "NG-queued-orphan", "NG-store-error-lease-lost"}
        ),
    },
    "head-sweep-deployment-sync": {
        "abandoned_interactive": frozenset({"F-09", "F-14", "NG-store-error-lease-lost", "NG-unchecked-settle"}),
        "approval_write_on_resume": frozenset(
            {
                "F-01",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "audit_blip_read_only": frozenset(
            {"F-05", "NG-claim-restamps-started", "NG-identity", "NG-queued-orphan", "NG-store-error-lease-lost"}
        ),
        "audit_failure_after_write": frozenset(
            {"F-05", "NG-claim-restamps-started", "NG-identity", "NG-queued-orphan", "NG-store-error-lease-lost"}
        ),
        "cancel_mid_run": frozenset(
            {"F-03", "F-05", "NG-claim-restamps-started", "NG-queued-orphan", "NG-store-error-lease-lost"}
        ),
        "default": frozenset(
            {
                "F-01",
                "F-02",
                "F-03",
                "F-05",
                "F-08",
                "F-09",
                "F-14",
                "NG-claim-restamps-started",
                "NG-clear-not-persisted",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-sync-outer-requeued",
            }
        ),
        "deploy_between_attempts": frozenset(
            {
                "F-05",
                "F-09",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "duplicate_wakeup": frozenset(
            {
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "happy_path": frozenset(
            {
                "F-02",
                "F-03",
                "F-05",
                "F-09",
                "NG-claim-restamps-started",
                "NG-queued-orphan",
                "NG-store-error-lease-lost",
            }
        ),
        "reaper_races_heartbeat": frozenset(
            {
                "NG-claim-restamps-started",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-sync-outer-requeued",
            }
        ),
        "same_second_renewals": frozenset(
            {
                "F-01",
                "F-05",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-sync-outer-requeued",
                "NG-unchecked-settle",
            }
        ),
        "single_run": frozenset(
            {
                "F-03",
                "F-05",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-store-error-lease-lost",
            }
        ),
        "tool_outlives_lease": frozenset(
            {
                "F-02",
                "F-03",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "worker_crash_mid_write": frozenset(
            {
                "F-05",
                "F-14",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-store-error-lease-lost",
            }
        ),
        "collated_hosts": frozenset(
            {
                "F-01",
                "F-05",
                "F-14",
                "F-15",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-sync-outer-requeued",
                "NG-unchecked-settle",
            }
        ),
        "input_and_unpersisted": frozenset(
            {
                "NG-claim-restamps-started",
                "NG-clear-not-persisted",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
            }
        ),
        "pipeline_stops": frozenset(
            {
                "F-03",
                "F-05",
                "F-14",
                "F-15",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-sync-outer-requeued",
                "NG-unchecked-settle",
            }
        ),
        "provider_status_codes": frozenset(
            {
                "F-05",
                "F-08",
                "F-14",
                "NG-claim-restamps-started",
                "NG-identity",
                "NG-queued-orphan",
                "NG-reaper-dispatch-dead-letter",
                "NG-store-error-lease-lost",
                "NG-sync-outer-requeued",
                "NG-unchecked-settle",
            }
        ),
    },
}


@dataclass(frozen=True, slots=True)
class Gone:
    """An entry the grid met on a scenario before and did not meet this time."""

    entry: str
    grid: str
    scenario: str

    def line(self) -> str:
        return (
            f"{self.entry} no longer met on {self.scenario} (grid {self.grid}): the register recorded it there; "
            f"a mechanism the runtime had may be gone, or the sweep lost its reach"
        )


def gone(grid: str, scenario: str, met: Iterable[str]) -> list[Gone]:
    """The entries recorded as met on ``scenario`` of ``grid`` that ``met`` lacks (none for an unknown grid)."""
    recorded = MET.get(grid, {}).get(scenario, frozenset())
    found = set(met)
    return [Gone(entry, grid, scenario) for entry in sorted(recorded - found)]


def new_met(grid: str, scenario: str, met: Iterable[str]) -> list[str]:
    """The entries met on ``scenario`` that the register did not record there (to record)."""
    recorded = MET.get(grid, {}).get(scenario, frozenset())
    return sorted(set(met) - recorded)


__all__ = ["MET", "Gone", "gone", "new_met"]
