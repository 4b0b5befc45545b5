"""The index's segment attribution (Span.records, Index.span_at, Span.last_row, the lazy
completions) against a direct reference: the walk the checkers used before the index did it,
an explicit stack of open segments per process, run over hand-built and simulated histories."""

from __future__ import annotations

import sys

import pytest
from invariant_histories import INFO, OTHER, History

from checks import Index
from checks.fused import index_of
from checks.history import SEGMENT, Op, OpType
from checks.index import _pair_all
from checks.segments import within_segments
from scenarios.loader import load_scenario
from sim.world.simulate import simulate

_NEVER = sys.maxsize


def reference_attribution(history: list[Op]) -> dict[int, int | None]:
    """Record index -> key of the innermost segment of its process open at it (segment records
    excluded): spans stay open until a record of the process comes after their completion."""
    completions = _pair_all(history)
    open_spans: dict[str, list[tuple[int, int]]] = {}
    found: dict[int, int | None] = {}
    for op in history:
        stack = open_spans.setdefault(op.process, [])
        while stack and stack[-1][1] < op.index:
            stack.pop()
        if op.op == SEGMENT:
            if op.type is OpType.INVOKE:
                done = completions.get(op.index)
                stack.append((op.index, _NEVER if done is None else done.index))
            continue
        found[op.index] = stack[-1][0] if stack else None
    return found


def _nested_history() -> History:
    b = History()
    b.claim()  # outside every segment
    b.segment("run_queued")
    b.claim()
    b.segment("run_queued")  # nested on the same process
    b.claim(identity=OTHER)  # another process inside the nesting: no segment of its own
    b.tool("c1", "read_only")
    b.segment_done()
    b.claim()  # back in the outer segment
    b.segment("approve", process=OTHER)
    b.claim(identity=OTHER)
    b.segment_done(INFO, process=OTHER)
    b.claim()
    b.segment_done()
    b.claim()
    b.segment("run_queued")  # never completes
    b.claim()
    return b


def _histories() -> list[tuple[str, list[Op]]]:
    cases = [("nested", _nested_history().ops)]
    for name, seeds in (("default", range(6)), ("single_run", range(3)), ("approval_write_on_resume", range(4))):
        scenario = load_scenario(name)
        cases += [(f"{name}/{seed}", simulate(scenario, "head", seed, judge=False).history) for seed in seeds]
    return cases


@pytest.mark.parametrize(("name", "history"), _histories(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_index_attributes_every_record_as_the_stack_walk_does(name: str, history: list[Op]) -> None:
    ix = index_of(history)
    expected = reference_attribution(history)
    assert any(key is not None for key in expected.values())
    records = [op for op in history if op.op != SEGMENT]
    got = {op.index: (None if (span := ix.span_at(op)) is None else span.key) for op in records}
    assert got == expected
    walked = {op.index: (None if span is None else span.key) for op, span in within_segments(ix, records)}
    assert walked == expected


@pytest.mark.parametrize(("name", "history"), _histories(), ids=lambda v: v if isinstance(v, str) else "")
def test_each_span_lists_exactly_the_records_of_its_run_attributed_to_it(name: str, history: list[Op]) -> None:
    ix = index_of(history)
    expected = reference_attribution(history)
    by_key = {span.key: span for span in ix.spans}
    for span in ix.spans:
        own = [op.index for op in history if op.op != SEGMENT and expected[op.index] == span.key and op.run == span.run]
        assert [op.index for op in span.records] == own
    assert sorted(by_key) == [op.index for op in history if op.op == SEGMENT and op.type is OpType.INVOKE]


@pytest.mark.parametrize(("name", "history"), _histories(), ids=lambda v: v if isinstance(v, str) else "")
def test_spans_carry_their_completion_and_the_row_they_left(name: str, history: list[Op]) -> None:
    ix = index_of(history)
    completions = _pair_all(history)
    assert ix.completions == completions
    for span in ix.spans:
        done = completions.get(span.key)
        assert span.completion is done
        assert span.end == (_NEVER if done is None else done.index)
        if done is not None:
            earlier = [row for row in ix.rows if row.run == span.run and row.index < done.index]
            assert span.last_row is (earlier[-1] if earlier else None)
    for invoke_index, done in ix.tool_completions.items():
        assert completions[invoke_index] is done


def test_a_tally_keeps_the_finding_of_the_earliest_deciding_record() -> None:
    from checks.judgement import Tally
    from checks.verdict import Validity

    tally = Tally()
    tally.violate((9, 7), "late", at=9)
    tally.violate((3,), "early", at=3)
    tally.violate((5,), "middle", at=5)
    tally.unknown((8,), "unknown late", at=8)
    tally.unknown((2,), "unknown early", at=2)
    finding = tally.finding("cases")
    assert finding.valid is Validity.INVALID
    assert finding.witness == (3,)
    assert finding.explanation == "early (first of 3 violations)"
    assert finding.judged == 5
    in_order = Tally()
    in_order.violate((1,), "first")
    in_order.violate((0,), "second")
    assert in_order.finding("cases").explanation == "first (first of 2 violations)"


def test_valid_findings_and_verdicts_kept_for_reuse_equal_fresh_ones() -> None:
    from checks import Finding, Invariant, Kind, Validity, Verdict

    def holding(count: int) -> Invariant:
        def judge(_: Index) -> Finding:
            from checks.judgement import Tally

            tally = Tally()
            for _ in range(count):
                tally.hold()
            return tally.finding("cases")

        return Invariant("memo_probe", Kind.ALWAYS, "probe", judge)

    empty = index_of([])
    first, again, other = holding(3).check(empty), holding(3).check(empty), holding(4).check(empty)
    assert first == again == Verdict("memo_probe", Kind.ALWAYS, Validity.VALID, (), "3 cases checked, none violates", 3)
    assert other == Verdict("memo_probe", Kind.ALWAYS, Validity.VALID, (), "4 cases checked, none violates", 4)
    sometimes = Invariant("memo_probe", Kind.SOMETIMES, "probe", holding(3).judge).check(empty)
    assert sometimes.kind is Kind.SOMETIMES and sometimes.judged == 3
