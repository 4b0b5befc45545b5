"""The swim-lane picture of a history: lanes, leases, fence, tool calls, audit, reaper and faults."""

from __future__ import annotations

from pathlib import Path

from reports import swimlane
from scenarios.findings import FINDINGS_DIR
from sim.explore.counterexample import read


def _history(name: str) -> list:  # type: ignore[type-arg]
    return read(Path(FINDINGS_DIR) / name).run().history


def test_a_failed_write_audit_retried_shows_every_kind_of_mark() -> None:
    pic = swimlane.picture(_history("F-06-failed-write-audit-retried.toml"))
    assert pic.lanes == ["worker1", "worker2", "reaper", "bus", "store"]
    kinds = {kind for _, _, kind, _ in pic.marks}
    assert {"fence_stamped", "fence_cleared", "tool_started", "landed", "audit_ok", "audit_failed"} <= kinds
    assert {"reaper", "store_failed", "dispatch", "deliver", "status"} <= kinds
    assert [(s.lane, s.run) for s in pic.spans] == [("worker1", "run-001"), ("worker2", "run-001")]
    assert {label for _, _, label in pic.faults} == {"audit/fail", "store/fail"}
    assert len(pic.links) == 2, "two executions of the write, each from call to landing"


def test_a_call_outliving_its_lease_is_drawn_as_a_zombie_window() -> None:
    pic = swimlane.picture(_history("F-02-unaudited-landed-write.toml"))
    zombie = [s for s in pic.spans if s.zombie_end is not None]
    assert zombie and all(s.zombie_end > s.end for s in zombie)  # type: ignore[operator]
    slow = [f for f in pic.faults if f[2].startswith("slow/")]
    assert slow and all(end > start for start, end, _ in slow), "a slow fault is a shaded period"


def test_the_figure_draws(tmp_path: Path) -> None:
    fig = swimlane.figure(_history("F-04-cancel-after-fence-stamp.toml"), title="F-04")
    fig.savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 10_000
