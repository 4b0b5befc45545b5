"""Exhaustive-verification violations against the findings register: each gets a status a reviewer can act
on, red only where nothing registered explains a violation of head."""

from __future__ import annotations

from typing import Any

from checks.fused import index_of
from register.explain import explain
from reports.register import verification_rows, verification_summary
from sim.explore.base import Target
from sim.explore.exhaustive import ExhaustiveExplorer
from sim.review.jobs import VerifyJob, run_verify


def _row(policy: str, violations: list[tuple[str, str]], scenario: str = "s") -> dict[str, Any]:
    return {
        "scenario": scenario,
        "policy": policy,
        "bound": 1,
        "schedules": 10,
        "complete": True,
        "verdict": "violations up to bound 1: ...",
        "violated": [name for name, _ in violations],
        "elapsed_s": 0.1,
        "violations": [
            {
                "invariant": name,
                "faults": ["3 crash after 0.0"],
                "explained_by": key,
                "label": {"F-01": "F-01 completed-write-rerun", "NG-x": "NG-x, spec 7.2"}.get(key, key),
                "kind": "" if not key else "finding" if key.startswith("F-") else "non-guarantee",
            }
            for name, key in violations
        ],
    }


def test_each_violation_gets_the_status_its_match_and_head_say() -> None:
    rows = verification_rows(
        [
            _row("adr-104", [("a", "F-01"), ("b", ""), ("c", ""), ("d", "NG-x")]),
            _row("head", [("a", "F-01"), ("c", ""), ("d", "NG-x")]),
        ]
    )
    status = {(r["policy"], v["invariant"]): v["status"] for r in rows for v in r["violations"]}
    assert status == {
        ("adr-104", "a"): "finding",
        ("adr-104", "b"): "fixed later",
        ("adr-104", "c"): "before head",
        ("adr-104", "d"): "non-guarantee",
        ("head", "a"): "finding",
        ("head", "c"): "UNREGISTERED",
        ("head", "d"): "non-guarantee",
    }
    assert [r["unregistered"] for r in rows] == [[], ["c"]]
    assert rows[0]["violations"][0]["text"] == "F-01 completed-write-rerun: registered finding"
    assert rows[0]["violations"][3]["text"] == "NG-x: recorded non-guarantee"
    assert rows[0]["violations"][0]["faults_text"] == "3 crash after 0"
    assert rows[1]["verdict_text"] == "3 invariants violated up to bound 1"
    assert verification_summary(rows).startswith("UNREGISTERED violations: c (head, s).")


def test_a_preset_without_a_head_row_to_compare_is_unregistered_when_nothing_matches() -> None:
    rows = verification_rows([_row("adr-104", [("b", "")], scenario="only-old")])
    assert rows[0]["violations"][0]["status"] == "UNREGISTERED"


def test_an_explained_head_reads_as_explained() -> None:
    rows = verification_rows([_row("head", [("a", "F-01"), ("d", "NG-x")]), _row("adr-111", [("b", "")])])
    line = verification_summary(rows)
    assert line.startswith("Every violation of head the enumeration found is a registered finding or a recorded")
    assert "(F-01, NG-x)" in line and "1 violations, 0 matched by the register, 1 fixed by a later decision" in line


def test_the_review_matches_each_enumerated_mechanism_with_the_sweep_recognisers() -> None:
    """run_verify lists each distinct mechanism once, with its first schedule; an independent replay of
    that schedule through ``explain`` names the same entry; two behind one invariant are two lines."""
    outcome = run_verify(VerifyJob("single_run", "head", 1))
    report = ExhaustiveExplorer(mechanisms=True).verify(Target("single_run", "head"), 1)
    assert outcome.violated == tuple(name for name, _ in report.violations)
    assert len(outcome.explained) == len(report.mechanisms)
    for (name, key, faults), (_, cx) in zip(outcome.explained, report.mechanisms, strict=True):
        replay = cx.run()
        entry = explain(name, index_of(replay.history), replay.verdicts[name])
        assert cx.invariant == name and key == ("" if entry is None else entry.id)
        assert faults == tuple(f.text() for f in cx.faults)
    keys = [key for _, key, _ in outcome.explained]
    assert all(keys) and len(keys) == len(set(keys)), "head's are all registered, each once"
    behind = [key for name, key, _ in outcome.explained if name == "terminal_row_no_stale_fence"]
    assert sorted(behind) == ["NG-cancel-keeps-fence", "NG-clear-not-persisted"]
