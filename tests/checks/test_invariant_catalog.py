"""The catalogue's public API: verdict shape, composition, check_all robustness, the index."""

from __future__ import annotations

import json

import pytest
from invariant_histories import FAIL, OK, OTHER, WORKER, History

from checks import (
    INVARIANTS,
    Finding,
    Index,
    Invariant,
    Kind,
    Validity,
    Verdict,
    check_all,
    compose,
    coverage,
)
from checks.fused import index_of
from checks.history import STORE, Op, OpType
from checks.index import transition_number
from model.statements import DEAD_LETTER_STALE, FINISH_RUN, NAMES, RENEW_LEASE, REQUEUE, START_RUN

NAMES_AND_KINDS = [
    ("every_write_accounted", "always"),
    ("no_success_over_unrecorded_write", "always"),
    ("no_retry_after_failed_write_audit", "always"),
    ("non_idempotent_at_most_once", "always"),
    ("terminal_is_terminal", "always"),
    ("settles_by_owner", "always"),
    ("unique_event_sequence", "always"),
    ("requeue_budget_respected", "always"),
    ("writes_fenced_under_lease", "always"),
    ("fence_matches_inflight_write", "always"),
    ("read_only_audit_fail_soft", "always"),
    ("every_run_terminates", "eventually"),
    ("approved_write_turn_recorded", "always"),
    ("builtin_write_approved", "always"),
    ("unknown_name_is_strictest", "always"),
    ("retryable_failure_retried", "always"),
    ("dead_letter_reason_matches_cause", "always"),
    ("segment_outcome_matches_row", "always"),
    ("terminal_row_no_stale_fence", "always"),
    ("row_timestamps_kept", "always"),
    ("segment_outcome_true", "always"),
    ("lease_lost_means_lost", "always"),
    ("reaper_account_true", "always"),
    ("enqueue_cancel_result_true", "always"),
    ("terminal_reason_names_cause", "always"),
    ("lost_lease_stops", "always"),
    ("cancel_observed_at_boundary", "always"),
    ("lease_within_bound", "always"),
    ("lease_is_the_specs", "always"),
    ("requeue_backoff_per_spec", "always"),
    ("entry_points_throw_as_specified", "always"),
    ("event_sequence_without_gap", "always"),
    ("recovery_per_spec", "always"),
    ("rounds_per_spec", "always"),
    ("claim_follows_precheck", "always"),
    ("inserted_row_per_spec", "always"),
    ("settled_totals_per_spec", "always"),
    ("payload_failure_has_cause", "always"),
    ("stale_selection_per_spec", "always"),
    ("input_resume_runs_its_calls", "always"),
    ("requeued_row_per_spec", "always"),
    ("fence_stamps_a_write", "always"),
    ("audit_step_execution_true", "always"),
    ("approval_runs_as_decided", "always"),
    ("failure_classified_per_spec", "always"),
    ("invoked_tool_known_and_offered", "always"),
    ("position_reresolved_after_claim", "always"),
]


def _verdict(valid: Validity) -> Verdict:
    return Verdict("x", Kind.ALWAYS, valid)


def _clean_history() -> History:
    b = History()
    b.enqueue()
    b.claim()
    b.event(seq=0, kind="llm")
    b.write("c1", "non_idempotent_write", execution=1, seq=1)
    b.write("c2", "idempotent_write", execution=2, seq=2)
    b.settle("completed", site="executor.settle_completed", iterations=2, total_tokens=30)
    b.final()
    return b


# -- the catalogue -----------------------------------------------------------------------


def test_catalogue_holds_the_invariants_in_order_with_their_kinds() -> None:
    assert [(inv.name, inv.kind.value) for inv in INVARIANTS] == NAMES_AND_KINDS


def test_every_invariant_has_a_one_line_meaning() -> None:
    assert all(inv.meaning and "\n" not in inv.meaning for inv in INVARIANTS)


def test_a_clean_history_is_valid_under_every_invariant() -> None:
    verdicts = check_all(_clean_history().ops)
    assert {name: v.valid for name, v in verdicts.items()} == {name: Validity.VALID for name, _ in NAMES_AND_KINDS}


def test_a_clean_history_reaches_run_completed_only() -> None:
    reached = coverage(_clean_history().ops)
    assert [name for name, hit in reached.items() if hit] == ["run_completed"]


def test_an_empty_history_is_valid_except_for_termination_which_is_unknown() -> None:
    verdicts = check_all([])
    assert verdicts.pop("every_run_terminates").valid is Validity.UNKNOWN
    assert all(v.valid is Validity.VALID for v in verdicts.values())


def test_check_all_accepts_a_prebuilt_index() -> None:
    b = _clean_history()
    assert check_all(index_of(b.ops)) == check_all(b.ops)


# -- robustness ---------------------------------------------------------------------------


def test_check_all_turns_a_raising_checker_into_unknown() -> None:
    def broken(_: Index) -> Finding:
        raise KeyError("row")

    invariants = (Invariant("broken", Kind.ALWAYS, "raises", broken), *INVARIANTS)
    verdicts = check_all(_clean_history().ops, invariants)
    assert verdicts["broken"].valid is Validity.UNKNOWN
    assert "KeyError" in verdicts["broken"].explanation
    assert verdicts["terminal_is_terminal"].valid is Validity.VALID


def test_a_malformed_row_makes_the_row_checkers_unknown_not_crash() -> None:
    b = History()
    b.add(STORE, OK, transition=NAMES[FINISH_RUN], identity=WORKER, site="", matched=True, row="garbage")
    verdicts = check_all(b.ops)
    assert verdicts["terminal_is_terminal"].valid is Validity.UNKNOWN
    assert "no row mapping" in verdicts["terminal_is_terminal"].explanation
    assert verdicts["unique_event_sequence"].valid is Validity.VALID


def test_an_unreadable_history_yields_unknown_for_every_invariant() -> None:
    verdicts = check_all([None])  # type: ignore[list-item]
    assert [v.valid for v in verdicts.values()] == [Validity.UNKNOWN] * len(INVARIANTS)
    assert coverage([None]) == dict.fromkeys(coverage([]), False)  # type: ignore[list-item]


# -- verdicts and composition ------------------------------------------------------------


def test_compose_lets_false_beat_unknown() -> None:
    verdicts = [_verdict(Validity.VALID), _verdict(Validity.UNKNOWN), _verdict(Validity.INVALID)]
    assert compose(verdicts) is Validity.INVALID


def test_compose_lets_unknown_beat_true() -> None:
    assert compose([_verdict(Validity.VALID), _verdict(Validity.UNKNOWN)]) is Validity.UNKNOWN


def test_compose_of_all_true_is_true() -> None:
    assert compose([_verdict(Validity.VALID), Validity.VALID]) is Validity.VALID


def test_compose_of_nothing_is_true() -> None:
    assert compose([]) is Validity.VALID


def test_validity_serialises_as_true_false_or_unknown() -> None:
    assert [v.json for v in Validity] == [True, False, "unknown"]


def test_verdict_serialises_to_json() -> None:
    verdict = Verdict("n", Kind.EVENTUALLY, Validity.UNKNOWN, (3, 5), "why", 4)
    assert json.loads(json.dumps(verdict.to_json())) == {
        "name": "n",
        "kind": "eventually",
        "valid": "unknown",
        "witness": [3, 5],
        "explanation": "why",
        "judged": 4,
    }


def test_a_verdict_counts_every_case_its_checker_judged() -> None:
    """held + violated + undecided: a valid verdict over zero cases is vacuous, and says so."""
    from invariant_histories import History, judge

    b = History()
    b.start()
    b.write("c1", "non_idempotent_write")
    b.write("c2", "idempotent_write", execution=2, seq=1)
    assert judge("writes_fenced_under_lease", b).judged == 2
    assert judge("non_idempotent_at_most_once", b).judged == 1
    assert judge("unique_event_sequence", History()).judged == 0


def test_verdict_is_frozen() -> None:
    verdict = _verdict(Validity.VALID)
    with pytest.raises(AttributeError):
        verdict.valid = Validity.INVALID  # type: ignore[misc]


def test_explanation_counts_further_violations() -> None:
    b = History()
    b.event(seq=1)
    b.event(seq=1)
    b.event(seq=1)
    verdict = check_all(b.ops)["unique_event_sequence"]
    assert verdict.witness == (0, 1)
    assert "first of 2 violations" in verdict.explanation


# -- the shared index --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "number"),
    [(NAMES[START_RUN], START_RUN), (NAMES[REQUEUE], REQUEUE), (NAMES[DEAD_LETTER_STALE], DEAD_LETTER_STALE), ("", "")],
)
def test_transition_number_is_the_exact_t_number(name: str, number: str) -> None:
    op = Op(0, 0.0, WORKER, STORE, "r1", OK, {"transition": name})
    assert transition_number(op) == number


def test_a_tool_completion_pairs_with_the_invoke_of_its_own_process_and_run() -> None:
    b = History()
    mine = b.tool("c1", "read_only", identity=WORKER)
    theirs = b.tool("c1", "read_only", identity=OTHER)
    their_done = b.tool_done(process=OTHER)
    my_done = b.tool_done(FAIL, process=WORKER)
    ix = index_of(b.ops)
    assert ix.completions[mine].index == my_done
    assert ix.completions[theirs].index == their_done


def test_a_landing_is_attributed_to_the_outstanding_invoke_of_its_call() -> None:
    b = History()
    first = b.tool("c1", "idempotent_write")
    b.tool_done()
    second = b.tool("c1", "idempotent_write")
    landing = b.landing("c1", "idempotent_write", execution=2)
    ix = index_of(b.ops)
    assert first not in ix.landing_of
    assert ix.landing_of[second].index == landing


def test_an_unmatched_store_record_carries_no_row() -> None:
    b = History()
    b.start()
    b.store(NAMES[RENEW_LEASE], matched=False)
    assert [op.index for op in index_of(b.ops).rows] == [0]


def test_an_invariant_registered_at_its_checker_is_judged_with_the_catalogue() -> None:
    """Adding an invariant is one registration where its checker is defined: the judging pass then feeds
    it, its function form exists, and the catalogue lists it (after the ordered ones), with its tags."""
    from checks import judge
    from checks.catalog import catalogue, tagged
    from checks.fused import Machine
    from checks.history import TOOL
    from checks.judgement import REGISTERED, Tally, invariant, unregister

    @invariant("toy_no_tool_call", Kind.ALWAYS, "no tool is ever invoked (a toy)", tags=("toy",))
    class NoToolCall(Machine):
        __slots__ = ("invokes",)
        STREAMS = {"invokes": (TOOL, OpType.INVOKE)}
        invokes: list[Op]

        def finish(self, ix: Index) -> Finding:
            tally = Tally()
            for op in self.invokes:
                tally.violate((op.index,), "a tool was invoked")
            return tally.finding("tool invokes") if self.invokes else Finding(Validity.VALID, (), "none", 0)

    try:
        b = History()
        b.claim()
        call = b.tool("c1", "read_only")
        judged = judge(b.ops)
        assert judged.verdicts["toy_no_tool_call"].valid is Validity.INVALID
        assert judged.verdicts["toy_no_tool_call"].witness == (call,)
        assert catalogue()[-1].name == "toy_no_tool_call" and "toy_no_tool_call" not in INVARIANTS
        assert REGISTERED["toy_no_tool_call"].judge(index_of(b.ops)).valid is Validity.INVALID
        assert "toy_no_tool_call" not in tagged("toy")  # tags of the catalogue as loaded
    finally:
        unregister("toy_no_tool_call")
    assert "toy_no_tool_call" not in judge(b.ops).verdicts


def test_registering_one_name_twice_is_refused() -> None:
    from checks.judgement import invariant

    with pytest.raises(ValueError, match="registered twice"):
        invariant("every_write_accounted", Kind.ALWAYS, "again")(type("Again", (), {}))  # type: ignore[type-var]


def test_every_catalogued_invariant_is_registered_at_its_checker_and_tagged_oracles_exist() -> None:
    from checks.catalog import ORDER, tagged
    from checks.judgement import ADR_PROMISE, OUTCOME_ORACLE, REGISTERED

    assert [inv.name for inv in INVARIANTS] == list(ORDER)
    assert all(REGISTERED[inv.name] is inv for inv in INVARIANTS)
    assert tagged(OUTCOME_ORACLE) and tagged(ADR_PROMISE) and not tagged(OUTCOME_ORACLE) & tagged(ADR_PROMISE)
