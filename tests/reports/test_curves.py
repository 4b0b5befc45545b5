"""The per-invariant curve of head (``reports.curves``) on hand-built rows: it moves with the faults
where the per-policy "any invariant" curve is saturated by a failure that needs none."""

from __future__ import annotations

import pandas as pd

from reports import curves, tables


def _rows() -> pd.DataFrame:
    """Grid ``intensity``, 10 seeds per point: ``design`` fails everywhere (no fault needed); ``faulty``
    fails in 0, 2, 5 and 10 of the 10 simulations at intensity 0, 1, 2 and 4; ``held`` never fails. An
    older preset rides along; head+flag is not head."""
    records = []
    for policy, preset, flags in (("head", "head", ""), ("adr-111", "adr-111", ""), ("head+k", "head", "k=true")):
        for intensity, failing in ((0.0, 0), (1.0, 2), (2.0, 5), (4.0, 10)):
            for seed in range(10):
                records.append(
                    {
                        "grid": "intensity",
                        "policy": policy,
                        "preset": preset,
                        "flags": flags,
                        "intensity": intensity,
                        "seed": seed,
                        "inv.design": False,
                        "inv.faulty": seed >= failing,
                        "inv.held": True,
                    }
                )
    return pd.DataFrame.from_records(records)


def test_the_any_invariant_curve_is_flat_but_the_per_invariant_curve_of_head_rises() -> None:
    rows = _rows()
    saturated = tables.curve(rows, "intensity", "intensity", ["head"])
    assert list(saturated["rate"]) == [1.0, 1.0, 1.0, 1.0]
    head = curves.head_label(rows, ["adr-111", "head+k", "head"])
    assert head == "head"
    mine = curves.by_invariant(rows, "intensity", "intensity", head)
    assert sorted(set(mine["policy"])) == ["design", "faulty"]  # held is not drawn
    faulty = mine[mine["policy"] == "faulty"]
    assert list(faulty["violations"]) == [0, 2, 5, 10] and list(faulty["simulations"]) == [10] * 4
    assert list(mine[mine["policy"] == "design"]["rate"]) == [1.0] * 4
    assert all(faulty["lower"] <= faulty["rate"]) and all(faulty["rate"] <= faulty["upper"])
    assert curves.drawn(mine) == ["design", "faulty"]  # the most violated first


def test_no_head_no_curve() -> None:
    rows = _rows()
    assert curves.head_label(rows[rows["policy"] != "head"], ["adr-111", "head+k"]) is None
    assert curves.by_invariant(rows, "latency", "intensity", "head").empty
