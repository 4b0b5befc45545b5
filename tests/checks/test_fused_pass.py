"""The single judging pass (checks/fused.py): every checker fed in one walk gives what each
gives alone, a checker written against the index still runs (the fallback), a raising handler stops
only its own machine, and the lazily listed parts of the index equal a direct reading of the history."""

from __future__ import annotations

from typing import ClassVar

import pytest
from invariant_histories import History

from checks import COVERAGE, INVARIANTS, Finding, Index, Invariant, Kind, Validity, coverage, judge
from checks.fused import Key, Machine, index_of, run_pass
from checks.history import SEGMENT, TOOL, Op, OpType
from checks.judgement import Tally
from scenarios.intensity import scale_faults
from scenarios.loader import load_scenario
from sim.world.simulate import simulate


def _histories() -> list[tuple[str, list[Op]]]:
    cases = []
    for name, policy, seeds in (
        ("default", "head", range(3)),
        ("default", "adr-104", range(2)),
        ("approval_write_on_resume", "adr-111", range(3)),
        ("audit_failure_after_write", "adr-104", range(3)),
        ("tool_outlives_lease", "adr-111", range(2)),
        ("worker_crash_mid_write", "head", range(3)),
    ):
        scenario = scale_faults(load_scenario(name), 2.0)
        cases += [(f"{name}/{policy}/{seed}", simulate(scenario, policy, seed, judge=False).history) for seed in seeds]
    return cases


HISTORIES = _histories()
IDS = [name for name, _ in HISTORIES]


@pytest.mark.parametrize(("name", "history"), HISTORIES, ids=IDS)
def test_one_pass_gives_every_verdict_each_checker_gives_alone(name: str, history: list[Op]) -> None:
    judged = judge(history)
    assert list(judged.verdicts) == [inv.name for inv in INVARIANTS]
    for inv in INVARIANTS:
        assert judged.verdicts[inv.name] == inv.check(history), inv.name
        assert judged.verdicts[inv.name] == inv.check(index_of(history)), inv.name
    assert judged.coverage == coverage(history) == {prop.name: bool(prop.holds(index_of(history))) for prop in COVERAGE}


def test_the_histories_judged_here_hold_cases_and_violations() -> None:
    """What makes the comparison above mean something: the checkers judged cases and found violations."""
    verdicts = [judge(history).verdicts for _, history in HISTORIES]
    assert sum(v.judged for vs in verdicts for v in vs.values()) > 1000
    assert {name for vs in verdicts for name, v in vs.items() if v.valid is Validity.INVALID} >= {
        "every_write_accounted",
        "writes_fenced_under_lease",
    }


def _rows_counted(ix: Index) -> Finding:
    tally = Tally()
    for _ in ix.rows:
        tally.hold()
    return tally.finding("rows")


def test_a_checker_written_against_the_index_runs_after_the_pass_over_its_index() -> None:
    fallback = Invariant("rows_counted", Kind.ALWAYS, "counts the matched rows", _rows_counted)
    history = HISTORIES[0][1]
    judged = judge(history, (*INVARIANTS, fallback))
    assert judged.index is not None
    assert judged.verdicts["rows_counted"].judged == len(judged.index.rows) > 0
    assert judged.verdicts["rows_counted"] == fallback.check(history)
    assert {k: v for k, v in judged.verdicts.items() if k != "rows_counted"} == judge(history).verdicts


class _RaisesAtSecondToolInvoke(Machine):
    """Counts tool invokes as the pass reaches them, and breaks at the second."""

    __slots__ = ("seen",)
    HANDLERS: ClassVar[dict[Key, str]] = {(TOOL, OpType.INVOKE): "on_invoke"}

    def __init__(self) -> None:
        self.seen = 0

    def on_invoke(self, op: Op) -> None:
        self.seen += 1
        if self.seen == 2:
            raise RuntimeError(f"broken at {op.index}")

    def finish(self, ix: Index) -> Finding:
        return Tally().finding("nothing")


def test_a_raising_handler_stops_only_its_own_machine() -> None:
    history = HISTORIES[0][1]
    second = [op.index for op in history if op.op == TOOL and op.type is OpType.INVOKE][1]
    broken = Invariant("broken", Kind.ALWAYS, "raises", lambda ix: Tally().finding("x"), _RaisesAtSecondToolInvoke)
    judged = judge(history, (broken, *INVARIANTS))
    assert judged.verdicts["broken"].valid is Validity.UNKNOWN
    assert judged.verdicts["broken"].explanation == f"checker raised RuntimeError: broken at {second}"
    assert {k: v for k, v in judged.verdicts.items() if k != "broken"} == judge(history).verdicts
    assert broken.check(history) == judged.verdicts["broken"]


def test_an_unreadable_history_makes_every_verdict_unknown_and_reaches_nothing() -> None:
    bad = [Op(0, 0.0, "w", SEGMENT, "r", OpType.INVOKE, None)]  # type: ignore[arg-type]
    judged = judge(bad)
    assert judged.index is None
    assert all(v.valid is Validity.UNKNOWN for v in judged.verdicts.values())
    assert not any(judged.coverage.values())


@pytest.mark.parametrize(("name", "history"), HISTORIES, ids=IDS)
def test_the_lazily_listed_parts_of_the_index_equal_a_direct_reading(name: str, history: list[Op]) -> None:
    ix = index_of(history)
    for key, ops in ix.buckets.items():
        assert ops == [op for op in history if (op.op, op.type) == key]
    assert sum(len(ops) for ops in ix.buckets.values()) == len(history)
    assert ix.landings == sum(1 for op in history if op.op == "landing")
    for span in ix.spans:
        if span.completion is not None:
            assert span.records_before(span.completion) == span.records
        for op in span.records:
            assert span.records_before(op) == [r for r in span.records if r.index < op.index]


def test_records_are_attributed_in_a_history_whose_indexes_are_not_positions() -> None:
    """A history cut out of a longer one keeps its indexes: each segment still lists its records."""
    b = History()
    b.segment("run_queued")
    b.claim()
    b.segment("run_queued")  # nested on the same process
    b.provider()
    b.segment_done()
    b.tool("c1", "read_only")
    b.segment_done()
    direct = index_of(b.ops)
    moved = index_of([Op(op.index + 100, *op[1:]) for op in b.ops])
    for here, there in zip(direct.spans, moved.spans, strict=True):
        assert [op.index + 100 for op in here.records] == [op.index for op in there.records]
    assert [op.op for op in moved.spans[0].records] == ["store", TOOL]
    assert [op.op for op in moved.spans[1].records] == ["provider"]


def test_a_history_is_walked_once() -> None:
    """The pass reads the history as a one-shot iterator: nothing after it walks the iterable again."""
    history = HISTORIES[1][1]
    assert judge(iter(history)).verdicts == judge(history).verdicts
    index, failed = run_pass(iter(history))
    assert not failed and len(index.history) == len(history)
