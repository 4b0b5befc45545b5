"""The register's reproductions on the real PHP, and near misses that must not reproduce.

Each entry of ``sim/conform/reproductions.toml`` replays through the real runtime on a private
MariaDB (and on SQLite and PostgreSQL) and must reach its end state; each near miss takes the mechanism away (no second
connection, a true clock, no stall, no store error) and must not, so a reproduction is shown to
depend on what its write-up says. The register's record (:mod:`register.real_code`) must cover
every entry, agree with the replay file and be the README's table.
"""

from __future__ import annotations

import copy
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from register import real_code
from register.findings import FINDINGS
from register.nonguarantees import NON_GUARANTEES
from sim.conform import engines, replay
from tests.conformance.conftest import ROOT, leftovers, need, server_pids

ENTRIES = replay.load()
T0 = 1_750_000_000
Entry = dict[str, Any]


def test_every_register_entry_has_a_reproduction_or_a_reason() -> None:
    ids = [f.id for f in FINDINGS] + [n.id for n in NON_GUARANTEES]
    assert [r.id for r in real_code.RECORDS] == ids
    for rec in real_code.RECORDS:
        if rec.reproduced:
            assert rec.id in ENTRIES, f"{rec.id} says reproduced but has no replay steps"
            assert ENTRIES[rec.id]["engine"] == rec.reproduced_on
            assert rec.reproduced_on in engines.ENGINES
        else:
            assert rec.id not in ENTRIES, f"{rec.id} has replay steps but says not reproduced"
            assert rec.how.startswith("not reproduced: the mechanism lies in ")
    assert set(ENTRIES) <= set(ids)


def test_every_reproduction_has_a_near_miss() -> None:
    assert set(NEAR_MISSES) == set(ENTRIES)


def _readme_table() -> list[tuple[str, str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Reproduced on the real code", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| (F-\d+|NG-[\w-]+) \| ([^|]+) \| (.+) \|$", section, flags=re.M)
    return [(a.strip(), b.strip(), c.strip()) for a, b, c in rows]


def test_the_readme_table_is_the_registers() -> None:
    assert _readme_table() == real_code.table_rows()


# ---- near misses: transformations of an entry that take its mechanism away ----------------


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Entry], None]:
    def change(entry: Entry) -> None:
        node: Any = entry
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def _unstall(step: int, hook: int, *, before: bool = False) -> Callable[[Entry], None]:
    """The held statement is not held: the hook's requests run after the step (or before it)."""

    def change(entry: Entry) -> None:
        held = entry["steps"][step]["hooks"].pop(hook)["run"]
        at = step if before else step + 1
        entry["steps"][at:at] = held

    return change


def _each(*changes: Callable[[Entry], None]) -> Callable[[Entry], None]:
    def change(entry: Entry) -> None:
        for c in changes:
            c(entry)

    return change


def _true_worker_clock(entry: Entry) -> None:
    """F-16: the worker's clock 1,887 s behind is set right (its leases move with it)."""
    for step in (entry["steps"][0], entry["steps"][1], entry["steps"][2]["hooks"][0]["run"][0]):
        step["clock"] += 1887
        step["args"][-1] += 1887


NEAR_MISSES: dict[str, dict[str, Callable[[Entry], None]]] = {
    "F-05": {"the bus dispatches": _set(("steps", 0, "bus"), "ok")},
    "F-09": {
        "true worker clock": _each(
            _set(("steps", 0, "args", 2), T0 + 900),
            _set(("steps", 0, "clock"), T0),
            _set(("steps", 3, "args", 2), T0 + 910),
            _set(("steps", 3, "clock"), T0 + 10),
        )
    },
    "F-11": {
        "the stamp does not stall": _each(
            lambda e: e["steps"][1].pop("hooks"),
            _set(("steps", 2, "clock"), T0 + 2),
            _set(("steps", 2, "expect_counts"), [0, 0, 0]),
        ),
        "the reaper reclaims during the stall": _set(
            ("steps", 1, "hooks", 0, "run"),
            [{"conn": "b", "method": "requeueStale", "args": [7, T0 + 1000], "clock": T0 + 1000}],
        ),
    },
    "F-12": {"the settle does not stall": _unstall(0, 1)},
    "F-13": {"the suspend does not stall": _unstall(1, 0)},
    "F-14": {"true reaper clock": _each(_set(("steps", 1, "args", 1), T0 + 10), _set(("steps", 1, "clock"), T0 + 10))},
    "F-15": {"the read does not stall": _unstall(0, 0)},
    "F-16": {"true worker clock": _true_worker_clock, "the dead-letter does not stall": _unstall(2, 0)},
    "F-17": {"no second connection": _set(("steps", 0, "bus"), "throw")},
    "F-18": {"the stamp commits before the reaper's snapshot": _unstall(1, 0, before=True)},
    "F-19": {
        "true reaper clock": _set(("steps", 0, "clock"), T0 + 154),
        "no attempt during the invocation": _set(("steps", 0, "bus"), "ok"),
    },
    "F-20": {
        "true reaper clock": _set(("steps", 0, "clock"), T0 + 421),
        "no clear during the invocation": _set(("steps", 0, "bus"), "ok"),
    },
    "F-21": {
        "the clear's lease from its commit": _set(("steps", 2, "hooks", 0, "run", 0, "args", 3), T0 + 1886 + 900),
        "the dead-letter does not stall": _unstall(2, 0),
    },
    "F-22": {
        "a reaper clock less than a lease ahead": _set(("steps", 0, "clock"), T0 + 905),
        "the stamp commits before the reaper's snapshot": _unstall(0, 0, before=True),
    },
    "NG-identity": {"distinct identities": _set(("steps", 2, "args", 1), "worker:host-b:101")},
    "NG-queued-orphan": {
        "a RUNNING row whose lease ran out": _each(
            _set(("setup", 0, "status"), "running"),
            _set(("setup", 0, "claimed_by"), "worker:h1:101"),
            _set(("setup", 0, "lease_expires"), T0),
        )
    },
    "NG-clear-not-persisted": {"the clear lands": lambda e: e["steps"][2].pop("fail")},
    "NG-cancel-keeps-fence": {
        "the clear before the cancel": lambda e: e["steps"].insert(2, {**e["steps"].pop(3), "expect_ret": True})
    },
    "NG-unchecked-settle": {"no cancel": _set(("steps", 0, "hooks", 1, "run"), [])},
    "NG-claim-restamps-started": {
        "a resume claim": _each(
            _set(("steps", 1), {"conn": "a", "method": "suspendRun", "args": [7, "{}"], "clock": T0 + 10}),
            _set(("steps", 2, "method"), "claimForResume"),
        )
    },
    "NG-store-error-lease-lost": {"no store error": lambda e: e["steps"][1].pop("fail")},
    "NG-sync-outer-requeued": {"an async transport": _set(("steps", 0, "bus"), "ok")},
    "NG-reaper-dispatch-dead-letter": {"the bus dispatches": _set(("steps", 0, "bus"), "ok")},
}


@pytest.fixture(scope="module", params=["mariadb", "sqlite", "postgres"])
def engine(request: pytest.FixtureRequest) -> Iterator[replay.Session]:
    """One private database and one harness per engine for the module, in a temporary directory of its
    own; nothing of it may be left behind. The register records MariaDB (production's engine); the same
    replays run on SQLite and PostgreSQL too."""
    src = need(request.param)
    root = Path(tempfile.mkdtemp(prefix="lc-"))
    root.chmod(0o755)  # PostgreSQL runs as its own user when we are root: it must reach its data
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tempfile, "tempdir", str(root))
        mp.setenv("TMPDIR", str(root))
        with replay.session(request.param, src) as sess:
            yield sess
    left, pids = leftovers(root), server_pids(root)
    shutil.rmtree(root, ignore_errors=True)
    assert left == [] and pids == [], f"left behind: {left}, servers {pids}"


@pytest.mark.slow
@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_a_reproduction_reaches_its_end_state_on_the_real_php(entry: str, engine: replay.Session) -> None:
    done = replay.replay(ENTRIES[entry], engine)
    assert done.problems == []


_CASES = [(entry, name) for entry, misses in sorted(NEAR_MISSES.items()) for name in misses]


@pytest.mark.slow
@pytest.mark.parametrize(("entry", "near_miss"), _CASES, ids=[f"{e}-{n.replace(' ', '-')}" for e, n in _CASES])
def test_a_near_miss_does_not_reach_the_end_state(entry: str, near_miss: str, engine: replay.Session) -> None:
    changed = copy.deepcopy(ENTRIES[entry])
    NEAR_MISSES[entry][near_miss](changed)
    done = replay.replay(changed, engine)
    assert not any("in the harness" in p for p in done.step_problems), done.step_problems
    assert not done.reached, f"{entry} reached its end state without its mechanism ({near_miss})"
