"""Which segment each record ran in: a walk that attributes records to their open segment.

A segment (one entry-point call) is a ``segment`` invoke paired with its completion per
process, exactly as the shared index pairs them (last-in-first-out, so a wake-up handled
inline on the Sync transport is a segment nested inside the dispatching one). A record of
a process belongs to the innermost segment of that process open at it. Checkers that judge
"within one segment" walk their buckets through :func:`within_segments`: one pass over a
merge of the segment invokes and those buckets.

Knows only the history, through the shared index.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from model.history import SEGMENT, Op, OpType
from model.invariants.index import Index, merged

_NEVER = sys.maxsize


@dataclass(frozen=True, slots=True)
class Span:
    """One segment: its invoke, and the history index of its completion (``_NEVER`` when none)."""

    invoke: Op
    end: int

    @property
    def key(self) -> int:
        """A stable key for per-segment state: the index of the segment invoke."""
        return self.invoke.index

    @property
    def entry(self) -> str:
        return str(self.invoke.get("entry", ""))

    @property
    def identity(self) -> str:
        return str(self.invoke.get("identity", ""))

    @property
    def run(self) -> str:
        return self.invoke.run


def within_segments(ix: Index, *streams: Iterable[Op]) -> Iterator[tuple[Op, Span | None]]:
    """Each record of ``streams`` in history order, with the innermost segment of its process
    open at it (None outside every segment). ``streams`` must not hold segment invokes."""
    open_spans: dict[str, list[Span]] = {}
    completions = ix.completions
    invoke = OpType.INVOKE
    for op in merged(ix.of_type(SEGMENT, invoke), *streams):
        # tuple positions: 0 index, 2 process, 3 op, 5 type (one step per record of three checkers)
        index = op[0]
        stack = open_spans.get(op[2])
        if stack is None:
            stack = open_spans[op[2]] = []
        while stack and stack[-1].end < index:
            stack.pop()
        if op[5] is invoke and op[3] == SEGMENT:
            completion = completions.get(index)
            stack.append(Span(op, _NEVER if completion is None else completion[0]))
            continue
        yield op, (stack[-1] if stack else None)


__all__ = ["Span", "within_segments"]
