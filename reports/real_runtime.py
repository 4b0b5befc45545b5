"""The report's "Checked against the real runtime" section as plain data.

Always the register's record (:mod:`register.real_code`): which findings and non-guarantees
were reproduced on the real PHP, on which engine and how, or why not. With ``leaselab report
--runtime-src PATH`` also the live conformance run (``leaselab conform --json``'s document):
per engine, every check's cases, divergences and unexplained ones, and the reasons that
explain the rest. Words are written from the numbers here; the templates only lay them out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from register import real_code

ENGINE_NAMES = {"sqlite": "SQLite", "mariadb": "MariaDB", "postgres": "PostgreSQL"}


def _name(engine: str) -> str:
    return ENGINE_NAMES.get(engine, engine)


def _count(kind: str) -> tuple[int, int]:
    mine = [r for r in real_code.RECORDS if r.id.startswith(kind)]
    return sum(r.reproduced for r in mine), len(mine)


def _live(doc: Mapping[str, Any]) -> dict[str, Any]:
    engines = list(doc["engines"])
    checks: list[str] = []
    cells: dict[str, dict[str, dict[str, Any]]] = {}
    reasons: dict[str, dict[str, int]] = {}
    for c in doc["checks"]:
        if c["check"] not in checks:
            checks.append(c["check"])
        cells.setdefault(c["check"], {})[c["engine"]] = c
        for e in c["explanations"]:
            reasons.setdefault(e["reason"], {}).setdefault(c["engine"], 0)
            reasons[e["reason"]][c["engine"]] += e["cases"]
    totals = {
        e: {
            "checks": sum(1 for c in doc["checks"] if c["engine"] == e),
            "cases": sum(c["cases"] for c in doc["checks"] if c["engine"] == e),
            "divergences": sum(c["divergences"] for c in doc["checks"] if c["engine"] == e),
            "unexplained": sum(c["unexplained"] for c in doc["checks"] if c["engine"] == e),
        }
        for e in engines
    }
    unexplained = int(doc["unexplained"])
    line = (
        f"{len(checks)} checks x {len(engines)} engines ({', '.join(_name(e) for e in engines)}), "
        f"{sum(t['cases'] for t in totals.values()):,} cases: "
        + (
            "every divergence is explained."
            if unexplained == 0
            else f"{unexplained:,} divergent cases unexplained (leaselab conform exits 1)."
        )
    )
    return {
        "engines": [_name(e) for e in engines],
        "rows": [
            {
                "check": name,
                "cells": [
                    cells[name].get(e, {"cases": 0, "divergences": 0, "unexplained": 0, "explanations": []})
                    for e in engines
                ],
            }
            for name in checks
        ],
        "totals": [totals[e] for e in engines],
        "reasons": [{"reason": r, "cases": [by.get(e, 0) for e in engines]} for r, by in sorted(reasons.items())],
        "unexplained": unexplained,
        "line": line,
        "runtime_src": str(doc.get("runtime_src", "")),
        "wall_s": doc.get("wall_s"),
    }


def view(conformance: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The section: the register's table, and the live checks when ``conformance`` (conform's document) is
    given."""
    f_done, f_all = _count("F-")
    ng_done, ng_all = _count("NG-")
    engines = sorted({_name(r.reproduced_on) for r in real_code.RECORDS if r.reproduced_on})
    return {
        "line": (
            f"{f_done} of {f_all} findings and {ng_done} of {ng_all} non-guarantees reproduced on the real PHP "
            f"({', '.join(engines)}); the others' mechanisms lie in code this check does not run."
        ),
        "rows": [
            {
                "id": r.id,
                "reproduced_on": _name(r.reproduced_on) if r.reproduced_on else None,
                "how": r.how.removeprefix("not reproduced: "),
            }
            for r in real_code.RECORDS
        ],
        "live": None if conformance is None else _live(conformance),
    }


__all__ = ["view"]
