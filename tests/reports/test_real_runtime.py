"""The report's real-runtime section: the register's table always, the live checks when conform ran."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from leaselab.cmd_report import _command
from register import real_code
from reports.real_runtime import view


def _check(check: str, engine: str, cases: int, divergences: int = 0, unexplained: int = 0) -> dict[str, Any]:
    explained = divergences - unexplained
    return {
        "check": check,
        "engine": engine,
        "cases": cases,
        "divergences": divergences,
        "unexplained": unexplained,
        "explanations": [{"reason": "error_class is the FQCN", "cases": explained}] if explained else [],
    }


def test_without_a_conform_run_the_section_is_the_registers_table() -> None:
    section = view(None)
    assert section["live"] is None
    assert [r["id"] for r in section["rows"]] == [r.id for r in real_code.RECORDS]
    assert all(
        bool(r["reproduced_on"]) == rec.reproduced for r, rec in zip(section["rows"], real_code.RECORDS, strict=True)
    )
    assert not any(r["how"].startswith("not reproduced") for r in section["rows"])
    findings = [r for r in real_code.RECORDS if r.id.startswith("F-")]
    done_f = sum(r.reproduced for r in findings)
    assert section["line"].startswith(f"{done_f} of {len(findings)} findings and ")
    assert "(MariaDB)" in section["line"]


def test_the_live_checks_are_laid_out_per_check_and_engine() -> None:
    doc = {
        "engines": ["sqlite", "mariadb"],
        "unexplained": 0,
        "checks": [
            _check("T4 renewLease", "sqlite", 200, 12, 0),
            _check("reaper", "sqlite", 200),
            _check("T4 renewLease", "mariadb", 200, 3, 0),
            _check("reaper", "mariadb", 201, 5, 0),
        ],
        "wall_s": 12.5,
    }
    live = view(doc)["live"]
    assert [r["check"] for r in live["rows"]] == ["T4 renewLease", "reaper"]
    assert [c["divergences"] for c in live["rows"][1]["cells"]] == [0, 5]
    assert live["totals"] == [
        {"checks": 2, "cases": 400, "divergences": 12, "unexplained": 0},
        {"checks": 2, "cases": 401, "divergences": 8, "unexplained": 0},
    ]
    assert live["reasons"] == [{"reason": "error_class is the FQCN", "cases": [12, 8]}]
    assert live["line"] == "2 checks x 2 engines (SQLite, MariaDB), 801 cases: every divergence is explained."


def test_an_unexplained_divergence_is_said_in_the_line() -> None:
    doc = {"engines": ["sqlite"], "unexplained": 3, "checks": [_check("T7 finishRun", "sqlite", 200, 3, 3)]}
    live = view(doc)["live"]
    assert live["line"].endswith("3 divergent cases unexplained (leaselab conform exits 1).")
    assert live["rows"][0]["cells"][0]["unexplained"] == 3
    assert live["reasons"] == []


def test_the_reproducing_command_names_the_runtime_checks() -> None:
    assert _command(None, Path("out"), None, 1) == "leaselab report --out out"
    with_runtime = _command(None, Path("out"), None, 1, Path("/src"), "sqlite")
    assert with_runtime == "leaselab report --out out --runtime-src /src --runtime-engines sqlite"
    assert _command(None, Path("out"), None, 1, Path("/src")).endswith("--runtime-src /src")
