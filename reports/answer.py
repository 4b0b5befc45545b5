"""The answer: each policy's headline and failed invariants, and the text of a summary cell.

Why apart from :mod:`reports.sections`: these are the words a reviewer reads first, and their rules
(an invariant that judged no case is neither held nor bounded; every rate with its interval) are kept
in one small place with their tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from reports import tables
from reports.stats import DASH, percent


def interval(lower: float, upper: float) -> str:
    return f"{percent(lower)}{DASH}{percent(upper)}"


NO_CASE = "no case judged"
"""What a cell says where the invariant judged no case in any of its simulations: no bound, no "held"."""


def cell_text(k: int, n: int, lower: float, upper: float, judged: int = -1) -> str:
    """'k/n · rate [lower-upper]', '0/n · ≤ r3' (rule of three), or '0/n · no case judged' when the
    invariant had nothing to judge in all n simulations (``judged`` 0; -1: the rows do not say)."""
    if n == 0:
        return DASH
    if k == 0 and judged == 0:
        return f"0/{n:,} · {NO_CASE}"
    if k == 0:
        return f"0/{n:,} · ≤{percent(3 / n if n > 3 else 1.0)}"
    return f"{k:,}/{n:,} · {percent(k / n)} [{interval(lower, upper)}]"


def _failed(cells: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The failed invariants of one policy, worst rate first: name, counts, rate and interval."""
    failed = [
        {
            "invariant": name,
            "violations": c["violations"],
            "simulations": c["simulations"],
            "rate": c["rate"],
            "lower": c["lower"],
            "upper": c["upper"],
            "text": f"{name} {percent(c['rate'])} [{interval(c['lower'], c['upper'])}]",
        }
        for name, c in cells.items()
        if c["violations"] > 0
    ]
    return sorted(failed, key=lambda f: (-f["violations"], f["invariant"]))


def verdict(policy: str, summary: Mapping[str, Any], frame: pd.DataFrame) -> dict[str, Any]:
    """One policy's answer, written from its numbers: a headline sentence, then the failed invariants.

    The headline leads with how many invariants held in every simulation, then the worst failure
    with its rate, 95% interval and the scenario where it was met most, so the reader gets the answer
    before any list of names."""
    cells = {name: summary["cells"][name][policy] for name in summary["invariants"]}
    n = next(iter(cells.values()))["simulations"] if cells else 0
    failed = _failed(cells)
    unjudged = [name for name, c in cells.items() if not c["violations"] and c.get("judged", -1) == 0]
    held = len(cells) - len(failed) - len(unjudged)  # one that judged no case showed nothing: not "held"
    bound = percent(3 / n if n > 3 else 1.0)
    idle = f", {len(unjudged)} judged no case" if unjudged else ""
    if not failed and not unjudged:
        headline = (
            f"{policy}: all {len(cells)} invariants held in all {n:,} simulations "
            f"(each at most {bound} at 95% confidence)."
        )
    elif not failed:
        headline = (
            f"{policy}: {held} of {len(cells)} invariants held in all {n:,} simulations "
            f"(each at most {bound} at 95% confidence){idle}."
        )
    else:
        worst = failed[0]
        where = tables.worst_scenarios(frame, policy, worst["invariant"], limit=1)
        headline = (
            f"{policy}: {held} of {len(cells)} invariants held in all {n:,} simulations{idle}; "
            f"{len(failed)} failed, "
            f"worst {worst['invariant']} {percent(worst['rate'])} [{interval(worst['lower'], worst['upper'])}]"
            + "".join(f", mostly in {s} ({k}/{m})" for s, k, m in where)
            + "."
        )
    return {
        "policy": policy,
        "headline": headline,
        "sentence": headline.removeprefix(f"{policy}: "),
        "held": held,
        "unjudged": unjudged,
        "invariants": len(cells),
        "simulations": n,
        "bound": bound,
        "failed": failed,
        "any": summary["any"][policy],
    }
