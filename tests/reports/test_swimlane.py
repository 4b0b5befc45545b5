"""The swim-lane picture of a history: lanes, leases, fence, tool calls, audit, reaper and faults."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from register.findings import FINDINGS_DIR
from reports import swimlane
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


# Legibility: every label measured by the renderer, at the size the report shows the figure.

CSS_PX_PER_PT = 96 / 72
SHOWN_WIDTH_PX = 1_320
"""Room for a figure in the report at a 1,400 px window (page padding and scrollbar taken off): a figure
no wider is shown at its own size, so a label of s points is s x 4/3 px on screen."""


def _crowded() -> tuple[list, list]:  # type: ignore[type-arg]
    """The whole history of the mixed workload (every run, eight processes' lanes), with every violation's
    witness marked: more crowded than any counterexample, which shows only its violation's runs."""
    import leaselab

    result = leaselab.simulate("default", "head", seed=7)
    markers = [m for name in result.violations for m in swimlane.violation_markers(result.verdicts[name])]
    return list(result.history), markers


def _texts(fig: object) -> list:  # type: ignore[type-arg]
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    canvas = FigureCanvasAgg(fig)  # type: ignore[arg-type]
    canvas.draw()
    renderer = canvas.get_renderer()
    shown = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]  # type: ignore[attr-defined]
    return [(t.get_text(), t.get_fontsize(), t.get_window_extent(renderer)) for t in shown]


CROWDED = "default seed 7, every run"
REAL_CROWDED = "crowded-adr-104--no_retry_after_failed_write_audit.toml"
"""The most crowded counterexample of `make report` at 100 seeds (98 labels; written by it at commit
998f7bb + this branch): a write retried after its audit failed, under eight audit outages."""


def _figure_of(name: str) -> object:
    """The figure as the report draws it: a counterexample's violation (its runs only), or the crowded case."""
    if name == CROWDED:
        history, markers = _crowded()
        return swimlane.figure(history, title=name, markers=markers)
    cx = read(Path(__file__).parent / "data" / name if name == REAL_CROWDED else Path(FINDINGS_DIR) / name)
    replay = cx.run()
    return swimlane.violation_figure(replay.history, replay.verdicts[cx.invariant], title=name)


@pytest.mark.parametrize(
    "name", ["F-06-failed-write-audit-retried.toml", "F-02-unaudited-landed-write.toml", REAL_CROWDED, CROWDED]
)
def test_labels_are_at_least_11_px_and_none_overlaps_another(name: str) -> None:
    fig = _figure_of(name)
    texts = _texts(fig)
    assert len(texts) > 30
    smallest = min(size for _, size, _ in texts)
    assert smallest * CSS_PX_PER_PT >= 11, f"a {smallest} pt label is under 11 px"
    width_in = fig.get_tightbbox().width  # type: ignore[attr-defined]
    assert width_in * 96 <= SHOWN_WIDTH_PX, "wider than the page: the browser would shrink every label"
    overlaps = [
        (a, b)
        for (a, _, box_a), (b, _, box_b) in itertools.combinations(texts, 2)
        if box_a.overlaps(box_b) and _area(box_a, box_b) > 1.0
    ]
    assert not overlaps


def _area(a: object, b: object) -> float:
    from matplotlib.transforms import Bbox

    inter = Bbox.intersection(a, b)  # type: ignore[arg-type]
    return 0.0 if inter is None else float(inter.width * inter.height)


def test_the_violating_event_is_ringed_and_named_on_its_lane() -> None:
    cx = read(Path(FINDINGS_DIR) / "F-01-completed-write-rerun.toml")
    replay = cx.run()
    verdict = replay.verdicts[cx.invariant]
    fig = swimlane.violation_figure(replay.history, verdict)
    violating = max(verdict.witness)
    named = [t for t in fig.axes[0].texts if t.get_text() == f"#{violating} violates {cx.invariant}"]
    assert len(named) == 1 and named[0].get_fontweight() == "bold"
    lane, time_s = swimlane.picture(replay.history).record_at[violating]
    ticks = dict(zip([t.get_text() for t in fig.axes[0].get_yticklabels()], fig.axes[0].get_yticks(), strict=True))
    below = sorted(y for y in ticks.values() if y < ticks[lane])
    label_y = named[0].get_position()[1]
    assert ticks[lane] > label_y > (below[-1] if below else 0), "the name hangs under its own lane"
    others = {t.get_text() for t in fig.axes[0].texts}
    assert {f"#{i}" for i in verdict.witness if i != violating} <= others, "every witness record is numbered"
    assert time_s == replay.history[violating].time_s


def test_witness_markers_name_the_last_witness_record_and_number_cited_ones() -> None:
    markers = swimlane.witness_markers((9, 3, 5), "inv_x", cited=[1, 9, 3])
    assert [(m.record, m.label, m.style) for m in markers] == [
        (1, "#1", "cited"),
        (3, "#3", "witness"),
        (5, "#5", "witness"),
        (9, "#9 violates inv_x", "violation"),
    ]
    assert swimlane.witness_markers((), "inv_x", cited=[4]) == []


def test_an_extra_marker_on_a_lane_or_above_them_is_drawn_and_labelled() -> None:
    """Later figures add their own marks (a causality peak, a new invariant's event) through LaneMarker."""
    history = _history("F-04-cancel-after-fence-stamp.toml")
    extra = [
        swimlane.LaneMarker("peak here", time_s=1.0, lane="store", style="note"),
        swimlane.LaneMarker("phase change", time_s=2.0),
        swimlane.LaneMarker("not in this history", record=10**9),
    ]
    fig = swimlane.figure(history, markers=extra)
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert {"peak here", "phase change"} <= texts and "not in this history" not in texts


def test_a_figure_shows_itself_in_jupyter_as_png() -> None:
    png = swimlane.figure(_history("F-04-cancel-after-fence-stamp.toml"))._repr_png_()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


def test_a_counterexample_view_marks_its_witness_cited_records_and_extra_markers() -> None:
    from reports.document import lane_markers

    cx = {
        "invariant": "inv_x",
        "witness": [40, 54],
        "explanation": "run settled completed at 54 after the audit failed at 40, stamped at 12",
        "markers": [{"label": "causality peak", "time_s": 3.0, "lane": "store"}],
    }
    marks = lane_markers(cx)
    assert [(m.record, m.label) for m in marks] == [
        (12, "#12"),
        (40, "#40"),
        (54, "#54 violates inv_x"),
        (None, "causality peak"),
    ]
