"""Is every failure of head explained? The report's answer, at the library's fault ranges and at those of
real deployments.

The review re-runs violating ``head`` simulations of the primary grid (each scenario at the ranges it
declares) and of every deployment-range grid (``fault_ranges = "deployment"``: clock skew up to an hour
either way, store stalls up to two leases) and matches each against the recognisers of the findings
register and of the recorded non-guarantees. This module turns those counts into the two tables the
answer shows side by side and the one sentence that says whether the explanation holds at both ranges
or where it does not. Pure: rows and plain records in, JSON-able data out; knows nothing of how the
violations were recognised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from register.findings import FINDINGS_DIR
from reports.register import explanations_view

LIBRARY = "library"
DEPLOYMENT = "deployment"
OPEN_CASES = sorted((FINDINGS_DIR / "open").glob("*.toml"))
"""Cases a longer search met that the register does not explain yet: the larger search is not clean."""
LARGER_SEARCH = (
    "The same check at a user's scale, 259,200 simulations at deployment ranges on both transports, is the "
    "nightly search (`python -m benchmarks.triage_ranges --search`), not part of this report"
    + (
        f"; its last run met {len(OPEN_CASES)} cases nothing explains yet (`register/entries/open/`)."
        if OPEN_CASES
        else "."
    )
)


def scale_of(frame: pd.DataFrame, wide: pd.DataFrame, policy: str) -> str:
    """One sentence: how many simulations of ``policy`` this review examined at each range, and on which
    transport, so that "every failure explained" says at which scale it was checked."""
    if frame.empty or "policy" not in frame.columns:
        return LARGER_SEARCH
    at_deployment = (
        frame["fault_ranges"] == DEPLOYMENT if "fault_ranges" in frame.columns else pd.Series(False, index=frame.index)
    )
    of_policy = frame["policy"] == policy
    library_n = int((of_policy & ~at_deployment).sum())
    deployment_n = int((of_policy & at_deployment).sum())
    transports = sorted({str(t) for t in frame["transport"]}) if "transport" in frame.columns else []
    on = f" (transport: {', '.join(transports)})" if transports else ""
    return (
        f"Checked at this review's scale: {library_n:,} simulations of {policy} at the library's ranges and "
        f"{deployment_n:,} at deployment ranges{on}. {LARGER_SEARCH}"
    )


def deployment_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of deployment-range grids (none when the rows carry no ``fault_ranges`` column)."""
    if frame.empty or "fault_ranges" not in frame.columns:
        return frame.iloc[0:0]
    return frame[frame["fault_ranges"] == DEPLOYMENT]


def explained_by_ranges(explanations: Sequence[Mapping[str, Any]], frame: pd.DataFrame) -> dict[str, Any]:
    """The answer at both ranges: the library's table, the deployment grids' table (None when the review
    has no deployment-range grid), and one sentence saying where the explanation holds and where not."""
    library = explanations_view([e for e in explanations if e.get("ranges", LIBRARY) == LIBRARY])
    wide = deployment_rows(frame)
    if wide.empty:
        return {
            "library": library,
            "deployment": None,
            "line": f"{library['line']} {scale_of(frame, wide, library['policy'])}",
            "holds": not library["unregistered"],
            "side_by_side": [],
        }
    deployment = explanations_view([e for e in explanations if e.get("ranges") == DEPLOYMENT])
    policy = library["policy"] if library["rows"] else deployment["policy"]
    grids = ", ".join(sorted(set(wide["grid"])))
    head_n = int((wide["policy"] == policy).sum())
    deployment["about"] = (
        f"grid {grids}: {wide['scenario'].nunique()} scenarios at deployment fault ranges, "
        f"{head_n:,} simulations of {policy}"
    )
    failing = [name for name, view in ((LIBRARY, library), (DEPLOYMENT, deployment)) if view["unregistered"]]
    if not failing:
        line = (
            f"At both fault ranges every examined failure of {policy} is explained: at the library's ranges and "
            "at those of real deployments, each examined violating simulation matches a registered finding or a "
            "non-guarantee the spec records."
        )
    else:
        where = " and ".join(
            f"at the {'library' if name == LIBRARY else 'deployment'} ranges "
            f"({', '.join((library if name == LIBRARY else deployment)['unregistered'])})"
            for name in failing
        )
        held = [name for name in (LIBRARY, DEPLOYMENT) if name not in failing]
        line = f"Not every failure of {policy} is explained: UNREGISTERED violations {where}" + (
            f"; at the {held[0]} ranges every examined failure is explained." if held else "."
        )
    return {
        "library": library,
        "deployment": deployment,
        "line": f"{line} {scale_of(frame, wide, policy)}",
        "holds": not failing,
        "side_by_side": side_by_side(library, deployment),
    }


def side_by_side(library: Mapping[str, Any], deployment: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per invariant violated under head at either range: its library row and its deployment
    row (None where it held), invariants in the order the library's table lists them, then the rest."""
    at_library = {r["invariant"]: r for r in library["rows"]}
    at_deployment = {r["invariant"]: r for r in deployment["rows"]}
    names = [*at_library, *[n for n in at_deployment if n not in at_library]]
    return [{"invariant": n, "library": at_library.get(n), "deployment": at_deployment.get(n)} for n in names]


__all__ = [
    "DEPLOYMENT",
    "LARGER_SEARCH",
    "LIBRARY",
    "deployment_rows",
    "explained_by_ranges",
    "explanations_view",
    "scale_of",
]
