"""Replay the register's reproductions (``reproductions.toml``) through the real PHP.

A reproduction is a sequence of harness requests on two PHP connections to one database
(``a`` the worker, ``b`` the reaper or another process): repository statements, the reaper
command, the failure recovery or ``runQueued``. A race between processes is statement order:
a step's ``hooks`` hold one of its statements and run other requests first (a stall), or make
it throw (a store error); a bus ``inline`` runs requests inside a dispatch (the Sync
transport). Each step may say what it returns (``expect_ret``); the reproduction says the end
state it reaches (``expect``: columns of the run row, and ``sent``, the wake-ups dispatched).

The record of what was reproduced, and why the rest cannot be, is the register's
(:mod:`register.real_code`); this file keeps only the replay steps.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
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
    """The reproductions by register entry id."""
    return tomllib.loads(REPRODUCTIONS.read_text(encoding="utf-8"))


@dataclass
class Replayed:
    """What one replay did: each labelled step's answer, the run rows after, and what differed."""

    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    sent: int = 0
    step_problems: list[str] = field(default_factory=list)
    end_problems: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return self.step_problems + self.end_problems

    @property
    def reached(self) -> bool:
        """Whether the end state the reproduction names was reached."""
        return not self.end_problems


class Session:
    """One engine and one PHP process with connections ``a`` and ``b``, reused across replays."""

    def __init__(self, engine: engines.Engine, php: PhpProcess, runtime_src: Path) -> None:
        self.engine = engine
        self.php = php
        for conn in ("a", "b"):
            php.ask({"op": "connect", "conn": conn, "params": engine.params})
        php.ask({"op": "schema", "conn": "a", "tables": ddl.read_schema(runtime_src)})


@contextmanager
def session(engine: str, runtime_src: Path) -> Iterator[Session]:
    """Start ``engine`` (a file two connections share, for SQLite) and the harness; stop both after."""
    with engines.start(engine, shared=True) as started, PhpProcess(runtime_src) as php:
        yield Session(started, php, runtime_src)


def _labelled(steps: list[dict[str, Any]], prefix: str, out: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps as harness requests, each labelled by its place (``2``, ``2.hook0.1``, ``3.bus.0``)."""
    requests = []
    for i, step in enumerate(steps):
        label = f"{prefix}{i}"
        req = {k: v for k, v in step.items() if not k.startswith("expect")}
        req["label"] = label
        req.setdefault("op", "call")
        if req["op"] == "call":
            req.setdefault("target", "repo")
        if "hooks" in req:
            req["hooks"] = [
                {**h, "run": _labelled(h.get("run", []), f"{label}.hook{j}.", out)} for j, h in enumerate(req["hooks"])
            ]
        if isinstance(req.get("bus"), dict):
            req["bus"] = {**req["bus"], "inline": _labelled(req["bus"].get("inline", []), f"{label}.bus.", out)}
        out[label] = step
        requests.append(req)
    return requests


def replay(entry: dict[str, Any], sess: Session) -> Replayed:
    """Run one reproduction on an open session; what each step returned and whether the end was reached."""
    done = Replayed()
    php = sess.php
    setup = [{**_ROW_DEFAULTS, **r} for r in entry["setup"]]
    php.ask({"op": "setup", "conn": "a", "runs": setup})
    steps: dict[str, dict[str, Any]] = {}
    for req in _labelled(copy.deepcopy(entry["steps"]), "", steps):
        if req["op"] == "recover" and "handle" not in req:
            req["handle"] = [setup[0]["uid"], setup[0]["uuid"], 0]
        answer = php.ask(req)
        done.answers[req["label"]] = answer
        for sub in answer.get("nested", []):
            done.answers[str(sub["label"])] = sub
    for label, step in steps.items():
        if label not in done.answers:
            done.step_problems.append(f"step {label} never ran (its hook or dispatch did not fire)")
            continue
        answer = done.answers[label]
        if not answer.get("ok", True):
            done.step_problems.append(f"step {label} failed in the harness: {answer.get('error')}")
            continue
        done.sent += len(answer.get("sent", []))
        for key in (k for k in step if k.startswith("expect_")):
            said, want = answer.get(key.removeprefix("expect_")), step[key]
            if said != want:
                what = f"{step.get('method', step.get('op', 'call'))}: {key.removeprefix('expect_')}"
                done.step_problems.append(f"step {label} {what} {said!r}, expected {want!r}")
    done.rows = php.ask({"op": "dump", "conn": "b"})["runs"]
    row = next(r for r in done.rows if int(r["uid"]) == int(setup[0]["uid"]))
    for key, want in entry["expect"].items():
        got: Any = done.sent if key == "sent" else row[key]
        if isinstance(want, int) and not isinstance(want, bool) and got is not None:
            got = int(got)
        if got != want:
            done.end_problems.append(f"{key} is {got!r}, expected {want!r}")
    return done
