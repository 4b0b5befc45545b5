"""Which segment each record ran in: records attributed to their open segment.

A segment (one entry-point call) is a ``segment`` invoke paired with its completion per
process, exactly as the shared index pairs them (last-in-first-out, so a wake-up handled
inline on the Sync transport is a segment nested inside the dispatching one). A record of
a process belongs to the innermost segment of that process open at it. The shared index
attributes records in its single pass (each :class:`Span` lists the records of its own run)
and finds the segment of any one record (:meth:`Index.span_at`); :func:`within_segments`
walks given buckets with that attribution.

Knows only the history, through the shared index.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from checks.history import Op
from checks.index import Index, Span, merged


def within_segments(ix: Index, *streams: Iterable[Op]) -> Iterator[tuple[Op, Span | None]]:
    """Each record of ``streams`` in history order, with the innermost segment of its process
    open at it (None outside every segment). ``streams`` must not hold segment records."""
    span_at = ix.span_at
    for op in merged(*streams):
        yield op, span_at(op)


__all__ = ["Span", "within_segments"]
