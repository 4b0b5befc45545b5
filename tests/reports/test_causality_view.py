"""The causality curve for a reader (reports.causality), on hand-built curve documents; and in the small
review's report: every counterexample has its curve, table and figure."""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

from model.history import FAULT, NEMESIS, Op, OpType
from reports import causality, swimlane
from reports.stats import wilson


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


def test_the_curve_is_drawn_under_the_lanes_on_their_time_axis() -> None:
    lanes = swimlane.figure(history())
    height = lanes.get_size_inches()[1]
    x = swimlane.time_axis(history())
    xlim = lanes.axes[0].get_xlim()
    fig = causality.with_curve(lanes, causality.view(one_fault_curve(), history()), x)
    assert len(fig.axes) == 2
    top, below = fig.axes
    assert fig.get_size_inches()[1] > height
    assert below.get_position().y1 < top.get_position().y0
    assert top.get_xlim() == xlim == below.get_xlim()
    moment_x = x(3.0)
    for ax in (top, below):
        assert any(line.get_xdata()[0] == moment_x for line in ax.get_lines() if len(line.get_xdata()) == 2)
    steps = [line for line in below.get_lines() if line.get_drawstyle() == "steps-post"]
    assert len(steps) == 1 and list(steps[0].get_ydata()) == [p["same"] / 93 for p in one_fault_curve()["points"]]


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
        assert all(p["draws"] == 93 for p in curve["points"])
        assert curve["sentence"] in markdown
    assert html.count("when was it doomed?") == len(cxs)  # the curve's axis label, in each figure's SVG
    assert "causality curves" in report_json["provenance"]["extra"]
