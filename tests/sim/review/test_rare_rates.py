"""Rare rates in the report (``sim.review.rare``): an entry its grid met fewer than ten times gets a rate
with an interval beside its count: a multilevel splitting estimate over rows of that grid when the entry
has a chain, else the plain Wilson interval and why no estimator applies; an entry met ten times or more
keeps its count alone."""

from __future__ import annotations

from typing import Any

import pandas as pd

from reports.register import explanations_view
from scenarios.loader import load_scenario
from sim.review.rare import RARE_BELOW, rare_rates
from sim.world.simulate import simulate


def rows(count: int) -> pd.DataFrame:
    scenario = load_scenario("single_run")
    return pd.DataFrame(
        [
            {
                "policy": "head",
                "preset": "head",
                "flags": "",
                "grid": "wide",
                "scenario": "single_run",
                "intensity": 1.0,
                "seed": seed,
                "digest": simulate(scenario, "head", seed).digest,
                "fault_ranges": "deployment",
            }
            for seed in range(count)
        ]
    )


def explanation(entries: dict[str, int]) -> dict[str, Any]:
    return {
        "invariant": "settles_by_owner",
        "policy": "head",
        "grid": "wide",
        "ranges": "deployment",
        "violations": sum(entries.values()),
        "examined": sum(entries.values()),
        "unexplained": 0,
        "explained": [
            {"id": key, "label": key, "kind": "finding", "simulations": n} for key, n in sorted(entries.items())
        ],
    }


def test_a_rare_entry_with_a_chain_gets_a_splitting_estimate_and_one_without_a_plain_interval() -> None:
    explained = [explanation({"F-15": 2, "F-05": 3, "F-12": RARE_BELOW})]
    records = rare_rates(rows(6), ["head"], explained, {}, roots=4, splits=2)
    by_id = {r["id"]: r for r in records}
    assert set(by_id) == {"F-15", "F-05"}  # F-12, met ten times, keeps its count alone
    assert by_id["F-15"]["estimate"]["estimator"] == "multilevel splitting"
    assert by_id["F-15"]["estimate"]["roots"] == 4  # 4 drawn of the grid's 6 rows
    assert "multilevel splitting" in by_id["F-15"]["text"]
    assert by_id["F-05"]["text"] == "" and "no chain to split on" in by_id["F-05"]["why_none"]
    items = {item["id"]: item for item in explained[0]["explained"]}
    assert items["F-15"]["rare"]["met"] == 2 and items["F-15"]["rare"]["simulations"] == 6
    assert "rare" not in items["F-12"]
    shown = explanations_view(explained)["rows"][0]["by_text"]
    assert "F-15 (2; " in shown and "plain 2 of 6:" in shown and "(Wilson 95%)" in shown
    assert "multilevel splitting over its chain, 4 rows" in shown
    assert "F-05 (3; plain 3 of 6:" in shown and "no chain to split on" in shown
    assert "F-12 (10)" in shown


def test_the_same_review_gives_the_same_estimate() -> None:
    first = rare_rates(rows(5), ["head"], [explanation({"F-18": 1})], {}, roots=3, splits=2)
    second = rare_rates(rows(5), ["head"], [explanation({"F-18": 1})], {}, roots=3, splits=2)
    assert first == second and first[0]["estimate"]["roots"] == 3
    every = rare_rates(rows(5), ["head"], [explanation({"F-18": 1})], {}, roots=50, splits=2)
    assert every[0]["estimate"]["roots"] == 5  # a grid smaller than the roots asked for: each row once


def test_without_head_nothing_is_estimated() -> None:
    frame = rows(2).assign(policy="adr-104", preset="adr-104")
    explained = [explanation({"F-15": 1})]
    assert rare_rates(frame, ["adr-104"], explained, {}, roots=2, splits=2) == []
    assert "rare" not in explained[0]["explained"][0]


def test_the_narrower_interval_leads() -> None:
    item = {"id": "F-18", "label": "F-18", "kind": "finding", "simulations": 1}
    wide = {"met": 1, "simulations": 13_200, "text": "about 0 in 100,000 [0, 1,500]", "interval": [0.0, 0.015]}
    tight = {**wide, "text": "about 3 in 100,000 [2, 4]", "interval": [0.00002, 0.00004]}
    one = explanation({"F-18": 1})
    one["explained"] = [{**item, "rare": wide}]
    shown = explanations_view([one])["rows"][0]["by_text"]
    assert shown.startswith("F-18 (1; plain 1 of 13,200:") and "the splitting estimate is wider" in shown
    one["explained"] = [{**item, "rare": tight}]
    assert explanations_view([one])["rows"][0]["by_text"].startswith("F-18 (1; about 3 in 100,000 [2, 4]; plain")
