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


def test_the_quiet_phase_is_on_the_compressed_axis() -> None:
    """The quiet phase's line was once placed past the last event uncompressed, squeezing the story
    into the left edge; every drawn thing must lie within the compressed axis."""
    history = _history("F-05-recovery-dispatch-orphan.toml")
    pic = swimlane.picture(history)
    assert pic.quiet_at is not None
    ax = swimlane.figure(history).axes[0]
    ticks = [t for t in ax.get_xticks() if t >= 0]
    assert ax.get_xlim()[1] <= max(ticks) * 1.1 + 1


def test_a_fault_reads_with_three_significant_digits() -> None:
    from reports.document import fault_text

    assert fault_text("41 slow stretch 1.7100757119907892") == "41 slow stretch 1.71"
    assert fault_text("19 crash before 0.0") == "19 crash before 0"
    assert fault_text("not a fault") == "not a fault"


def test_identical_curves_share_one_line() -> None:
    import pandas as pd

    from reports.figures import _distinct_series

    table = pd.DataFrame(
        {
            "policy": ["a", "a", "b", "b", "c", "c"],
            "x": [1.0, 2.0, 1.0, 2.0, 1.0, 2.0],
            "violations": [1, 2, 1, 2, 0, 2],
            "simulations": [4] * 6,
        }
    )
    assert [label for label, _ in _distinct_series(table, "x", ["a", "b", "c"])] == ["a = b", "c"]
