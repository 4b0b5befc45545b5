"""Replay the register's findings recorded in ``reproductions.toml`` through the real PHP."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from sim.conform import ddl, engines
from sim.conform.php_process import PhpProcess

REPRODUCTIONS = Path(__file__).with_name("reproductions.toml")

_ROW_DEFAULTS: dict[str, Any] = {
    "claimed_by": "",
    "lease_expires": 0,
    "requeue_count": 0,
    "pending_effect": "",
    "queued_request": None,
    "suspended_state": None,
    "crdate": 1,
}


def load() -> dict[str, dict[str, Any]]:
    return tomllib.loads(REPRODUCTIONS.read_text(encoding="utf-8"))


def replay(finding: str, entry: dict[str, Any], runtime_src: Path) -> list[str]:
    """Run one reproduction; the list of mismatches (empty = it reproduced)."""
    problems: list[str] = []
    schema = ddl.read_schema(runtime_src)
    with engines.start(entry["engine"], shared=True) as engine, PhpProcess(runtime_src) as php:
        for conn in ("a", "b"):
            php.ask({"op": "connect", "conn": conn, "params": engine.params})
        php.ask({"op": "schema", "conn": "a", "tables": schema})
        php.ask({"op": "setup", "conn": "a", "runs": [{**_ROW_DEFAULTS, **r} for r in entry["setup"]]})
        for i, step in enumerate(entry["steps"]):
            if step.get("op") == "recover":
                uid, uuid = entry["setup"][0]["uid"], entry["setup"][0]["uuid"]
                a = php.ask(
                    {
                        "op": "recover",
                        "conn": step["conn"],
                        "handle": [uid, uuid, 0],
                        "worker": step["worker"],
                        "error": step["error"],
                        "bus": step["bus"],
                        "clock": step["clock"],
                    }
                )
            else:
                a = php.ask(
                    {
                        "op": "call",
                        "conn": step["conn"],
                        "target": "repo",
                        "method": step["method"],
                        "args": step["args"],
                        "clock": step["clock"],
                    }
                )
            if "expect_ret" in step and a["ret"] != step["expect_ret"]:
                problems.append(
                    f"{finding} step {i} {step.get('method', step.get('op'))}: returned {a['ret']!r}, expected {step['expect_ret']!r}"  # noqa: E501
                )
        row = php.ask({"op": "dump", "conn": "b"})["runs"][0]
        for key, want in entry["expect"].items():
            got = row[key]
            if isinstance(want, int) and not isinstance(want, bool):
                got = int(got)
            if got != want:
                problems.append(f"{finding}: {key} is {got!r}, expected {want!r}")
    return problems
