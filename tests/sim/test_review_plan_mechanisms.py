"""Which rows the review shrinks, on hand-built rows: one per distinct mechanism of head (the ``why.*``
columns its sweep workers wrote), whichever invariant showed it, so a second mechanism behind an invariant
gets its own counterexample; one per invariant under the first preset where it fails; and at deployment
ranges only what the library's ranges did not meet."""

from __future__ import annotations

from typing import Any

import pandas as pd

from sim.review.jobs import UNEXPLAINED
from sim.review.plan import mechanism_rows, plan_shrinks

LIBRARY = {"main"}


def row(policy: str, seed: int, *, grid: str = "main", faults: int = 1, **verdicts: str | None) -> dict[str, Any]:
    """A sweep row of ``policy``; each keyword names an invariant violated there and its ``why`` (None:
    the row did not explain it)."""
    out: dict[str, Any] = {
        "grid": grid,
        "scenario": "default",
        "policy": policy,
        "preset": "adr-111" if policy == "adr-111" else "head",
        "flags": "",
        "intensity": 1.0,
        "seed": seed,
        "digest": f"{seed:032x}",
        "fault_ranges": "deployment" if grid == "deployment" else "library",
        "fault.crash": faults,
    }
    for name in ("a", "b"):
        out[f"inv.{name}"] = name not in verdicts
        out[f"why.{name}"] = verdicts.get(name) if name in verdicts else None
    return out


def frame(*rows: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def planned(data: pd.DataFrame, deployment: tuple[str, ...] = ()) -> list[tuple[str, str, str, int, str]]:
    grids = LIBRARY | set(deployment)
    jobs = plan_shrinks(data, ["adr-111", "head"], {}, 10, grids, deployment)
    return [(j.label, j.invariant, j.mechanism, j.cell.seed, j.grid) for j in jobs]


def test_two_mechanisms_behind_one_invariant_get_a_counterexample_each() -> None:
    data = frame(row("head", 0, a="F-01"), row("head", 1, a="F-18"), row("head", 2, a="F-01"))
    assert planned(data) == [("head", "a", "F-01", 0, ""), ("head", "a", "F-18", 1, "")]


def test_one_invariant_one_mechanism_is_one_counterexample_as_before() -> None:  # the near miss
    data = frame(row("head", 0, a="F-01"), row("head", 1, a="F-01"))
    assert planned(data) == [("head", "a", "F-01", 0, "")]


def test_a_mechanism_behind_two_invariants_is_shown_once_under_the_first() -> None:
    data = frame(row("head", 0, b="NG-identity"), row("head", 1, a="NG-identity", b="NG-identity"))
    assert planned(data) == [("head", "a", "NG-identity", 1, "")]


def test_unexplained_violations_get_one_per_invariant() -> None:
    data = frame(row("head", 0, a="", b=""), row("head", 1, a=""), row("head", 2, a="F-02"))
    assert planned(data) == [
        ("head", "a", UNEXPLAINED, 0, ""),
        ("head", "a", "F-02", 2, ""),
        ("head", "b", UNEXPLAINED, 0, ""),
    ]


def test_rows_that_did_not_explain_give_one_per_invariant_with_no_mechanism_planned() -> None:
    data = frame(row("head", 3, a=None), row("head", 1, a=None, faults=0))
    assert planned(data) == [("head", "a", "", 1, "")]  # fewest faults first, as before


def test_the_first_preset_where_it_fails_keeps_one_per_invariant() -> None:
    data = frame(
        row("adr-111", 0, a=None), row("adr-111", 1, a=None), row("head", 0, a="F-01"), row("head", 1, a="F-18")
    )
    assert planned(data) == [("adr-111", "a", "", 0, ""), ("head", "a", "F-01", 0, ""), ("head", "a", "F-18", 1, "")]
    roles = [j.role for j in plan_shrinks(data, ["adr-111", "head"], {}, 10, LIBRARY)]
    assert roles == ["first preset where it fails", "head", "head"]


def test_head_failing_first_says_both_roles() -> None:
    data = frame(row("head", 0, a="F-01"))
    assert [j.role for j in plan_shrinks(data, ["adr-111", "head"], {}, 10, LIBRARY)] == [
        "head, and the first preset where it fails"
    ]


def test_deployment_ranges_add_only_the_mechanisms_the_library_did_not_meet() -> None:
    data = frame(
        row("head", 0, a="F-01"),
        row("head", 5, grid="deployment", a="F-01"),
        row("head", 6, grid="deployment", a="F-18"),
    )
    assert planned(data, ("deployment",)) == [("head", "a", "F-01", 0, ""), ("head", "a", "F-18", 6, "deployment")]


def test_the_simulations_that_showed_a_mechanism_count_every_invariant_it_explains() -> None:
    data = frame(
        row("head", 0, a="NG-identity"),
        row("head", 1, b="NG-identity"),
        row("head", 2, a=""),
        row("head", 3, a="", b="NG-identity"),
        row("head", 4, grid="deployment", a="NG-identity"),  # another grid: not counted
    )
    met = {m: n for m, _, n in mechanism_rows(data, "head", "a", LIBRARY)}
    assert met == {"NG-identity": 3, UNEXPLAINED: 2}
