"""checks/promise_catalog.py: every promise of spec 7.1 names the invariants that judge it, or why none can."""

from __future__ import annotations

import re
from pathlib import Path

from checks import INVARIANTS
from checks.promise_catalog import PROMISES
from checks.verdict import Kind
from register.claims import CLAIMS

SPEC = (Path(__file__).resolve().parents[2] / "docs" / "runtime-spec.md").read_text(encoding="utf-8")
NAMES = {inv.name: inv for inv in INVARIANTS}


def test_every_named_invariant_is_catalogued() -> None:
    for promise in PROMISES:
        assert set(promise.invariants) <= set(NAMES), promise


def test_a_promise_no_invariant_judges_says_why() -> None:
    for promise in PROMISES:
        assert bool(promise.invariants) != bool(promise.unjudged), promise


def test_every_adr_of_spec_7_1_has_its_promises() -> None:
    section = SPEC.split("### 7.1", 1)[1].split("### 7.2", 1)[0]
    adrs = set(re.findall(r"^- (ADR-[\d/]+)", section, flags=re.M))
    assert adrs and adrs <= {p.adr for p in PROMISES}


def test_every_claim_is_judged_by_a_catalogued_property_in_every_simulation() -> None:
    for claim in CLAIMS:
        assert claim.invariant in NAMES, claim.id
        assert NAMES[claim.invariant].kind in (Kind.ALWAYS, Kind.EVENTUALLY)
