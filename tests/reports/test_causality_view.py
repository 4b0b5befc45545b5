"""The causality curve for a reader (reports.causality), on hand-built curve documents; and in the small
review's report: every counterexample has its curve, table and figure."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from matplotlib.figure import Figure

from checks.history import FAULT, NEMESIS, Op, OpType
from reports import causality, swimlane
from reports.stats import wilson

pytestmark = pytest.mark.slow


def point(cut: int, time_s: float, why: str, same: int, draws: int = 93, fault: str = "") -> dict[str, Any]:
    return {"cut": cut, "time_s": time_s, "why": why, "same": same, "draws": draws, "fault": fault}


def history() -> list[Op]:
    ops = [Op(i, float(i), "worker1", "tool", "run-001", OpType.INVOKE, {"tool": "t", "call": "1.0"}) for i in range(6)]
    ops[3] = Op(3, 3.0, NEMESIS, FAULT, "run-001", OpType.INFO, {"family": "slow", "kind": "stretch", "target": "w"})
    return ops


def document(points: list[dict[str, Any]], moments: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "invariant": "every_write_accounted",
        "explanation": "F-02",
        "draws": 93,
        "jump": 0.25,
        "records": 6,
        "end_cut": 6,
        "complete": True,
        "reproduced": True,
        "simulations": 93 * len(points),
        "requests": 1000,
        "cpu_s": 1.5,
        "points": points,
        "moments": moments,
        **extra,
    }


def one_fault_curve() -> dict[str, Any]:
    points = [
        point(0, 0.0, "start", 1),
        point(3, 3.0, "before fault", 2, fault="12 slow stretch 1.912345"),
        point(4, 3.0, "after fault", 92, fault="12 slow stretch 1.912345"),
        point(5, 4.0, "between", 93),
        point(6, 5.0, "violated", 93),
    ]
    moment = {
        "from_cut": 3,
        "to_cut": 4,
        "time_s": 3.0,
        "record": 3,
        "records": [3, 4],
        "faults": ["12 slow stretch 1.912345"],
        "before": 2 / 93,
        "after": 92 / 93,
    }
    return document(points, [moment])


def test_every_point_gets_its_wilson_interval() -> None:
    shown = causality.view(one_fault_curve(), history())
    for p in shown["points"]:
        assert (p["lower"], p["upper"]) == wilson(p["same"], p["draws"])
        assert p["share"] == p["same"] / p["draws"]


def test_the_small_table_keeps_the_start_the_faults_the_moment_and_the_end() -> None:
    shown = causality.view(one_fault_curve(), history())
    assert [p["cut"] for p in shown["rows"]] == [0, 3, 4, 6]
    assert [p["moment"] for p in shown["rows"]] == ["", "", "◆1", ""]
    assert "12 slow stretch 1.91" in shown["rows"][1]["what"]


def test_a_moment_names_its_record_as_the_timeline_does() -> None:
    (moment,) = causality.view(one_fault_curve(), history())["moments"]
    assert moment["record_text"].startswith("#3 nemesis ⚡ slow/stretch")
    assert moment["fault_text"] == "12 slow stretch 1.91"


def test_the_sentence_says_when_it_was_doomed_and_by_what() -> None:
    text = causality.view(one_fault_curve(), history())["sentence"]
    assert text.startswith("Doomed at 3.0 s by the fault 12 slow stretch 1.91")
    assert "98.9%" in text and "2.2%" in text


def test_a_curve_near_one_from_the_start_is_a_design_defect() -> None:
    doc = document([point(0, 0.0, "start", 91), point(6, 5.0, "violated", 93)], [])
    assert causality.view(doc)["sentence"].startswith("Doomed from the start")


def test_a_curve_with_no_jump_says_so_and_a_short_one_says_it_was_time_boxed() -> None:
    doc = document([point(0, 0.0, "start", 10), point(6, 5.0, "violated", 30)], [], complete=False)
    text = causality.view(doc)["sentence"]
    assert text.startswith("No decisive moment")
    assert text.endswith("Time-boxed: 2 points evaluated.")


def test_text_lines_list_every_point_and_the_moment() -> None:
    out = causality.lines(one_fault_curve(), history())
    assert sum("records" in line or "nothing" in line for line in out) == 5
    assert any(line.startswith("decisive: ◆1 at 3.0 s") for line in out)


def lanes_with_curve(shown: dict[str, Any]) -> Figure:
    """The figure as the report draws it: the lanes, the moments ringed on them, the curve under them."""
    moments = [swimlane.LaneMarker(**m) for m in causality.moment_markers(shown)]
    return swimlane.figure(history(), title="t", markers=moments, under=causality.panel(shown))


def test_the_curve_is_drawn_under_the_lanes_on_their_time_axis_its_moment_marked_on_both() -> None:
    shown = causality.view(one_fault_curve(), history())
    plain = swimlane.figure(history(), title="t")
    fig = lanes_with_curve(shown)
    assert len(fig.axes) == 2
    top, below = fig.axes
    assert fig.get_size_inches()[1] > plain.get_size_inches()[1]
    assert fig.get_size_inches()[0] == plain.get_size_inches()[0], "no wider than the lanes alone"
    assert below.get_position().y1 < top.get_position().y0
    assert top.get_xlim() == below.get_xlim() == plain.axes[0].get_xlim()
    # The fault's instant (3.0 s): its dashed line on the lanes, the moment's dashed line on the curve and the
    # moment's ring on the lanes (around the fault's record) share one x.
    fault_x = [
        line.get_xdata()[0]
        for line in top.get_lines()
        if line.get_linestyle() == "--" and line.get_color() == "#d6604d"
    ]
    moment_x = [line.get_xdata()[0] for line in below.get_lines() if line.get_color() == causality.MOMENT_COLOUR]
    ring_x = [
        line.get_xdata()[0]
        for line in top.get_lines()
        if line.get_markeredgecolor() == causality.MOMENT_COLOUR and line.get_markerfacecolor() == "none"
    ]
    assert len(moment_x) == len(ring_x) == 1 and fault_x == moment_x == ring_x
    assert "◆1 decisive: 2.2% → 98.9%" in {t.get_text() for t in top.texts}
    assert "◆1" in {t.get_text() for t in below.texts}
    steps = [line for line in below.get_lines() if line.get_drawstyle() == "steps-post"]
    assert len(steps) == 1 and list(steps[0].get_ydata()) == [p["same"] / 93 for p in one_fault_curve()["points"]]
    legend = {t.get_text() for t in fig.legends[0].get_texts()}
    assert "P(same violation): share of 93 fresh continuations" in legend and "fence stamped" in legend


def test_a_moment_whose_record_the_lanes_leave_out_is_marked_at_its_time_above_them() -> None:
    shown = causality.view(one_fault_curve(), history())
    (marker,) = [swimlane.LaneMarker(**m) for m in causality.moment_markers(shown)]
    kept = [op for op in history() if op.index != 3]
    assert marker.place(swimlane.picture(kept)) == (None, 3.0)
    assert marker.place(swimlane.picture(history())) == (swimlane.STORE, 3.0)


def test_the_lanes_with_their_curve_stay_legible() -> None:
    """Every label at least 11 px where the report shows the figure at its size (1,400 px window), none
    over another, the figure no wider than the page."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    fig = lanes_with_curve(causality.view(one_fault_curve(), history()))
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    shown = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    texts = [(t.get_text(), t.get_fontsize(), t.get_window_extent(renderer)) for t in shown]
    assert min(size for _, size, _ in texts) * 96 / 72 >= 11
    assert fig.get_tightbbox().width * 96 <= 1_320
    assert not [(a, b) for (a, _, p), (b, _, q) in itertools.combinations(texts, 2) if p.overlaps(q)]


def test_the_curve_alone_is_a_plain_figure() -> None:
    fig = causality.figure(causality.view(one_fault_curve(), history()), title="t")
    assert isinstance(fig, Figure) and len(fig.axes) == 1


def test_every_counterexample_of_the_report_has_its_curve(report_json: dict[str, Any], small_review: Any) -> None:
    cxs = report_json["counterexamples"]
    assert cxs
    html = small_review.paths["html"].read_text(encoding="utf-8")
    markdown = small_review.paths["markdown"].read_text(encoding="utf-8")
    assert html.count("When was it doomed?") == len(cxs)
    assert markdown.count("**When was it doomed?**") == len(cxs)
    for cx in cxs:
        curve = cx["causality"]
        assert curve["points"] and curve["points"][0]["cut"] == 0
        assert all(16 <= p["draws"] <= curve["draws"] == 93 for p in curve["points"])
        assert curve["sentence"] in markdown
        assert f"P(same violation): share of {curve['draws_text']} fresh continuations" in html  # the legend
    assert html.count("P(same violation): share of") == len(cxs)  # one legend in each figure's SVG
    assert "causality curves" in report_json["provenance"]["extra"]


def test_a_curve_time_boxed_to_one_point_still_shows_its_interval() -> None:
    from matplotlib.collections import LineCollection

    shown = causality.view(document([point(0, 0.0, "start", 86)], [], complete=False), history())
    below = swimlane.figure(history(), under=causality.panel(shown)).axes[1]
    (bar,) = [c for c in below.collections if isinstance(c, LineCollection)]
    ((_, low), (_, high)) = bar.get_segments()[0]
    assert (low, high) == wilson(86, 93)


def test_the_draws_text_says_how_many_continuations_points_drew() -> None:
    assert causality.draws_text([point(0, 0.0, "start", 16, 16), point(9, 1.0, "violated", 40, 93)], 93) == "16\u201393"
    assert causality.draws_text([point(0, 0.0, "start", 16, 16), point(9, 1.0, "violated", 0, 16)], 93) == "16"
    assert causality.draws_text([], 93) == "93"
