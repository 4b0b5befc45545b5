"""The report's "every failure explained" sentence says at which scale it was checked: how many
simulations of the judged policy the review examined at each fault range, on which transports, and where
the larger deployment-range search is."""

from __future__ import annotations

import pandas as pd

from reports.explained import LARGER_SEARCH, explained_by_ranges


def _rows(ranges: list[str], policies: list[str], transports: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "policy": policies,
            "fault_ranges": ranges,
            "transport": transports,
            "grid": ["deployment" if r == "deployment" else "main" for r in ranges],
            "scenario": ["default"] * len(ranges),
        }
    )


def test_the_sentence_counts_the_simulations_of_the_policy_at_each_range() -> None:
    rows = _rows(
        ["library", "library", "deployment", "library", "deployment"],
        ["head", "head", "head", "adr-104", "adr-104"],
        ["async", "sync", "async", "async", "async"],
    )
    line = explained_by_ranges([], rows)["line"]
    assert "2 simulations of head at the library's ranges and 1 at deployment ranges" in line
    assert "(transport: async, sync)" in line
    assert line.endswith(LARGER_SEARCH)


def test_without_a_deployment_grid_the_sentence_says_none_ran_there() -> None:
    rows = _rows(["library", "library"], ["head", "head"], ["async", "async"]).drop(columns=["fault_ranges"])
    line = explained_by_ranges([], rows)["line"]
    assert "2 simulations of head at the library's ranges and 0 at deployment ranges" in line
    assert "259,200 simulations" in line
