"""The report's "Met again where the register met it?" (reports/met_again.py): on hand-built rows, the
sentence when every recorded entry was met again, the table of an entry no longer met, the rows of other
policies left out, a run sharing no recorded cell; and on the small review, the section in both documents,
consistent with the record (every entry the record first met at a seed the small review ran is met again)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from checks.columns import INV, WHY
from register.met_rates import Cell, CellRecord, MetRecord, read_record
from reports.met_again import NOTHING_SHARED, met_again_view

WRITE = "non_idempotent_at_most_once"
SEQ = "unique_event_sequence"
DEFAULT = Cell("default", "adr-141")
RECORD = MetRecord(
    "hand-built",
    (CellRecord(DEFAULT, "adr-review grid main", 100, {"F-01": 40, "NG-identity": 50}, {"F-01": 2, "NG-identity": 0}),),
)


def frame(
    simulations: int, *, f01: bool, preset: str = "head", flags: str = "", scenario: str = "default"
) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for seed in range(simulations):
        row: dict[str, Any] = {
            **DEFAULT.document(), "scenario": scenario, "preset": preset, "flags": flags, "grid": "main",
            "policy": "head" if not flags else f"head+{flags}", "seed": seed,
        }  # fmt: skip
        row[INV + WRITE] = not (f01 and seed % 3 == 0)
        row[WHY + WRITE] = "F-01" if f01 and seed % 3 == 0 else None
        row[INV + SEQ] = seed % 2 == 1
        row[WHY + SEQ] = "NG-identity" if seed % 2 == 0 else None
        rows.append(row)
    return pd.DataFrame(rows)


def test_every_entry_met_again_is_one_sentence() -> None:
    view = met_again_view(frame(30, f01=True), RECORD)
    assert view["holds"] and not view["news"] and not view["unsure"]
    assert view["line"].startswith("Every entry the register records as met on these grids was met again (2 entries")
    assert {"entry": "F-01", "grid": "adr-review grid main"} in view["met_again"]


def test_an_entry_no_longer_met_is_a_row_with_its_expected_count_and_replay() -> None:
    view = met_again_view(frame(30, f01=False), RECORD)
    assert not view["holds"]
    [gone] = view["news"]
    assert gone["entry"] == "F-01" and gone["simulations"] == 30 and gone["expected"] == 12.0
    assert gone["replay"] == "leaselab run default --policy head --seed 2"
    assert view["line"].startswith("No longer met where the register met it: F-01")


def test_too_few_simulations_are_not_enough_to_say() -> None:
    view = met_again_view(frame(5, f01=False), RECORD)
    assert view["holds"] and not view["news"]
    assert [s["entry"] for s in view["unsure"]] == ["F-01"]


def test_other_policies_and_other_scenarios_share_no_recorded_cell() -> None:
    assert met_again_view(frame(50, f01=False, flags="idempotency_keys=true"), RECORD)["line"] == NOTHING_SHARED
    assert met_again_view(frame(50, f01=False, preset="adr-111"), RECORD)["line"] == NOTHING_SHARED
    assert met_again_view(frame(50, f01=False, scenario="happy_path"), RECORD)["cells"] == 0


@pytest.mark.slow
def test_the_small_review_meets_again_what_the_record_met_at_its_seeds(
    small_review: Any, report_json: dict[str, Any]
) -> None:
    view = report_json["met_again"]
    assert view["cells"] > 0 and view["holds"] and not view["news"]
    seeds = int(small_review.frame["seed"].max()) + 1
    explained = small_review.frame[small_review.frame["grid"].isin(["main", "deployment"])]  # the grids it explains
    shared = {Cell.of_row(r) for r in explained.to_dict("records")}
    expected = {
        (entry, rec.grid)
        for rec in read_record().cells
        if rec.cell in shared
        for entry, first in rec.first.items()
        if first < seeds
    }
    assert expected, "the small review shares no recorded cell where an entry was met at its seeds"
    assert expected <= {(m["entry"], m["grid"]) for m in view["met_again"]}
    html = small_review.paths["html"].read_text(encoding="utf-8")
    markdown = small_review.paths["markdown"].read_text(encoding="utf-8")
    assert 'id="met-again"' in html and view["line"] in html
    assert "### Met again where the register met it?" in markdown and view["line"] in markdown
