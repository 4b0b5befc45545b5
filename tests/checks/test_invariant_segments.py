"""The segment walk: records attributed to the innermost segment of their process open at them."""

from __future__ import annotations

from invariant_histories import INFO, OTHER, WORKER, History

from checks.fused import index_of
from checks.history import TOOL, OpType
from checks.segments import within_segments


def _attribution(b: History) -> list[tuple[int, int | None]]:
    ix = index_of(b.ops)
    return [(op.index, None if span is None else span.key) for op, span in within_segments(ix, ix.rows)]


def test_records_belong_to_the_open_segment_of_their_process() -> None:
    b = History()
    outside = b.enqueue()  # process '' : no segment
    seg = b.segment("run_queued")
    other = b.claim(identity=OTHER)  # another process, no segment of its own
    own = b.claim()
    b.segment_done()
    after = b.claim()
    assert _attribution(b) == [(outside, None), (other, None), (own, seg), (after, None)]


def test_a_nested_segment_holds_its_records_and_the_outer_resumes_after_it() -> None:
    b = History()
    outer = b.segment("run_queued")
    first = b.claim()
    inner = b.segment("run_queued")
    nested = b.claim()
    b.segment_done()
    last = b.claim()
    b.segment_done()
    assert _attribution(b) == [(first, outer), (nested, inner), (last, outer)]


def test_an_info_completion_closes_a_segment_and_none_leaves_it_open() -> None:
    b = History()
    b.segment("approve", process=OTHER)
    b.segment_done(INFO, process=OTHER)
    after_crash = b.claim(identity=OTHER)
    seg = b.segment("run_queued")
    late = b.claim()
    ix = index_of(b.ops)
    walked = list(within_segments(ix, ix.rows))
    assert [(op.index, None if span is None else span.key) for op, span in walked] == [(after_crash, None), (late, seg)]
    span = walked[1][1]
    assert span is not None
    assert (span.entry, span.identity, span.run) == ("run_queued", WORKER, "r1")


def test_the_walk_yields_only_the_given_streams() -> None:
    b = History()
    b.segment("run_queued")
    invoke = b.tool("c1", "read_only")
    b.segment_done()
    ix = index_of(b.ops)
    assert [op.index for op, _ in within_segments(ix, ix.of_type(TOOL, OpType.INVOKE))] == [invoke]
