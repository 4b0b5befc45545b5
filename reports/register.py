"""Violations against the findings register, as the report shows them: the sweep's and the enumeration's.

:func:`explanations_view`: per invariant violated under head in the sweep, how many of its violating
simulations a registered finding or a recorded non-guarantee explains, and which are UNREGISTERED.

:func:`verification_rows`: each violated invariant of an exhaustively verified small scenario comes
with its first counterexample, which the review replayed and matched with the same recognisers.
Here each gets a status a reviewer can act on:

- ``finding``: a registered finding's recogniser matched (F-…);
- ``non-guarantee``: a recorded non-guarantee's recogniser matched (NG-…);
- ``fixed later``: a preset before head, no recogniser matched, and head holds the invariant on the
  same scenario at the same bound (a later decision fixed it);
- ``before head``: a preset before head, no recogniser matched, and head violates it too (the
  register explains head's violations; head's row says what they are);
- ``UNREGISTERED``: head (or a flagged policy), and no recogniser matched: the one status that needs
  a new finding or a fix, and the only one shown red.

Knows the evidence as plain data (the keys of :mod:`reports.sections`' views), nothing of how it
was produced.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from reports.stats import DASH, wilson
from reports.wording import fault_text, readable

HEAD = "head"
STATUS_TEXT = {
    "finding": "registered finding",
    "non-guarantee": "recorded non-guarantee",
    "fixed later": "holds under head here: fixed by a later decision",
    "before head": "not in the register (it explains head); head violates it here too",
    "UNREGISTERED": "UNREGISTERED: no registered finding or recorded non-guarantee matches",
}


def _status(row: Mapping[str, Any], violation: Mapping[str, Any], head_violated: set[str] | None) -> str:
    if violation["kind"]:
        return str(violation["kind"])
    if row["policy"] == HEAD or head_violated is None:
        return "UNREGISTERED"
    return "before head" if violation["invariant"] in head_violated else "fixed later"


def _verdict(row: Mapping[str, Any]) -> str:
    """'no violation up to bound 1', or '5 invariants violated up to bound 1' (the list is beside it)."""
    n = len(row["violated"])
    if not n:
        return str(row["verdict"])
    what = f"{n} invariant{'s' if n != 1 else ''} violated"
    if not row["complete"]:
        return f"{what} in the {row['schedules']:,} schedules explored (bound {row['bound']} not exhausted)"
    return f"{what} up to bound {row['bound']}"


def verification_rows(verification: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The verification rows, each violation with its status and a line of text."""
    head_violated = {
        (r["scenario"], r["bound"]): set(r["violated"]) for r in verification if r["policy"] == HEAD and r["complete"]
    }
    out = []
    for row in verification:
        violations = []
        for v in row.get("violations", ()):
            status = _status(row, v, head_violated.get((row["scenario"], row["bound"])))
            faults = ", ".join(fault_text(f) for f in v["faults"]) or "no fault: the schedule alone"
            named = f"{str(v['label']).split(',')[0]}: " if v["kind"] else ""  # an NG's source is in the title
            violations.append({**v, "status": status, "faults_text": faults, "text": named + STATUS_TEXT[status]})
        out.append(
            {
                **row,
                "violations": violations,
                "verdict_text": _verdict(row),
                "command": verify_command(row),
                "unregistered": [v["invariant"] for v in violations if v["status"] == "UNREGISTERED"],
            }
        )
    return out


def verify_command(row: Mapping[str, Any]) -> str:
    """The command that re-runs one row's enumeration and writes each of its counterexamples as a file
    ``leaselab replay`` reproduces: the report's verification uses the CLI's defaults (all fault families,
    world seed 0), so the same schedules come out in the same order."""
    words = ["leaselab", "verify", str(row["scenario"]), "--policy", str(row["policy"]), "--bound", str(row["bound"])]
    if not row["complete"]:  # stopped at a schedule cap: the same cap gives the same schedules
        words += ["--max-schedules", str(row["schedules"])]
    return shlex.join(words)


def verification_summary(verified: Sequence[Mapping[str, Any]]) -> str:
    """One sentence: is every violation of head explained, and what the older presets' violations are."""
    if not verified:
        return "Not run."
    mine = [v for r in verified if r["policy"] == HEAD for v in r["violations"]]
    unregistered = sorted(
        {f"{v['invariant']} ({r['policy']}, {r['scenario']})" for r in verified for v in r["violations"]
         if v["status"] == "UNREGISTERED"}
    )  # fmt: skip
    ids = sorted({str(v["explained_by"]) for v in mine if v["explained_by"]})
    if unregistered:
        first = f"UNREGISTERED violations: {', '.join(unregistered)}."
    elif mine:
        first = (
            f"Every violation of head the enumeration found is a registered finding or a recorded non-guarantee "
            f"({', '.join(ids)})."
        )
    else:
        first = "Head violated nothing the enumeration reached."
    older = [v for r in verified if r["policy"] != HEAD for v in r["violations"]]
    if not older:
        return first
    matched = sum(bool(v["kind"]) for v in older)
    fixed = sum(v["status"] == "fixed later" for v in older)
    also = sum(v["status"] == "before head" for v in older)
    return (
        f"{first} Other policies: {len(older)} violations, {matched} matched by the register, {fixed} fixed by a "
        f"later decision (head holds the invariant there), {also} not in the register but violated under head too."
    )


def _met(item: Mapping[str, Any]) -> str:
    """How often an entry explained a violation, and for a rare one (``sim.review.rare``) its splitting
    estimate, or why there is none, with the count's Wilson interval per 100,000 simulations; the
    narrower of the two leads."""
    rare = item.get("rare")
    if not rare:
        return str(item["simulations"])
    low, high = wilson(int(rare["met"]), int(rare["simulations"]))
    plain = (
        f"plain {rare['met']} of {int(rare['simulations']):,}: {readable(low * 100_000)} to "
        f"{readable(high * 100_000)} in 100,000 (Wilson 95%)"
    )
    interval = rare.get("interval") or []
    if not rare.get("text"):
        said = [plain, str(rare.get("why_none", ""))]
    elif len(interval) == 2 and interval[1] - interval[0] > high - low:
        said = [plain, f"the splitting estimate is wider: {rare['text']}"]  # the count says more
    else:
        said = [str(rare["text"]), plain]
    return "; ".join([str(item["simulations"]), *[x for x in said if x]])


def explanations_view(explanations: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per invariant violated under head: explained by a registered finding, by a recorded non-guarantee,
    or UNREGISTERED (an examined violation no recogniser matched); plus one line saying which."""
    rows = []
    for e in explanations:
        by = list(e["explained"])
        kinds = {x["kind"] for x in by}
        if e["unexplained"]:
            status = "UNREGISTERED"
        elif not e["examined"]:
            status = "not examined"
        elif kinds == {"finding"}:
            status = "registered finding"
        elif kinds == {"non-guarantee"}:
            status = "recorded non-guarantee"
        else:
            status = "finding and non-guarantee"
        parts = [f"{x['label']} ({_met(x)})" for x in by]
        if e["unexplained"]:
            parts.append(f"nothing registered ({e['unexplained']})")
        examined = (
            f"all {e['violations']:,}"
            if e["examined"] >= e["violations"]
            else f"{e['examined']:,} of {e['violations']:,}"
        )
        ids = [f"{x['id']} ({_met(x)})" for x in by] + (
            [f"nothing registered ({e['unexplained']})"] if e["unexplained"] else []
        )
        rows.append(
            {
                **e,
                "status": status,
                "by_text": "; ".join(parts) or DASH,
                "by_ids": "; ".join(ids) or DASH,
                "by_title": "; ".join(x["label"] for x in by),
                "examined_text": examined,
            }
        )
    unregistered = [r["invariant"] for r in rows if r["status"] == "UNREGISTERED"]
    unexamined = [r["invariant"] for r in rows if r["status"] == "not examined"]
    policy = rows[0]["policy"] if rows else "head"
    if not rows:
        line = f"{policy} violated no invariant: nothing to explain."
    elif unregistered:
        line = (
            f"{policy} has UNREGISTERED violations of {', '.join(unregistered)}: "
            "no registered finding or recorded non-guarantee explains them."
        )
    elif unexamined:
        line = f"Every examined violation under {policy} is explained; not examined: {', '.join(unexamined)}."
    else:
        line = (
            f"Every failure of {policy} is explained: each examined violating simulation matches a registered finding "
            "(register/entries) or a non-guarantee the spec records."
        )
    return {"rows": rows, "line": line, "unregistered": unregistered, "policy": policy}


BEFORE_HEAD = "not in the register (it explains head)"
"""What an unexplained counterexample of a preset before head is called: the register explains head, so
a historic defect a later ADR fixed is not news, and red UNREGISTERED would say it is."""


def named_counterexample(cx: dict[str, Any]) -> dict[str, Any]:
    """``cx`` with ``unregistered`` (an unexplained mechanism met under head: news) and ``named`` (the
    mechanism as the report names it: its register id, UNREGISTERED, or :data:`BEFORE_HEAD`)."""
    mechanism = str(cx.get("mechanism", ""))
    unexplained = mechanism.startswith("unexplained")
    on_head = str(cx.get("role", "")).startswith("head")
    cx["unregistered"] = unexplained and on_head
    cx["named"] = ("UNREGISTERED" if on_head else BEFORE_HEAD) if unexplained else mechanism
    return cx
