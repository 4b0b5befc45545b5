"""Every claim of register/claims.py holds, or fails only through a registered finding that names it.

Each claim is searched twice: by a swarm batch (the swarm explorer's draws, every simulation judged,
so a second mechanism behind the same invariant cannot hide behind the first) and by the Hypothesis
explorer (profile-then-schedule strategies, shrinking). Budgets are simulations, never seconds, so
each run is the same run; the Hypothesis budget follows the settings profile (``ci``: 100 examples).
A violation of the claim's invariant must be recognised by a registered finding that lists the
claim in ``explains`` (or by a recorded non-guarantee the claim ``tolerates``); anything else fails
with its counterexample file printed, ready for ``leaselab replay``. CI searches each claim at the
preset that introduced it and at head; the nightly run gives the swarm every preset of every claim
and larger budgets, and the Hypothesis explorer the nightly profile's examples at both presets.

A claim with no fault families (its scenario's own targeted faults are the whole story) is searched
by the swarm only: the Hypothesis explorer draws its schedules from the claim's families, runs in
script mode where the scenario's targeted faults do not fire, and with no family at all its profile
strategy is unsatisfiable (the explorer then never spends its budget).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from checks import INVARIANTS
from checks.fused import index_of
from model.policy import PRESETS
from register.claims import CLAIMS, MIN_JUDGED, PRESET_ORDER, Claim
from register.explain import explain
from register.findings import FINDINGS, Finding
from register.nonguarantees import NON_GUARANTEES, NonGuarantee
from scenarios.families import FAMILIES
from scenarios.loader import library_names, load_scenario
from sim.explore.base import Budget, Target
from sim.explore.counterexample import Counterexample, to_toml
from sim.explore.hypo import HypothesisExplorer
from sim.explore.mutants import swarm_batch
from sim.world.simulate import SimulationResult

SEED = 3
SWARM_SIMULATIONS = 60
SLOW_SCENARIOS = frozenset({"reaper_races_heartbeat"})
"""Scenarios whose simulations cost ten times the others' (a reaper tick every second): a tenth of the budget."""
NIGHTLY_SWARM_SIMULATIONS = 1500
HEAD = "adr-141"


SEARCHABLE_BY_HYPOTHESIS = tuple(c for c in CLAIMS if c.families)


def ci_cases() -> Iterator[tuple[Claim, str]]:
    for claim in CLAIMS:
        yield claim, claim.presets[0]
        if claim.presets[0] != HEAD:
            yield claim, HEAD


def all_cases() -> Iterator[tuple[Claim, str]]:
    for claim in CLAIMS:
        for preset in claim.presets:
            yield claim, preset


def case_id(case: tuple[Claim, str]) -> str:
    return f"{case[0].id}@{case[1]}"


def scaled(claim: Claim, simulations: int) -> int:
    return max(4, simulations // 10) if claim.scenario in SLOW_SCENARIOS else simulations


def target(claim: Claim, preset: str) -> Target:
    return Target(claim.scenario, preset, {}, claim.families)


def judge(claim: Claim, preset: str, result: SimulationResult, cx: Counterexample) -> str:
    """The id of the registered finding (or tolerated non-guarantee) that explains this violation of
    the claim; anything else fails with its counterexample."""
    verdict = result.verdicts[claim.invariant]
    explained = explain(claim.invariant, index_of(result.history), verdict)
    if isinstance(explained, Finding) and claim.id in explained.explains:
        return explained.id
    if isinstance(explained, NonGuarantee) and explained.id in claim.tolerates:
        return explained.id
    what = "no registered finding" if explained is None else f"{explained.id}, which does not explain this claim"
    pytest.fail(
        f"claim {claim.id} ({claim.adr}) fails under {preset}: {verdict.explanation} — recognised by {what}. "
        f"Counterexample (save as a .toml and run `leaselab replay` on it):\n{to_toml(cx)}"
    )


TRANSPORTS = ("async", "sync")
"""Every claim's swarm batch runs on both transports: Sync is the spec's default (a wake-up is
handled inline, nested in the dispatching segment; spec 5.2), async the library's."""


def check_swarm(claim: Claim, preset: str, simulations: int) -> set[str]:
    """Run a swarm batch on each transport; every violation must be registered, and on each transport
    the claim's invariant must judge at least its stated number of cases. The ids of the findings met."""
    met: set[str] = set()
    for transport in TRANSPORTS:
        scenario = load_scenario(claim.scenario).with_transport(transport)
        search = Target(claim.scenario, preset, {}, claim.families, scenario)
        judged = 0
        for draw in swarm_batch(search, simulations, SEED):
            judged += draw.result.verdicts[claim.invariant].judged
            if claim.invariant in draw.result.violations:
                met.add(judge(claim, preset, draw.result, draw.counterexample(search, claim.invariant)))
        assert judged >= MIN_JUDGED[claim.id], (
            f"claim {claim.id} under {preset} on the {transport} transport: {claim.invariant} judged only "
            f"{judged} cases in {simulations} simulations (at least {MIN_JUDGED[claim.id]} required): the "
            "claim would hold over nothing"
        )
    return met


def check_hypothesis(claim: Claim, preset: str, simulations: int) -> set[str]:
    """Run the Hypothesis explorer; every reported violation must replay and be registered.

    One batch of ``simulations`` examples, with half as many again for Hypothesis to shrink a
    violation in: the explorer drops a violation whose shrinking the budget cuts short.
    """
    budget = Budget(
        seconds=1e9,
        simulations=simulations + simulations // 2,
        seed=SEED,
        invariants=frozenset({claim.invariant}),
        stop_at_first=True,
        shrink_tests=100,
    )
    report = HypothesisExplorer(batch_examples=simulations).explore(target(claim, preset), budget)
    met: set[str] = set()
    for violation in report.violations:
        replay = violation.counterexample.run()
        assert replay.digest == violation.counterexample.digest, to_toml(violation.counterexample)
        met.add(judge(claim, preset, replay, violation.counterexample))
    return met


# ---- the catalogue itself ----------------------------------------------------------------------


def test_claim_ids_are_unique() -> None:
    ids = [c.id for c in CLAIMS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_a_claim_names_real_things(claim: Claim) -> None:
    assert claim.invariant in {inv.name for inv in INVARIANTS}
    assert set(claim.families) <= set(FAMILIES)
    assert claim.scenario in library_names()
    assert claim.presets and set(claim.presets) <= set(PRESETS)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_a_claim_holds_from_its_decision_to_head(claim: Claim) -> None:
    """A decision, once taken, is carried by every later preset."""
    first = PRESET_ORDER.index(claim.presets[0])
    assert claim.presets == PRESET_ORDER[first:]


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_a_claim_quotes_its_adr_and_never_draws_shared_identities(claim: Claim) -> None:
    """Identity uniqueness is assumed, not enforced (spec 1.3): no claim may rely on surviving it."""
    assert claim.because.startswith(claim.adr) or claim.adr in claim.because
    assert "identity" not in claim.families


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.tolerates], ids=lambda c: c.id)
def test_a_claim_tolerates_only_recorded_non_guarantees_of_its_invariant(claim: Claim) -> None:
    recorded = {ng.id: ng for ng in NON_GUARANTEES}
    for ng_id in claim.tolerates:
        assert claim.invariant in recorded[ng_id].invariants


def test_every_claim_states_how_many_cases_it_needs() -> None:
    assert set(MIN_JUDGED) == {c.id for c in CLAIMS}
    assert all(n >= 1 for n in MIN_JUDGED.values())


def test_every_finding_explains_claims_that_exist() -> None:
    ids = {c.id for c in CLAIMS}
    judged = {c.invariant for c in CLAIMS}
    for finding in FINDINGS:
        # a finding must name the claims it makes fail; only one whose invariants no claim judges names none
        assert finding.explains or not judged & set(finding.invariants), finding.id
        assert set(finding.explains) <= ids, finding.id
        for claim_id in finding.explains:
            claimed = next(c for c in CLAIMS if c.id == claim_id)
            assert claimed.invariant in finding.invariants, (finding.id, claim_id)


# ---- the searches ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("case", list(ci_cases()), ids=case_id)
def test_a_swarm_batch_meets_only_registered_findings(case: tuple[Claim, str]) -> None:
    claim, preset = case
    check_swarm(claim, preset, scaled(claim, SWARM_SIMULATIONS))


@pytest.mark.slow
@pytest.mark.parametrize("claim", SEARCHABLE_BY_HYPOTHESIS, ids=lambda c: c.id)
def test_the_hypothesis_explorer_meets_only_registered_findings(claim: Claim) -> None:
    check_hypothesis(claim, HEAD, scaled(claim, settings.default.max_examples))


@pytest.mark.nightly
@pytest.mark.parametrize("case", list(all_cases()), ids=case_id)
def test_a_long_swarm_batch_meets_only_registered_findings(case: tuple[Claim, str]) -> None:
    claim, preset = case
    check_swarm(claim, preset, scaled(claim, NIGHTLY_SWARM_SIMULATIONS))


@pytest.mark.nightly
@pytest.mark.parametrize("case", [c for c in ci_cases() if c[0].families], ids=case_id)
def test_a_long_hypothesis_search_meets_only_registered_findings(case: tuple[Claim, str]) -> None:
    claim, preset = case
    check_hypothesis(claim, preset, scaled(claim, settings.default.max_examples))
