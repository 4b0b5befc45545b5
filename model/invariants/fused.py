"""The single judging pass: the shared index and every checker consume one history in one walk.

A checker is a :class:`Machine`. It says which records it reads by ``(op, type)``, or by
``(ROW, number)`` for a matched store row of one T-number (``(ROW, ANY_ROW)``: every matched
row), in two ways. ``STREAMS``: the pass keeps every record of the key in one list, shared by
every machine that names it, which the machine walks when it finishes (a tight loop, several
times cheaper in CPython than a call per record). ``HANDLERS``: the pass calls a method with each
record of the key as it reaches it, before adding the record to the index; the method sees what
the pass knows then through :class:`Live` (the segments open per process, so a record's segment
is the top of its process's stack rather than a search; the matched rows of each run so far, so
"the row before" is the last one). Interleavings that checkers used to merge and sort come free
this way. What a case needs from later in the history (a tool call's completion, the final rows)
the machine keeps and judges in :meth:`Machine.finish`, which gets the finished
:class:`~model.invariants.index.Index` (its rows and segments are the pass's own lists too).

The index's bookkeeping is inline for the records it pairs or lists (segments, matched rows,
tool calls, landings, final rows); a record nobody reads costs one dictionary lookup. A checker
written against the index alone (a plain ``Checker``) still runs, after the pass, over the index
it built: the compatible fallback, so a new checker can be ported to a machine later.

A handler that raises stops only its own machine (its verdict is unknown, as a raising checker's
always was); a record the index cannot read makes every verdict unknown. Knows only the history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any, ClassVar

from model.history import FINAL, LANDING, SEGMENT, STORE, TOOL, Op, OpType
from model.invariants.index import Index, Span, _call_key, epoch_in

Handler = Callable[[Op], None]
Key = tuple[str, Any]
ROW = "row"
"""The pseudo operation of a matched store row with its after-state (what ``Index.rows`` lists)."""
ANY_ROW = "*"
"""``(ROW, ANY_ROW)``: every matched row, whatever its T-number."""

_INVOKE, _OK = OpType.INVOKE, OpType.OK


class Live:
    """What the pass knows when it hands a record to a handler: everything before that record.

    ``number`` is the T-number of the matched row being dispatched (only meaningful in a ROW
    handler)."""

    __slots__ = ("_epoch_s", "history", "landing_of", "number", "open_segments", "rows_by_run", "tool_completions")

    def __init__(
        self,
        open_segments: dict[str, list[Span]],
        rows_by_run: dict[str, list[Op]],
        tool_completions: dict[int, Op],
        landing_of: dict[int, Op],
        history: tuple[Op, ...] = (),
    ) -> None:
        self.open_segments = open_segments
        self.rows_by_run = rows_by_run
        self.tool_completions = tool_completions
        """Tool invoke index -> its completion, for the calls completed so far."""
        self.landing_of = landing_of
        """Tool invoke index -> the landing it produced, for the landings so far."""
        self.number = ""
        self.history = history
        self._epoch_s: int | None = None

    @property
    def epoch_s(self) -> int:
        """The history's epoch (``Index.epoch_s``: the 'chaos' phase record's, wherever it is)."""
        found = self._epoch_s
        if found is None:
            found = self._epoch_s = epoch_in(self.history)
        return found

    def span_of(self, op: Op) -> Span | None:
        """The innermost segment of the record's process open at it (``Index.span_at``)."""
        segments = self.open_segments.get(op[2])
        return segments[-1] if segments else None

    def own_span(self, op: Op) -> Span | None:
        """The record's segment when it is of the segment's own run (the records ``Span.records`` lists)."""
        segments = self.open_segments.get(op[2])
        if not segments:
            return None
        span = segments[-1]
        return span if span.run == op[4] else None

    def row_before(self, run: str) -> Op | None:
        """The run's latest matched row before the record (``Index.row_before``)."""
        rows = self.rows_by_run.get(run)
        return rows[-1] if rows else None


class Machine:
    """A checker fed by the single pass (see the module docstring).

    ``STREAMS`` names attributes the pass sets to its list of every record of a key (shared by
    every machine that names the key): what the machine walks when it finishes. ``HANDLERS``
    names the method the pass calls with each record of a key as it reaches it, for a machine
    that must judge with what the pass knows then (``self.live``, a :class:`Live`)."""

    __slots__ = ("live",)
    STREAMS: ClassVar[Mapping[str, Key]] = {}
    HANDLERS: ClassVar[Mapping[Key, str]] = {}
    live: Live

    def finish(self, ix: Index) -> Any:
        """The machine's conclusion (a checker's ``Finding``, a coverage property's bool)."""
        raise NotImplementedError


class _Layout:
    """Who reads what, for one sequence of machine classes; worked out once per sequence."""

    def __init__(self, kinds: tuple[type[Machine], ...]) -> None:
        self.streams = tuple(
            (i, attribute, key) for i, kind in enumerate(kinds) for attribute, key in kind.STREAMS.items()
        )
        self.stream_keys = tuple(dict.fromkeys(key for _, _, key in self.streams))
        self.reacting = tuple(i for i, kind in enumerate(kinds) if kind.HANDLERS)
        self.handlers = tuple((key, i, name) for i, kind in enumerate(kinds) for key, name in kind.HANDLERS.items())


@cache
def _layout(kinds: tuple[type[Machine], ...]) -> _Layout:
    return _Layout(kinds)


class _Table:
    """The dispatch table of one pass: the handlers per key (stream appends first)."""

    __slots__ = ("any_row", "by_key", "by_number", "failed", "layout", "machines", "streams")
    streams: dict[Key, list[Op]]

    def __init__(self, machines: Sequence[Machine], live: Live) -> None:
        layout = self.layout = _layout(tuple(type(machine) for machine in machines))
        streams = self.streams = {key: [] for key in layout.stream_keys}
        """A stream is the pass's bucket of its key: the pass appends every record to its bucket."""
        for position, attribute, key in layout.streams:
            setattr(machines[position], attribute, streams[key])
        for position in layout.reacting:
            machines[position].live = live
        self.machines = machines
        self.failed: dict[int, Exception] = {}
        self.build()

    def build(self) -> None:
        # a stream of an (op, type) key is the pass's bucket of that key; a matched-row stream is fed as a handler
        streams = self.streams
        by_key: dict[Key, list[Handler]] = {key: [streams[key].append] for key in streams if key[0] == ROW}
        machines, failed = self.machines, self.failed
        for key, position, name in self.layout.handlers:
            if position not in failed:
                handler = getattr(machines[position], name)
                same = by_key.get(key)
                if same is None:
                    by_key[key] = [handler]
                else:
                    same.append(handler)
        any_row = by_key.pop((ROW, ANY_ROW), None)
        self.any_row: tuple[Handler, ...] = tuple(any_row) if any_row else ()
        self.by_number: dict[str, tuple[Handler, ...]] = {}
        self.by_key: dict[Key, tuple[Handler, ...]] = {}
        for key, found in by_key.items():
            if key[0] == ROW:
                self.by_number[key[1]] = tuple(found)
            else:
                self.by_key[key] = tuple(found)

    def fail(self, handler: Handler, error: Exception) -> None:
        """The machine owning ``handler`` raised: it stops here, and its verdict says why."""
        owner = getattr(handler, "__self__", None)
        for i, machine in enumerate(self.machines):
            if machine is owner and i not in self.failed:
                self.failed[i] = error
                break
        self.build()


def run_pass(history: Iterable[Op], machines: Sequence[Machine] = ()) -> tuple[Index, dict[int, Exception]]:
    """Walk the history once: feed every machine and build the index. Returns the index and the
    exception of each machine (by position) whose handler raised."""
    records = history if type(history) is tuple else tuple(history)
    all_spans: list[Span] = []
    spans_by_process: dict[str, list[Span]] = {}
    open_segments: dict[str, list[Span]] = {}
    rows_by_run: dict[str, list[Op]] = {}
    tool_completions: dict[int, Op] = {}
    landing_of: dict[int, Op] = {}
    live = Live(open_segments, rows_by_run, tool_completions, landing_of, records)
    table = _Table(machines, live)
    rows: list[Op] = []
    numbers: dict[int, str] = {}
    rows_by_number: dict[str, list[Op]] = {}
    open_tools: dict[tuple[str, str], list[Op]] = {}
    open_calls: dict[tuple[str, Any, Any], list[Op]] = {}
    landed: set[tuple[str, Any]] = set()
    finals: dict[str, Op] = {}
    landings = 0
    invoke_type, ok_type = _INVOKE, _OK
    segment_op, store_op, tool_op, landing_op, final_op = SEGMENT, STORE, TOOL, LANDING, FINAL
    by_key = table.by_key
    buckets: dict[Key, list[Op]] = {key: same for key, same in table.streams.items() if key[0] != ROW}
    for op in records:
        name, type_ = op[3], op[5]
        key = (name, type_)
        bucket = buckets.get(key)
        if bucket is None:
            buckets[key] = [op]
        else:
            bucket.append(op)
        handlers = by_key.get(key) if by_key else None
        if handlers is not None:
            for handler in handlers:
                try:
                    handler(op)
                except Exception as error:
                    table.fail(handler, error)
                    by_key = table.by_key
        if name == segment_op:
            process = op[2]
            segments = open_segments.get(process)
            if type_ is invoke_type:
                span = Span(op, segments[-1] if segments else None, records)
                if segments is None:
                    open_segments[process] = [span]
                    spans_by_process[process] = [span]
                else:
                    segments.append(span)
                    spans_by_process[process].append(span)
                all_spans.append(span)
            elif segments:
                span = segments.pop()
                span.end = op[0]
                span.completion = op
                run_rows = rows_by_run.get(span.run)
                span.last_row = run_rows[-1] if run_rows else None
        elif name == store_op:
            if type_ is ok_type:
                value = op[6]
                if value.get("matched") and value.get("row") is not None:
                    transition = value.get("transition")
                    number = transition.strip().partition(" ")[0] if isinstance(transition, str) else ""
                    if table.any_row or number in table.by_number:
                        live.number = number
                        for handler in (*table.any_row, *table.by_number.get(number, ())):
                            try:
                                handler(op)
                            except Exception as error:
                                table.fail(handler, error)
                                by_key = table.by_key
                    run = op[4]
                    rows.append(op)
                    numbers[op[0]] = number
                    same = rows_by_number.get(number)
                    if same is None:
                        rows_by_number[number] = [op]
                    else:
                        same.append(op)
                    same = rows_by_run.get(run)
                    if same is None:
                        rows_by_run[run] = [op]
                    else:
                        same.append(op)
        elif name == tool_op:
            process, run, value = op[2], op[4], op[6]
            if type_ is invoke_type:
                open_tools.setdefault((process, run), []).append(op)
                open_calls.setdefault((run, value.get("call"), value.get("identity")), []).append(op)
                continue
            stack = open_tools.get((process, run))
            if stack:
                invoke = stack.pop()
                tool_completions[invoke[0]] = op
                calls = open_calls.get(_call_key(invoke), [])
                for i, call in enumerate(calls):
                    if call is invoke:
                        del calls[i]
                        break
        elif name == landing_op:
            landings += 1
            if type_ is not invoke_type:
                run, value = op[4], op[6]
                landed.add((run, value.get("execution")))
                outstanding = open_calls.get((run, value.get("call"), value.get("identity")))
                if outstanding:
                    landing_of.setdefault(outstanding[-1][0], op)
        elif name == final_op and type_ is not invoke_type:
            finals[op[4]] = op
    index = Index(
        history=records,
        rows=rows,
        numbers=numbers,
        rows_by_number=rows_by_number,
        tool_completions=tool_completions,
        landing_of=landing_of,
        landed=frozenset(landed),
        finals=finals,
        rows_by_run=rows_by_run,
        spans=all_spans,
        spans_by_process=spans_by_process,
        landings=landings,
    )
    index._lazy["buckets"] = buckets  # Index.buckets, listed in the same walk
    return index, table.failed


__all__ = ["ANY_ROW", "ROW", "Handler", "Key", "Live", "Machine", "run_pass"]
