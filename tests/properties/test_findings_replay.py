"""Every registered finding (register/entries) replays from its counterexample file: the same
history digest, the same invariant violated, and the interleaving its write-up describes."""

from __future__ import annotations

import re

import pytest

from checks import INVARIANTS
from checks.fused import index_of
from register.explain import explain
from register.findings import FINDINGS, FINDINGS_DIR, Finding
from register.nonguarantees import NON_GUARANTEES
from scenarios.families import FAMILIES
from sim.explore.counterexample import read

MAX_FAULTS = 3
MORE_FAULTS = {"F-19": 5, "F-22": 11}
"""Findings whose mechanism needs more faults than MAX_FAULTS. F-19 overruns a budget of three requeues:
each requeue but the reaper's needs a retryable provider failure (three on one run), plus the reaper's
clock and an earlier row for its invocation to run inline; no 3-fault subset shows it (its write-up).
F-22 needs the budget spent too (three retryable failures), the reaper's clock, its stalled T14, and the
faults that time the worker's stamp after the snapshot: 11 is what the mechanism-keeping shrink left of 24
(1-minimal: no single fault can go)."""
EACH = pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f.id)


def test_finding_ids_and_files_are_unique() -> None:
    assert len({f.id for f in FINDINGS}) == len(FINDINGS)
    assert len({f.counterexample for f in FINDINGS}) == len(FINDINGS)


def test_the_register_directory_holds_exactly_the_registered_files() -> None:
    files = {p.name for p in FINDINGS_DIR.iterdir() if p.suffix in (".toml", ".md") and p.name != "README.md"}
    assert files == {name for f in FINDINGS for name in (f.counterexample, f.writeup)}


@EACH
def test_a_finding_names_real_invariants_and_families(finding: Finding) -> None:
    names = {inv.name for inv in INVARIANTS}
    assert set(finding.invariants) <= names
    assert set(finding.families) <= set(finding.routes) <= set(FAMILIES)


@EACH
def test_the_counterexample_replays_to_the_same_history_and_violation(finding: Finding) -> None:
    cx = read(finding.path)
    assert cx.policy in ("head", "adr-141") and not cx.flags, "a finding is a violation of head"
    assert cx.invariant == finding.invariant
    assert len(cx.faults) <= MORE_FAULTS.get(finding.id, MAX_FAULTS)
    result = cx.run()
    assert result.digest == cx.digest
    assert finding.invariant in result.violations


@EACH
def test_the_replayed_violation_is_recognised_as_this_finding(finding: Finding) -> None:
    result = read(finding.path).run()
    ix = index_of(result.history)
    for invariant in finding.invariants:
        if invariant in result.violations:
            assert explain(invariant, ix, result.verdicts[invariant]) is finding, invariant


@EACH
def test_the_write_up_names_the_invariant_and_quotes_the_promise(finding: Finding) -> None:
    text = (FINDINGS_DIR / finding.writeup).read_text(encoding="utf-8")
    assert finding.invariant in text
    assert finding.adr in text
    prose = " ".join(re.sub(r"[`*]|^> ?", "", text, flags=re.MULTILINE).split())
    assert finding.promise in prose
    assert finding.counterexample in text


def test_every_non_guarantee_quotes_the_spec() -> None:
    for ng in NON_GUARANTEES:
        assert ng.sentence and ng.source.startswith("spec"), ng.id
        assert set(ng.invariants) <= {inv.name for inv in INVARIANTS}, ng.id
