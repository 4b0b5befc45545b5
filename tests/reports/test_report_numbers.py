"""On a small configuration the report has every section, and its numbers equal those computed
from the sweep rows directly with pandas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from markupsafe import escape

from checks.columns import violated_mask
from register.findings import FINDINGS
from reports.explained import SEARCH_HOLDS
from reports.sections import SECTIONS, explanations_view
from reports.stats import percent, wilson

KEYS = ["grid", "scenario", "intensity", "latency_ratio", "transport", "seed"]


def _main(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["grid"] == "main"]


def test_every_section_is_in_the_html_and_the_markdown(small_review: Any) -> None:
    html = small_review.paths["html"].read_text(encoding="utf-8")
    markdown = small_review.paths["markdown"].read_text(encoding="utf-8")
    for anchor, heading in SECTIONS:
        assert f'<section id="{anchor}">' in html
        assert f"<h2>{heading}</h2>" in html
        assert f"## {heading}" in markdown
    # a finding the review's fault ranges cannot reach says so, rather than "not seen"
    assert markdown.count("not reachable here (needs deployment fault ranges)") == sum(
        f.deployment_ranges for f in FINDINGS
    )
    # each finding the review did not reproduce says how to search for it where the register met it
    register = markdown.split("## Findings register", 1)[1].split("\n\n| id | invariant |", 1)[1].split("\n\n")[0]
    rows = [line for line in register.splitlines() if line.startswith("| F-")]
    assert len(rows) == len(FINDINGS)
    for row in rows:
        finding = row.split(" | ", 1)[0].removeprefix("| ")
        if "**reproduced**" not in row.split(" | ")[3]:
            assert f" --target {finding}`" in row and "search: `leaselab explore " in row, row


def test_summary_cells_equal_the_rows(report_json: dict[str, Any], rows: pd.DataFrame, small_review: Any) -> None:
    main = _main(rows)
    html = small_review.paths["html"].read_text(encoding="utf-8")
    invariants = [c.removeprefix("inv.") for c in rows.columns if c.startswith("inv.")]
    assert report_json["summary"]["invariants"] == invariants
    assert report_json["summary"]["policies"] == ["adr-111", "head", "head+idempotency_keys"]
    for name in invariants:
        for policy in ("adr-111", "head", "head+idempotency_keys"):
            mine = main[main["policy"] == policy]
            k, n = int((mine[f"inv.{name}"].eq(False)).sum()), len(mine)
            cell = report_json["summary"]["cells"][name][policy]
            assert (cell["violations"], cell["simulations"]) == (k, n)
            assert cell["rate"] == pytest.approx(k / n)
            assert (cell["lower"], cell["upper"]) == pytest.approx(wilson(k, n))
            judged = int(mine[f"judged.{name}"].sum())
            assert cell["judged"] == judged
            assert cell["rule_of_three"] == (pytest.approx(3 / n) if k == 0 and judged else None)
            assert cell["text"] in html
            if k == 0 and judged == 0:  # nothing judged bounds nothing: no "≤ 3/n"
                assert cell["text"] == f"0/{n:,} · no case judged"
    assert any(c["violations"] for cells in report_json["summary"]["cells"].values() for c in cells.values())


def test_the_answer_equals_the_rows(report_json: dict[str, Any], rows: pd.DataFrame, small_review: Any) -> None:
    main = _main(rows)
    html = small_review.paths["html"].read_text(encoding="utf-8")
    invariants = [c.removeprefix("inv.") for c in rows.columns if c.startswith("inv.")]
    assert [v["policy"] for v in report_json["verdicts"]] == ["adr-111", "head", "head+idempotency_keys"]
    for v in report_json["verdicts"]:
        mine = main[main["policy"] == v["policy"]]
        counts = {name: int((mine[f"inv.{name}"].eq(False)).sum()) for name in invariants}
        failed = sorted((name for name in invariants if counts[name]), key=lambda name: (-counts[name], name))
        unjudged = [n for n in invariants if not counts[n] and not int(mine[f"judged.{n}"].sum())]
        assert v["unjudged"] == unjudged
        assert (v["held"], v["invariants"], v["simulations"]) == (
            len(invariants) - len(failed) - len(unjudged),
            len(invariants),
            len(mine),
        )
        assert [f["invariant"] for f in v["failed"]] == failed
        assert [f["violations"] for f in v["failed"]] == [counts[name] for name in failed]
        assert v["headline"] == f"{v['policy']}: {v['sentence']}" and str(escape(v["sentence"])) in html
        held = f"{v['held']} of" if failed or unjudged else "all"
        assert (
            f"{v['policy']}: {held} {len(invariants)} invariants held in all {len(mine)} simulations" in v["headline"]
        )
        assert (f", {len(unjudged)} judged no case" in v["headline"]) is bool(unjudged)
        if failed:
            worst = failed[0]
            assert f"worst {worst} {percent(counts[worst] / len(mine))}" in v["headline"]


def test_the_answer_leads_with_the_policy_under_review(report_json: dict[str, Any], small_review: Any) -> None:
    """A reviewer reads head's sentence first; the table below keeps the grid's order (head is 2nd)."""
    html = small_review.paths["html"].read_text(encoding="utf-8")
    markdown = small_review.paths["markdown"].read_text(encoding="utf-8")
    answer = markdown.split("## The answer", 1)[1].split("\n| policy |", 1)[0]
    bullets = [line for line in answer.splitlines() if line.startswith("- ")]
    assert [b.lstrip("- *").split(":")[0] for b in bullets] == ["head", "adr-111", "head+idempotency_keys"]
    assert bullets[0].endswith("(the policy under review)") and "under review" not in "".join(bullets[1:])
    section = html.split('<section id="verdict">', 1)[1].split("<table>", 1)[0]
    lead, first_other = "<strong>head (the policy under review):</strong>", "<strong>adr-111:</strong>"
    assert section.index(lead) < section.index(first_other)


def test_the_small_review_has_an_invariant_that_judged_no_case(report_json: dict[str, Any]) -> None:
    """adr-111 has no write fence, so the fence checks judge nothing: the tests above see that case."""
    (adr111,) = [v for v in report_json["verdicts"] if v["policy"] == "adr-111"]
    assert "fence_matches_inflight_write" in adr111["unjudged"]


def test_every_failure_of_head_is_classified(
    report_json: dict[str, Any], rows: pd.DataFrame, small_review: Any
) -> None:
    main = _main(rows)
    head = main[main["policy"] == "head"]
    violated = {
        c.removeprefix("inv."): int((head[c].eq(False)).sum())
        for c in head.columns
        if c.startswith("inv.") and (head[c].eq(False)).any()
    }
    explained = report_json["head_explained"]
    assert violated and {r["invariant"]: r["violations"] for r in explained["rows"]} == violated
    for r in explained["rows"]:
        assert 0 < r["examined"] <= r["violations"]
        assert r["unexplained"] + sum(x["simulations"] for x in r["explained"]) == r["examined"]
        assert (r["status"] == "UNREGISTERED") == (r["unexplained"] > 0)
        assert all(x["id"].startswith(("F-", "NG-")) for x in r["explained"])
    html = small_review.paths["html"].read_text(encoding="utf-8")
    assert explained["line"] in html


def test_every_failure_of_head_at_deployment_ranges_is_classified_beside_the_library_ones(
    report_json: dict[str, Any], rows: pd.DataFrame, small_review: Any
) -> None:
    wide = rows[(rows["grid"] == "deployment") & (rows["policy"] == "head")]
    assert len(wide) and set(wide["fault_ranges"]) == {"deployment"}
    violated = {
        c.removeprefix("inv."): int(violated_mask(wide[c]).sum())
        for c in wide.columns
        if c.startswith("inv.") and violated_mask(wide[c]).any()
    }
    ranges = report_json["explained_ranges"]
    deployment = ranges["deployment"]
    assert violated and {r["invariant"]: r["violations"] for r in deployment["rows"]} == violated
    for r in deployment["rows"]:
        assert 0 < r["examined"] <= r["violations"]
        assert r["unexplained"] + sum(x["simulations"] for x in r["explained"]) == r["examined"]
    assert ranges["library"] == report_json["head_explained"]
    side = {row["invariant"]: row for row in ranges["side_by_side"]}
    assert set(side) == set(violated) | {r["invariant"] for r in ranges["library"]["rows"]}
    assert all((side[name]["deployment"] or {}).get("violations") == n for name, n in violated.items())
    clean = not ranges["library"]["unregistered"] and not deployment["unregistered"]
    assert ranges["holds"] == (clean and SEARCH_HOLDS), "the verdict needs the recorded search clean too"
    html = small_review.paths["html"].read_text(encoding="utf-8")
    assert str(escape(ranges["line"])) in html and "at the fault ranges of real deployments" in html
    assert "At the fault ranges of real deployments" in small_review.paths["markdown"].read_text(encoding="utf-8")


def test_the_register_says_where_each_finding_was_reproduced(report_json: dict[str, Any]) -> None:
    findings = report_json["findings"]
    assert all(f["reproduced_deployment"] is not None for f in findings), "the review has a deployment grid"
    assert all(bool(f["example_deployment"]) == f["reproduced_deployment"] for f in findings)
    assert any(f["reproduced_deployment"] for f in findings)


def test_an_unexplained_violation_is_marked_unregistered() -> None:
    finding = {"id": "F-02", "label": "F-02 x", "kind": "finding", "simulations": 3}
    view = explanations_view(
        [
            {
                "invariant": "a",
                "policy": "head",
                "violations": 5,
                "examined": 4,
                "unexplained": 1,
                "explained": [finding],
            },
            {
                "invariant": "b",
                "policy": "head",
                "violations": 3,
                "examined": 3,
                "unexplained": 0,
                "explained": [finding],
            },
        ]
    )
    assert [r["status"] for r in view["rows"]] == ["UNREGISTERED", "registered finding"]
    assert view["unregistered"] == ["a"] and "UNREGISTERED" in view["line"] and "a" in view["line"]
    assert view["rows"][0]["examined_text"] == "4 of 5"


def _paired(rows: pd.DataFrame, before: str, after: str, name: str) -> tuple[int, int, int]:
    main = _main(rows)
    merged = main[main["policy"] == before].merge(main[main["policy"] == after], on=KEYS, suffixes=("_b", "_a"))
    vb, va = merged[f"inv.{name}_b"].eq(False), merged[f"inv.{name}_a"].eq(False)
    return len(merged), int((vb & ~va).sum()), int((va & ~vb).sum())


@pytest.mark.parametrize(
    ("section", "before", "after"), [("decisions", "adr-111", "head"), ("proposals", "head", "head+idempotency_keys")]
)
def test_comparisons_equal_the_paired_rows(
    report_json: dict[str, Any], rows: pd.DataFrame, section: str, before: str, after: str
) -> None:
    (comparison,) = report_json[section]
    assert (comparison["before"], comparison["after"]) == (before, after)
    assert comparison["rows"], "the small review must show a difference"
    for row in comparison["rows"]:
        n, only_before, only_after = _paired(rows, before, after, row["invariant"])
        assert (row["pairs"], row["only_before"], row["only_after"]) == (n, only_before, only_after)
        assert row["difference"] == pytest.approx((only_after - only_before) / n)
        assert row["lower"] <= row["difference"] <= row["upper"]
    for name in comparison["made_hold"]:
        main = _main(rows)
        assert (main.loc[main["policy"] == before, f"inv.{name}"].eq(False)).any()
        assert not (main.loc[main["policy"] == after, f"inv.{name}"].eq(False)).any()


def test_cost_equals_the_rows(report_json: dict[str, Any], rows: pd.DataFrame) -> None:
    main = _main(rows)
    for entry in report_json["cost"]["rows"]:
        mine = main[main["policy"] == entry["policy"]]
        runs = mine["stat.runs"].sum()
        assert entry["runs"] == runs
        assert entry["completion_rate"] == pytest.approx(mine["stat.completed"].sum() / runs)
        assert entry["requeues_per_run"] == pytest.approx(mine["stat.requeues"].sum() / runs)
        assert entry["dead_letters"] == mine["stat.dead_letters"].sum()
        assert entry["dead_letters_no_write"] == mine["stat.dead_letters_no_write"].sum()
        assert entry["duplicate_idempotent_writes"] == mine["stat.duplicate_idempotent_writes"].sum()
        assert entry["wasted_tool_executions"] == mine["stat.wasted_tool_executions"].sum()
        for liveness in ("progressing_reaped", "dead_letters_no_fatal", "failed_by_slowness"):
            assert entry[liveness] == mine[f"stat.{liveness}"].sum()
        latencies = mine["stat.settle_latencies_s"].explode().dropna().astype(float)
        for q in (50, 95, 99):
            assert entry[f"settle_p{q}_s"] == pytest.approx(np.percentile(latencies, q))
        for column in [c for c in main.columns if c.startswith("dl.")]:
            assert entry[column] == mine[column].sum()


@pytest.mark.parametrize(
    ("key", "grid", "x"), [("intensity", "intensity", "intensity"), ("latency", "latency", "latency_ratio")]
)
def test_curves_equal_the_rows(report_json: dict[str, Any], rows: pd.DataFrame, key: str, grid: str, x: str) -> None:
    curve = report_json["curves"][key]
    mine = rows[rows["grid"] == grid]
    bad = (mine[[c for c in mine.columns if c.startswith("inv.")]].eq(False)).any(axis=1)
    expected = bad.groupby([mine["policy"], mine[x]]).agg(["sum", "count"])
    assert len(curve["points"]) >= 5
    assert len(curve["records"]) == len(expected)
    for record in curve["records"]:
        k, n = expected.loc[(record["policy"], record[x])]
        assert (record["violations"], record["simulations"]) == (k, n)


def test_fault_coverage_equals_the_rows(report_json: dict[str, Any], rows: pd.DataFrame) -> None:
    coverage = report_json["coverage"]
    hits = [c for c in rows.columns if c.startswith("hit.")]
    assert hits
    for column in hits:
        family, request = column.removeprefix("hit.").split(".", 1)
        assert coverage["hits"][family][request] == rows[column].fillna(0).sum()
    for name, counts in coverage["properties"].items():
        assert counts["all"] == rows[f"cov.{name}"].fillna(False).astype(bool).sum()
    for family, count in coverage["faults"].items():
        assert count == rows[f"fault.{family}"].sum()


def test_each_violated_invariant_has_a_replayable_counterexample(
    report_json: dict[str, Any], rows: pd.DataFrame, small_review: Any
) -> None:
    from sim.explore.counterexample import read

    main = _main(rows)
    head_violated = {
        c.removeprefix("inv.")
        for c in main.columns
        if c.startswith("inv.") and (main.loc[main["policy"] == "head", c].eq(False)).any()
    }
    shown = {(cx["invariant"], cx["policy"]) for cx in report_json["counterexamples"]}
    mechanisms = {cx["mechanism"] for cx in report_json["counterexamples"] if cx["policy"] == "head"}
    head = main[main["policy"] == "head"]
    for name in head_violated:  # its own counterexample, or each of its mechanisms has one (under another)
        whys = set(head.loc[head[f"inv.{name}"].eq(False), f"why.{name}"].dropna())
        assert (name, "head") in shown or (whys and "" not in whys and whys <= mechanisms), name
    assert head_violated
    for cx in report_json["counterexamples"]:
        path = small_review.paths["html"].parent / cx["file"]
        loaded = read(path)
        replay = loaded.run()
        assert replay.digest == loaded.digest and cx["invariant"] in replay.violations
        assert len(cx["faults"]) == len(loaded.faults)
        assert cx["timeline"]


def test_findings_and_verification_are_listed(report_json: dict[str, Any]) -> None:
    assert [f["id"] for f in report_json["findings"]] == [f.id for f in FINDINGS]
    assert all(f["example"] for f in report_json["findings"] if f["reproduced"])
    beyond = {f.id for f in FINDINGS if f.deployment_ranges}
    assert beyond and {f["id"] for f in report_json["findings"] if f["deployment_ranges"]} == beyond
    rows = report_json["verification"]
    assert {r["policy"] for r in rows} == {"adr-104", "adr-111", "adr-112", "adr-122", "head"}
    assert all(r["schedules"] > 0 and r["bound"] == 1 for r in rows)


def test_each_verification_row_gives_a_command_that_writes_its_counterexamples(
    report_json: dict[str, Any], small_review: Any, tmp_path: Path
) -> None:
    """The section drew each violation's faults but no file: its command re-runs the row's enumeration
    (same schedules, same violations) and writes the files leaselab replay reproduces."""
    from typer.testing import CliRunner

    from leaselab.cli import app

    html = small_review.paths["html"].read_text(encoding="utf-8")
    rows = [r for r in report_json["verification"] if r["violations"]]
    assert rows
    for r in rows:
        assert r["command"] == f"leaselab verify {r['scenario']} --policy {r['policy']} --bound {r['bound']}"
        assert f"<code>{r['command']}</code>" in html
    row = rows[0]
    words = row["command"].split()[1:]
    ran = CliRunner().invoke(app, [*words, "--out", str(tmp_path), "--json"])
    assert ran.exit_code == 1
    doc = json.loads(ran.stdout)
    assert doc["schedules"] == row["schedules"]
    assert sorted({v["invariant"] for v in doc["violations"]}) == sorted(row["violated"])
    replayed = CliRunner().invoke(app, ["replay", doc["violations"][0]["counterexample"]])
    assert replayed.exit_code == 1 and "reproduced" in replayed.stdout


def test_provenance_records_how_it_was_made(report_json: dict[str, Any], rows: pd.DataFrame) -> None:
    made = report_json["provenance"]
    assert made["simulations"] == len(rows)
    assert "seeds = 4" in made["config_toml"] and "[[grid]]" in made["config_toml"]
    assert made["versions"]["pandas"] == pd.__version__
    assert made["commit"]


def test_the_provenance_gives_the_wall_time_per_simulation_and_per_phase(
    report_json: dict[str, Any], small_review: Any
) -> None:
    made = report_json["provenance"]
    assert set(made["phases_s"]) == {"sweep", "evidence", "figures"}
    assert all(seconds >= 0 for seconds in made["phases_s"].values())
    assert sum(made["phases_s"].values()) == pytest.approx(made["wall_s"])
    per_simulation = f"{1000 * made['wall_s'] / made['simulations']:.2f} ms per simulation"
    for page in ("html", "markdown"):
        text = small_review.paths[page].read_text(encoding="utf-8")
        assert text.count(per_simulation) == 2, page  # the line under the title and the provenance section
        phases = " · ".join(f"{name} {made['phases_s'][name]:.0f} s" for name in ("sweep", "evidence", "figures"))
        assert phases in text, page
    markdown = small_review.paths["markdown"].read_text(encoding="utf-8")
    assert f"({phases})\n- " in markdown  # the provenance list goes on on its own line


def test_the_glossary_carries_the_outcome_table(report_json: dict[str, Any], small_review: Any) -> None:
    """What every entry point may tell its caller and when that is true, in both documents."""
    from checks.outcome_table import OUTCOME_TABLE, table_rows

    assert report_json["outcome_table"] == table_rows()
    markdown = small_review.paths["markdown"].read_text(encoding="utf-8")
    html = small_review.paths["html"].read_text(encoding="utf-8")
    for rule in OUTCOME_TABLE:
        assert f"`{rule.checker}`" in markdown and rule.truth[:40] in markdown
        assert rule.truth[:40] in html.replace("&#39;", "'")


@pytest.mark.parametrize(
    ("key", "grid", "x"), [("intensity", "intensity", "intensity"), ("latency", "latency", "latency_ratio")]
)
def test_the_per_invariant_curve_of_head_equals_the_rows(
    report_json: dict[str, Any], rows: pd.DataFrame, key: str, grid: str, x: str
) -> None:
    """What the faults cause: per invariant of head, the simulations violating it at each point."""
    mine = report_json["curves"][key]["by_invariant"]
    assert mine["policy"] == "head"
    head = rows[(rows["grid"] == grid) & (rows["policy"] == "head")]
    violated = [c.removeprefix("inv.") for c in head.columns if c.startswith("inv.") and head[c].eq(False).any()]
    assert sorted(mine["cells"]) == sorted(violated) and violated
    for name, cells in mine["cells"].items():
        bad = head[f"inv.{name}"].eq(False)
        for value, sel in head.groupby(x).groups.items():
            k, n = int(bad[sel].sum()), len(sel)
            assert cells[f"{float(value):g}"].startswith(f"{k:,}/{n:,} ")
    assert mine["drawn"] == list(mine["cells"])[: len(mine["drawn"])] and 0 < len(mine["drawn"]) <= 8


def test_cost_rates_carry_an_interval(report_json: dict[str, Any]) -> None:
    for entry in report_json["cost"]["rows"]:
        assert entry["completion_lower"] <= entry["completion_rate"] <= entry["completion_upper"]
        assert entry["requeues_lower"] <= entry["requeues_per_run"] <= entry["requeues_upper"]
        assert entry["completion_text"].endswith("%]") and " [" in entry["requeues_text"]


def test_large_cost_changes_between_presets_are_said(report_json: dict[str, Any], small_review: Any) -> None:
    from reports.costs import big_changes

    rows = report_json["cost"]["rows"]
    presets = [p for p in ("adr-104", "adr-111", "adr-112", "adr-122", "head") if p in {r["policy"] for r in rows}]
    assert report_json["cost"]["changes"] == big_changes(rows, presets)
    html = small_review.paths["html"].read_text(encoding="utf-8")
    for change in report_json["cost"]["changes"]:
        assert str(escape(change)) in html


def test_each_distinct_mechanism_of_head_has_one_counterexample_named_by_it(
    report_json: dict[str, Any], rows: pd.DataFrame, small_review: Any
) -> None:
    """A mechanism is the unit: each finding or non-guarantee head's rows name gets one counterexample
    (whichever invariant showed it), two behind one invariant get two, and the file and the replay
    command name it."""
    head = _main(rows)
    head = head[head["policy"] == "head"]
    named = {str(v) for c in head.columns if c.startswith("why.") for v in head[c].dropna() if v}
    cxs = [cx for cx in report_json["counterexamples"] if cx["policy"] == "head" and not cx["grid"]]
    kept = [cx["mechanism"] for cx in cxs if not cx["mechanism"].startswith("unexplained")]
    assert named and set(kept) == named and len(kept) == len(set(kept))
    for cx in cxs:
        assert cx["met"] > 0
        if not cx["mechanism"].startswith("unexplained"):
            assert cx["file"].endswith(f"--{cx['mechanism']}.toml")
    html = small_review.paths["html"].read_text(encoding="utf-8")
    for cx in cxs:
        assert f"leaselab replay {cx['file']}</code>" in html


def test_an_unexplained_counterexample_before_head_is_not_called_unregistered(
    report_json: dict[str, Any], small_review: Any
) -> None:
    """The register explains head: an older preset's unexplained violation (a defect a later ADR fixed)
    is named as such, and only head's unexplained ones are red UNREGISTERED."""
    from reports.register import BEFORE_HEAD, named_counterexample

    assert named_counterexample({"mechanism": "unexplained: x", "role": "head"})["named"] == "UNREGISTERED"
    older = named_counterexample({"mechanism": "unexplained: x", "role": "first preset where it fails"})
    assert (older["named"], older["unregistered"]) == (BEFORE_HEAD, False)
    assert named_counterexample({"mechanism": "F-02", "role": "head"})["named"] == "F-02"
    html = small_review.paths["html"].read_text(encoding="utf-8")
    before = [c for c in report_json["counterexamples"] if c["mechanism"].startswith("unexplained")]
    before = [c for c in before if not c["role"].startswith("head")]
    assert before  # adr-111's unfenced writes: explained by no entry, fixed by ADR-112
    for cx in before:
        assert not cx["unregistered"] and cx["named"] == BEFORE_HEAD
        assert f"<code>{cx['invariant']}</code> under {cx['policy']}: {BEFORE_HEAD}" in html
