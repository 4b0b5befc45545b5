"""ADR-081/111 fail-soft, judged from ground truth: a throwing recordStep is caught on every library
scenario searched with the audit family, and head never violates the property there.

The throwing recordStep (sim/explore/code_mutants.py) lets a store error out of the audit insert
instead of returning false; the spec says recordStep never throws. Before the invariant was judged
from the segment's next statement, this mutant failed every read-only run of audit_blip_read_only
unseen (the old checker looked for one error-class string).
"""

from __future__ import annotations

import pytest

from scenarios.loader import library_names
from sim.explore.base import Target
from sim.explore.code_mutants import applied, code_mutant
from sim.explore.mutants import swarm_batch, under_faults

INVARIANT = "read_only_audit_fail_soft"
SIMULATIONS = 40
MIN_JUDGED = 1
"""Each scenario's batch under head must judge at least this many failed read-only audits."""


def _first_violation(scenario: str) -> int | None:
    for draw in swarm_batch(Target(scenario, "head", {}, ("audit",)), SIMULATIONS, 0):
        if under_faults(draw.result) and INVARIANT in draw.result.violations:
            return draw.number
    return None


@pytest.mark.parametrize("scenario", library_names())
def test_a_throwing_record_step_is_caught_under_audit_faults(scenario: str) -> None:
    with applied(code_mutant("record_step_throws")):
        found = _first_violation(scenario)
    assert found is not None, f"the throwing recordStep went unseen on {scenario}"


@pytest.mark.slow
@pytest.mark.parametrize("scenario", library_names())
def test_head_absorbs_every_failed_read_only_audit(scenario: str) -> None:
    judged = 0
    for draw in swarm_batch(Target(scenario, "head", {}, ("audit",)), SIMULATIONS, 0):
        verdict = draw.result.verdicts[INVARIANT]
        assert INVARIANT not in draw.result.violations, verdict.explanation
        judged += verdict.judged
    assert judged >= MIN_JUDGED
