"""The causality curve: near 0 before the one fault that decides a hand-built violation and near 1 after
it, near 1 from the start for a design defect, reproducible, and with at most +-10-point intervals."""

from __future__ import annotations

import pytest

from checks import history as H
from reports.stats import wilson
from scenarios.loader import load_scenario
from scenarios.schema import FaultsModel
from sim.explore.causality import DRAWS, HALF_WIDTH, JUMP, Curve, curve, interval_width, narrow_enough, same_violation
from sim.explore.counterexample import Counterexample
from sim.world.simulate import simulate

ONE_AUDIT_FAULT = """
name = "one_audit_fault"
description = "One queued run writes once; a targeted fault fails the audit insert of that write's tool event."

[[tools]]
name = "mcp_create_ticket"
effect = "non_idempotent_write"
remote = true
server_requires_approval = false
approval_off_reason = "one uninterrupted queued segment"

[[runs]]
kind = "queued"
script = [["mcp_create_ticket"], []]

[[script]]
family = "audit"
on = "event"
tool = "mcp_create_ticket"
"""


def counterexample_of(
    scenario: str, policy: str, seed: int, invariant: str, *, script_from_profile: bool
) -> Counterexample:
    """The counterexample file a search would write: the faults that fired (none for a design defect)."""
    loaded = load_scenario(scenario)
    result = simulate(loaded, policy, seed) if script_from_profile else simulate(loaded, policy, seed, script=[])
    assert invariant in result.violations
    return Counterexample(
        scenario=scenario,
        policy=policy,
        seed=seed,
        invariant=invariant,
        digest=result.digest,
        faults=result.fault_script,
        profile=loaded.faults,
    )


@pytest.fixture(scope="module")
def audit_case(tmp_path_factory: pytest.TempPathFactory) -> Counterexample:
    """adr-104 audits writes fail-soft: the audit failure of the write's event lets the run complete over an
    unrecorded write. The profile draws no fault, so that one targeted fault decides the violation."""
    path = tmp_path_factory.mktemp("causality") / "one_audit_fault.toml"
    path.write_text(ONE_AUDIT_FAULT, encoding="utf-8")
    assert load_scenario(str(path)).faults == FaultsModel()
    return counterexample_of(str(path), "adr-104", 3, "no_success_over_unrecorded_write", script_from_profile=True)


@pytest.fixture(scope="module")
def audit_curve(audit_case: Counterexample) -> Curve:
    return curve(audit_case, between=4)


def test_the_curve_is_near_zero_before_the_deciding_fault_and_near_one_after(
    audit_case: Counterexample, audit_curve: Curve
) -> None:
    assert len(audit_case.faults) == 1
    (decided,) = audit_curve.decided
    assert decided.fault == audit_case.faults[0]
    before = [p for p in audit_curve.points if p.cut <= decided.records]
    after = [p for p in audit_curve.points if p.cut > decided.records]
    assert len(before) >= 3 and len(after) >= 2
    assert all(p.share <= 0.1 for p in before), [(p.cut, p.share) for p in before]
    assert all(p.share >= 0.9 for p in after), [(p.cut, p.share) for p in after]
    assert all(stopped_at_first_narrow_interval(p.same, p.draws) for p in audit_curve.points)
    assert {p.draws for p in audit_curve.points} == {16}, "every point is unanimous: 16 draws settle it"


def stopped_at_first_narrow_interval(same: int, draws: int) -> bool:
    """A point's draws stopped at the first draw where its interval got narrow enough, or at DRAWS."""
    return 16 <= draws <= DRAWS and (draws == DRAWS or narrow_enough(same, draws))


def test_the_decisive_moment_names_the_fault_and_its_record(audit_curve: Curve) -> None:
    (moment,) = audit_curve.moments
    (decided,) = audit_curve.decided
    assert moment.faults == (decided.fault.text(),)
    assert moment.records == (decided.records, decided.records + 1)
    named = audit_curve.history[moment.record]
    assert named.op == H.FAULT and named.value["family"] == "audit"
    assert moment.rise >= JUMP


def test_the_curve_is_reproducible(audit_case: Counterexample, audit_curve: Curve) -> None:
    again = curve(audit_case, between=4)
    assert again.points == audit_curve.points
    assert again.moments == audit_curve.moments
    doc, doc_again = audit_curve.document(), again.document()
    doc.pop("cpu_s")
    doc_again.pop("cpu_s")
    assert doc == doc_again


def test_a_design_defect_is_doomed_from_the_start() -> None:
    """adr-104 runs writes without a fence: single_run violates writes_fenced_under_lease with no fault."""
    cx = counterexample_of("single_run", "adr-104", 0, "writes_fenced_under_lease", script_from_profile=False)
    assert not cx.faults
    result = curve(cx, between=3)
    assert result.points[0].cut == 0
    assert all(p.share >= 0.9 for p in result.points), [(p.cut, p.share) for p in result.points]
    assert not result.moments


def test_the_budget_cuts_a_curve_short_and_says_so(audit_case: Counterexample) -> None:
    full = curve(audit_case, between=4, bisect=False, sequential=False)
    per_point = full.requests // len(full.points)  # a point at its most: DRAWS runs
    budget = 2 * per_point + per_point // 2
    short = curve(audit_case, between=4, budget_requests=budget, sequential=False)
    assert not short.complete and full.complete
    assert [p.why for p in short.points] == ["start", "violated"]
    assert short.requests <= budget
    # Points that stop early leave room for more of them: the budget is checked against what was spent.
    early = curve(audit_case, between=4, budget_requests=budget)
    assert len(early.points) > len(short.points) and early.requests <= budget


def test_the_same_violation_means_the_same_explanation(audit_case: Counterexample, audit_curve: Curve) -> None:
    recurs = same_violation(audit_case.invariant, None)
    assert recurs(audit_curve.history)
    clean = simulate(load_scenario(audit_case.scenario), "adr-104", 3, script=[])
    assert not recurs(clean.history)


def test_the_sequential_stop_uses_the_reports_wilson_interval() -> None:
    """The curve's own interval width (this layer may not import ``reports``) is the report's interval."""
    for n in range(1, DRAWS + 1):
        for k in range(n + 1):
            lo, hi = wilson(k, n)
            assert interval_width(k, n) == pytest.approx(hi - lo, abs=1e-12), (k, n)
    assert interval_width(0, 0) == 1.0


def test_a_point_stops_once_its_interval_is_ten_points_either_side_and_never_before_sixteen_draws() -> None:
    assert not any(narrow_enough(k, n) for n in range(1, 16) for k in range(n + 1))
    assert narrow_enough(0, 16) and narrow_enough(16, 16) and not narrow_enough(1, 16)
    assert all(narrow_enough(k, DRAWS) for k in range(DRAWS + 1)), "DRAWS always suffices"
    assert HALF_WIDTH == 0.10


def test_a_fixed_curve_draws_every_point_in_full_and_finds_the_same_moment(
    audit_case: Counterexample, audit_curve: Curve
) -> None:
    fixed = curve(audit_case, between=4, sequential=False)
    assert all(p.draws == DRAWS for p in fixed.points)
    assert [m.records for m in fixed.moments] == [m.records for m in audit_curve.moments]
    assert [p.cut for p in fixed.points] == [p.cut for p in audit_curve.points]
    assert fixed.simulations > 4 * audit_curve.simulations


def test_draws_give_intervals_of_at_most_ten_points_and_no_fewer_would() -> None:
    def widest(n: int) -> float:
        return max((hi - lo) / 2 for lo, hi in (wilson(k, n) for k in range(n + 1)))

    assert widest(DRAWS) <= 0.10
    assert widest(DRAWS - 1) > 0.10
