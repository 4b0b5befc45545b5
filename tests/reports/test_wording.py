"""Words and numbers for people: cited records tied to the lanes, floats rounded, counts as words."""

from __future__ import annotations

from register.findings import FINDINGS
from reports import timeline, wording
from sim.explore.counterexample import read


def test_the_records_a_checker_cites_are_found_and_the_count_of_more_violations_is_not() -> None:
    text = (
        "write 'x' of run 'run-003' at 29 ran under the row of 4: claimed by '', not 'w'; "
        "lease expired (0 < 26.33194992366935); sequence 3 at 635 and 665 (first of 6 violations)"
    )
    assert wording.cited_records(text) == [29, 4, 635, 665]
    assert wording.cited_records(text, known=range(100)) == [29, 4]
    assert wording.cited_records("requeued run 'run-001' a 4th time; execution 1 of run 'run-001'") == []


def test_the_text_cites_each_record_with_its_time_and_rounds_floats() -> None:
    text = "settled completed at 54 after the audit failed at 40; lease expired (0 < 26.33194992366935)"
    assert wording.annotate(text, {54: 57.2, 40: 41.0}) == (
        "settled completed at #54 (57.20 s) after the audit failed at #40 (41.00 s); lease expired (0 < 26.33)"
    )
    assert wording.annotate("at 7 and 8", {7: 1.0}) == "at #7 (1.00 s) and 8", "an unknown record stays as written"
    assert wording.annotate("execution 1 landed at 7", {7: 1.0, 3: 0.5, 9: 2.0}, witness=(9, 3, 7)) == (
        "execution 1 landed at #7 (1.00 s) (witness records #3 (0.50 s), #9 (2.00 s))"
    ), "witness records the sentence does not cite are named after it"


def test_every_record_a_real_explanation_cites_is_a_record_of_its_history() -> None:
    """The phrasing the citation pattern relies on ('at N', 'of N', 'and N'), checked on every finding's
    counterexample: each cited number is a history index, and the witness records are among them."""
    citing = 0
    for finding in FINDINGS:
        cx = read(finding.path)
        replay = cx.run()
        verdict = replay.verdicts[cx.invariant]
        cited = wording.cited_records(verdict.explanation)
        assert set(cited) <= {op.index for op in replay.history}, (finding.id, verdict.explanation)
        if cited:
            citing += 1
            assert set(cited) & set(verdict.witness), (finding.id, verdict.explanation, verdict.witness)
    assert citing >= len(FINDINGS) // 2


def test_numbers_read_as_people_write_them() -> None:
    assert wording.rounded("0 < 26.33194992366935 and 0.000123456 but 1.5 and run-003.12 stay") == (
        "0 < 26.33 and 0.000123 but 1.5 and run-003.12 stay"
    )
    assert wording.counts({"cancelled": 2, "completed": 1_234, "failed": 0}) == "cancelled 2, completed 1,234"
    assert wording.counts({"failed": 0}) == "none"
    assert wording.fault_text("41 slow stretch 1.7100757119907892") == "41 slow stretch 1.71"
    # never in scientific notation (was 1.48e+03, -2.7e+03 and 1.2e-05)
    assert wording.fault_text("357 store slow 1479.6") == "357 store slow 1480"
    assert wording.fault_text("34 clock_skew offset -2698.688150934726") == "34 clock_skew offset -2699"
    assert wording.fault_text("3 identity swap 0.000012") == "3 identity swap 0.000012"
    assert wording.fault_text("27 crash after 0") == "27 crash after 0"


def test_a_segment_with_nothing_to_do_says_so() -> None:
    from checks.history import Op, OpType

    op = Op(0, 1.0, "worker1", "segment", "run-001", OpType.OK, {"outcome": None})
    assert timeline.describe(op) == "■ nothing to do (no outcome)"


def test_leaselab_run_prints_counts_and_rounded_numbers_not_python() -> None:
    import leaselab
    from leaselab.results import verdict_lines

    lines = verdict_lines(leaselab.simulate("default", "head", seed=7))
    assert "  final rows: cancelled 1, completed 3, failed 4" in lines
    assert not [line for line in lines if "{'" in line or "None" in line]
