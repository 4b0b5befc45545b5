"""``leaselab mutants`` and sim/explore/mutants.py: one flag of head flipped at a time, each killed or equivalent."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from typer.testing import CliRunner

import leaselab.cmd_mutants as cmd_mutants
from leaselab.cli import app
from model.policy import FLAG_NAMES, HEAD
from register.known_defects import KNOWN_DEFECTS
from sim.explore.base import Budget, Target
from sim.explore.code_mutants import CODE_MUTANTS, CodeMutant, applied, code_mutant
from sim.explore.mutants import (
    EQUIVALENT,
    Baselines,
    MutantTarget,
    MutationReport,
    hunt,
    hunt_code,
    mutant_flags,
    mutant_targets,
    policy_fields,
    run_mutants,
    swarm_batch,
)
from sim.explore.swarm import SwarmExplorer
from sim.explore.sweep_mutants import sweep_flag

runner = CliRunner()
DOCUMENT_KEYS = [
    "score",
    "killed",
    "equivalent",
    "survivors",
    "code_score",
    "code_killed",
    "code_survivors",
    "unexercised",
    "code_sweep_score",
    "code_sweep_flagged",
    "code_sweep_missed",
]


def invoke_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["mutants", "--json", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, json.loads(result.stdout)


# ---- the mutants -------------------------------------------------------------------------------


def test_every_policy_field_is_a_mutant() -> None:
    assert policy_fields() == FLAG_NAMES


def test_a_mutant_flips_exactly_its_flag_over_head() -> None:
    for flag in FLAG_NAMES:
        assert HEAD.differences(HEAD.with_flags(**mutant_flags(flag))) == {
            flag: (getattr(HEAD, flag), not getattr(HEAD, flag))
        }


def test_every_equivalent_mutant_is_a_flag_and_says_why() -> None:
    assert set(EQUIVALENT) <= set(FLAG_NAMES)
    assert all(len(reason.split()) > 20 for reason in EQUIVALENT.values())


@pytest.mark.parametrize("kb", KNOWN_DEFECTS, ids=lambda kb: kb.id)
def test_a_defect_flag_is_searched_where_the_catalogue_finds_it(kb: Any) -> None:
    flags = [*kb.defective_flags] or [f for f in FLAG_NAMES if f.startswith("kb" + kb.id[3:] + "_")]
    assert flags, kb.id
    for flag in flags:
        assert MutantTarget(kb.scenario, tuple(kb.families)) in mutant_targets(flag)


def test_every_mutant_is_also_searched_on_default_with_every_family() -> None:
    for flag in FLAG_NAMES:
        assert mutant_targets(flag)[-1].scenario == "default"


def test_a_batch_draws_what_the_swarm_explorer_draws() -> None:
    """The batches are the swarm explorer's own draws: the same simulation is the first violating one."""
    kb = next(k for k in KNOWN_DEFECTS if k.id == "KB-12")
    target = Target(kb.scenario, kb.defective_policy, dict(kb.defective_flags), kb.families)
    budget = Budget(seconds=1e9, simulations=40, seed=0, stop_at_first=True, invariants=frozenset({kb.invariant}))
    report = SwarmExplorer().explore(target, budget)
    first = next(d for d in swarm_batch(target, 40, 0) if kb.invariant in d.result.violations)
    assert report.violations[0].simulations_until_found == first.number


def test_a_clean_target_kills_on_any_violation() -> None:
    """KB-6's scenario shows head nothing under clock skew; whatever the mutant breaks there is a kill,
    and the same schedule without the mutant's flag keeps that invariant."""
    kill, spent = hunt("kb6_renew_trusts_changed_rows", 10, 0, Baselines(10, 0))
    assert kill is not None
    assert kill.target == MutantTarget("same_second_renewals", ("clock_skew",))
    assert spent == kill.simulations
    replay = kill.counterexample.run()
    assert replay.digest == kill.counterexample.digest and kill.invariant in replay.violations
    unmutated = dataclasses.replace(kill.counterexample, flags={}).run()
    assert kill.invariant not in unmutated.violations


# ---- the command -------------------------------------------------------------------------------


def test_mutants_json_has_the_documented_shape_and_exits_0_without_survivors() -> None:
    code, doc = invoke_json(
        "--only", "kb7_worker_settles_unguarded", "--only", "operation_deadline", "--simulations", "40"
    )
    assert list(doc) == DOCUMENT_KEYS
    assert code == 0
    assert doc["score"] == 1.0 and doc["survivors"] == []
    [kill] = doc["killed"]
    assert (kill["flag"], kill["invariant"]) == ("kb7_worker_settles_unguarded", "settles_by_owner")
    assert isinstance(kill["simulations"], int) and 1 <= kill["simulations"] <= 40 * 2
    assert doc["equivalent"] == [{"flag": "operation_deadline", "reason": EQUIVALENT["operation_deadline"]}]
    assert doc["code_killed"] == [] and doc["code_survivors"] == [] and doc["code_score"] == 1.0


def test_a_kill_needs_a_fault_that_took_effect() -> None:
    """KB-6 strikes with no fault at all; on its fault-free catalogue target it is not killed."""
    kill, spent = hunt("kb6_renew_trusts_changed_rows", 10, 0, Baselines(10, 0), deadline_s=None)
    assert kill is not None and any(kill.counterexample.run().faults_fired.values())
    assert spent >= 1


@pytest.mark.slow
@pytest.mark.parametrize("mutant", CODE_MUTANTS, ids=lambda m: m.name)
def test_every_code_mutant_is_killed_under_faults(mutant: CodeMutant) -> None:
    kill, _ = hunt_code(mutant, 60, 0, Baselines(60, 0))
    assert kill is not None, mutant.name
    assert kill.kind == "code"
    with applied(mutant):
        replay = kill.counterexample.run()
    assert replay.digest == kill.counterexample.digest
    assert kill.invariant in replay.violations and any(replay.faults_fired.values())


def test_a_code_mutant_is_undone_after_its_search() -> None:
    import model.hooks
    import model.recovery

    before = (model.hooks.record_step, model.hooks.effect_for, model.recovery.classify, model.recovery.MAX_REQUEUES)
    for mutant in CODE_MUTANTS:
        with applied(mutant):
            pass
    assert before == (
        model.hooks.record_step,
        model.hooks.effect_for,
        model.recovery.classify,
        model.recovery.MAX_REQUEUES,
    )


def test_the_wrong_classifier_is_caught_from_the_fault_plans_class() -> None:
    """The runtime's classifier calls a 5xx clientError; the world's true_class (from the fault
    plan) says serverError, so retryable_failure_retried sees a retryable failure dead-lettered."""
    kill, _ = hunt_code(code_mutant("classifier_5xx_client_error"), 60, 0, Baselines(60, 0))
    assert kill is not None and kill.invariant == "retryable_failure_retried"


def test_the_throwing_record_step_is_caught_by_the_fail_soft_invariant() -> None:
    kill, _ = hunt_code(code_mutant("record_step_throws"), 60, 0, Baselines(60, 0))
    assert kill is not None and kill.invariant == "read_only_audit_fail_soft"


def test_only_selects_code_mutants_by_name() -> None:
    code, doc = invoke_json("--only", "record_step_lies", "--simulations", "30")
    assert code == 0
    assert doc["killed"] == [] and [k["flag"] for k in doc["code_killed"]] == ["record_step_lies"]
    [flagged] = doc["code_sweep_flagged"]
    assert flagged["mutant"] == "record_step_lies" and doc["code_sweep_score"] == 1.0
    assert set(flagged) == {"mutant", "invariant", "scenario", "simulations", "through_oracle"}


def test_the_head_sweep_alone_flags_a_mutant_of_what_the_runtime_tells_through_a_new_oracle() -> None:
    """Enqueue that hides its failures breaks no row, no event and no landing; only the oracle
    of what enqueue tells its caller sees it, in the plain head sweep."""
    flagged, spent = sweep_flag(code_mutant("enqueue_hides_failure"))
    assert flagged is not None and flagged.through_oracle
    assert flagged.invariant == "enqueue_cancel_result_true" and flagged.simulations == spent


def test_a_mutant_the_head_sweep_cannot_tell_from_head_is_missed() -> None:
    """A 'mutant' that changes nothing: the head sweep meets only registered violations, so it is missed
    (the sweep-only score counts it against the sweep, not against the unit tests)."""
    unchanged = CodeMutant("unchanged", "head itself", (), (("default", ()),))
    flagged, spent = sweep_flag(unchanged, simulations=6, scenarios=("default", "single_run"))
    assert flagged is None and spent == 12
    report = MutationReport(code_sweep_missed=["unchanged"])
    assert report.code_sweep_score == 0.0
    assert any("missed     unchanged" in line for line in cmd_mutants.report_lines(report))


def test_an_unexercised_invariant_without_a_reason_is_reported() -> None:
    report = MutationReport(unexercised=[("requeue_budget_respected", "")])
    assert report.unexplained_unexercised == ["requeue_budget_respected"]
    assert any("NO MUTANT AND NO REASON" in line for line in cmd_mutants.report_lines(report))


def test_a_survivor_is_listed_and_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    survived = MutationReport(survivors=["write_fence"], simulations=3)
    monkeypatch.setattr("sim.explore.mutants.run_mutants", lambda *a, **k: survived)
    result = runner.invoke(app, ["mutants", "--only", "write_fence"])
    assert result.exit_code == 1
    assert "mutation score 0.00" in result.stdout
    assert "SURVIVED   write_fence" in result.stdout


def test_the_text_report_names_each_kill_with_its_target() -> None:
    result = runner.invoke(app, ["mutants", "--only", "write_fence", "--simulations", "5"])
    assert result.exit_code == 0
    assert result.stdout.startswith("mutation score 1.00: 1 killed of 1 (0 equivalent)")
    kill_line = r"killed +write_fence: writes_fenced_under_lease after \d+ simulations on happy_path"
    assert re.search(kill_line, result.stdout)


def test_an_unknown_flag_is_a_one_line_usage_error() -> None:
    result = runner.invoke(app, ["mutants", "--only", "no_such_flag"])
    assert result.exit_code == 2
    assert "unknown flag or code mutant 'no_such_flag'" in result.stderr
    assert "Traceback" not in result.stderr


# ---- the whole run (nightly) -------------------------------------------------------------------


@pytest.mark.nightly
def test_every_mutant_of_head_is_killed_or_equivalent() -> None:
    report = run_mutants(simulations=400, seed=0)
    assert report.survivors == [], report.document()
    assert report.code_survivors == [], report.document()
    assert report.score == 1.0 and report.code_score == 1.0
    assert report.unexplained_unexercised == []
    assert {flag for flag, _ in report.equivalent} == set(EQUIVALENT)


@pytest.mark.nightly
@pytest.mark.parametrize("flag", sorted(EQUIVALENT))
def test_an_equivalent_mutant_survives_a_long_search(flag: str) -> None:
    """The equivalence reasons are claims too: a long search must not tell the mutant from head."""
    kill, _ = hunt(flag, 1200, 7, Baselines(1200, 7))
    assert kill is None, (kill.invariant, kill.target) if kill else None


def test_the_cli_default_of_sweep_simulations_is_the_sweep_mutants_constant() -> None:
    """The CLI writes the default out so that --help imports no simulation code; it must not drift."""
    from leaselab.cmd_mutants import SWEEP_SIMULATIONS_DEFAULT
    from sim.explore.sweep_mutants import SWEEP_SIMULATIONS

    assert SWEEP_SIMULATIONS_DEFAULT == SWEEP_SIMULATIONS
