"""The single judging pass: the shared index and every checker consume one history in one walk.

A checker is a :class:`Machine`. It says which records it reads by ``(op, type)``, or by
``(ROW, number)`` for a matched store row of one T-number (``(ROW, ANY_ROW)``: every matched
row), in two ways. ``STREAMS``: the pass keeps every record of the key in one list, shared by
every machine that names it, which the machine walks when it finishes (a tight loop, several
times cheaper in CPython than a call per record). ``HANDLERS``: the pass calls a method with each
record of the key as it reaches it, before adding the record to the index; the method sees what
the pass knows then through :class:`Live` (the segments open per process, the matched rows of
each run so far). What a case needs from later in the history (a tool call's completion, the
final rows) the machine keeps and judges in :meth:`Machine.finish`, which gets the finished
:class:`~checks.index.Index` (its rows, segments, tool invokes and each segment's
records are the pass's own lists too).

Most of the catalogue's machines judge in ``finish`` from streams and the index: a handler is a
bound-method call per record, several times dearer than reading the same few records back from the
index's lists (measured in benchmarks/PROFILE.md). A handler is for a case that needs what only the
pass knows at that record.

The index's bookkeeping is inline for the records it pairs or lists (segments, matched rows,
tool calls, landings, final rows, the records of each segment but a reaper's tick); a record is
routed by two lookups of keys whose hashes are cached. A checker written against the index
alone (a plain ``Checker``) still runs, after the pass, over the index it built: the compatible
fallback, so a new checker can be ported to a machine later.

A handler that raises stops only its own machine (its verdict is unknown, as a raising checker's
always was); a record the index cannot read makes every verdict unknown. Knows only the history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any, ClassVar

from checks.history import FINAL, INDEX, LANDING, OP, PROCESS, RUN, SEGMENT, STORE, TOOL, TYPE, VALUE, Op, OpType
from checks.index import Index, Span, _call_key, epoch_in

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
        segments = self.open_segments.get(op[PROCESS])
        return segments[-1] if segments else None

    def own_span(self, op: Op) -> Span | None:
        """The record's segment when it is of the segment's own run (the records ``Span.records`` lists)."""
        segments = self.open_segments.get(op[PROCESS])
        if not segments:
            return None
        span = segments[-1]
        return span if span.run == op[RUN] else None

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
    """Who reads what, for one sequence of machine classes; worked out once per sequence, down to the
    shape of the dispatch table (a pass only binds its machines' methods into it)."""

    def __init__(self, kinds: tuple[type[Machine], ...]) -> None:
        self.streams = tuple(
            (i, attribute, key) for i, kind in enumerate(kinds) for attribute, key in kind.STREAMS.items()
        )
        self.stream_keys = tuple(dict.fromkeys(key for _, _, key in self.streams))
        self.reacting = tuple(i for i, kind in enumerate(kinds) if kind.HANDLERS)
        self.handlers = tuple((key, i, name) for i, kind in enumerate(kinds) for key, name in kind.HANDLERS.items())
        slots: dict[Key, list[tuple[int, str]]] = {key: [(-1, "")] for key in self.stream_keys}
        for key, position, name in self.handlers:
            slots.setdefault(key, []).append((position, name))
        self.plan = tuple((key, _INDEXED.get(key, 0), tuple(found)) for key, found in slots.items())
        """Per key read by a machine: the index's code and who reads it, in dispatch order (a stream's
        append, position -1, first; then the handlers in machine order)."""
        base: dict[Any, dict[str, Route]] = {type_: {} for type_ in OpType}
        for (name, type_), code in _INDEXED.items():
            if (name, type_) not in slots:
                base[type_][name] = (code, None, _NO_HANDLERS)
        self.base = base
        """The routes no machine reads (the index's own), shared by every pass of this layout."""


@cache
def _layout(kinds: tuple[type[Machine], ...]) -> _Layout:
    return _Layout(kinds)


# What the index itself does with a record, by (op, type): the codes ``run_pass`` branches on.
_STORE_OK, _STORE_FAIL, _SEGMENT_INVOKE, _SEGMENT_DONE, _TOOL_INVOKE, _TOOL_DONE = range(1, 7)
_LANDING, _LANDED, _FINAL = range(7, 10)
_STATEMENTS = (_STORE_OK, _STORE_FAIL)
_INDEXED: dict[Key, int] = {
    (SEGMENT, _INVOKE): _SEGMENT_INVOKE,
    **{(SEGMENT, type_): _SEGMENT_DONE for type_ in OpType if type_ is not _INVOKE},
    (STORE, _OK): _STORE_OK,
    (STORE, OpType.FAIL): _STORE_FAIL,
    (TOOL, _INVOKE): _TOOL_INVOKE,
    **{(TOOL, type_): _TOOL_DONE for type_ in OpType if type_ is not _INVOKE},
    (LANDING, _INVOKE): _LANDING,
    **{(LANDING, type_): _LANDED for type_ in OpType if type_ is not _INVOKE},
    **{(FINAL, type_): _FINAL for type_ in OpType if type_ is not _INVOKE},
}
Route = tuple[int, list[Op] | None, tuple[Handler, ...]]
"""The index's code for a record, the stream it is appended to (None: no machine lists its kind) and
the handlers it is handed to (a stream is appended to directly: it is most of what machines read)."""
_NO_HANDLERS: tuple[Handler, ...] = ()
_UNROUTED: Route = (0, None, _NO_HANDLERS)
"""The route of a record neither the index nor any machine reads: nothing is done with it."""
_NOWHERE: dict[str, Route] = {}
_NUMBERS: dict[str, str] = {}
"""Transition name -> its T-number ('T7 finishRun' -> 'T7'), kept across passes: the world writes a
few dozen names, and splitting one per matched row cost a tenth of the pass."""


def _transition_number(transition: object) -> str:
    """The T-number of a store record's transition (``index.transition_number``), remembered."""
    if not isinstance(transition, str):
        return ""
    number = transition.strip().partition(" ")[0]
    if type(transition) is str and len(_NUMBERS) < 4096:
        _NUMBERS[transition] = number
    return number


class _Table:
    """The dispatch table of one pass: per type, then per op, the index's code and the handlers (a
    stream's append first), so that a record costs two lookups of keys whose hashes are cached
    (a key tuple per record cost half as much again) whoever reads it."""

    __slots__ = ("any_row", "by_number", "failed", "layout", "machines", "routes", "streams")
    streams: dict[Key, list[Op]]
    routes: dict[Any, dict[str, Route]]
    any_row: tuple[Handler, ...]
    by_number: dict[str, tuple[Handler, ...]]

    def __init__(self, machines: Sequence[Machine], live: Live) -> None:
        layout = self.layout = _layout(tuple(map(type, machines)))
        streams = self.streams = {key: [] for key in layout.stream_keys}
        """A stream is the pass's list of every record of its key, shared by the machines naming it."""
        for position, attribute, key in layout.streams:
            setattr(machines[position], attribute, streams[key])
        for position in layout.reacting:
            machines[position].live = live
        self.machines = machines
        self.failed: dict[int, Exception] = {}
        self.build()

    def build(self) -> None:
        streams, machines, failed = self.streams, self.machines, self.failed
        routes = self.routes = {type_: same.copy() for type_, same in self.layout.base.items()}
        any_row: tuple[Handler, ...] = ()
        by_number: dict[str, tuple[Handler, ...]] = {}
        for key, code, slots in self.layout.plan:
            stream = streams.get(key)
            bound: list[Handler] = []  # a loop, not a comprehension: one is a function call per key in 3.11
            for position, name in slots:
                if position < 0:
                    if key[0] == ROW:  # a matched-row stream is fed with the row handlers
                        bound.append(streams[key].append)
                elif position not in failed:
                    bound.append(getattr(machines[position], name))
            found = tuple(bound)
            if key[0] != ROW:
                routes.setdefault(key[1], {})[key[0]] = (code, stream, found)
            elif key[1] == ANY_ROW:
                any_row = found
            else:
                by_number[key[1]] = found
        self.any_row = any_row
        self.by_number = by_number

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
    listed_spans: list[Span] = []
    spans_by_process: dict[str, list[Span]] = {}
    open_segments: dict[str, list[Span]] = {}
    listing: dict[str, Span] = {}
    """Process -> its innermost open segment, when the pass lists that segment's records."""
    rows_by_run: dict[str, list[Op]] = {}
    tool_completions: dict[int, Op] = {}
    landing_of: dict[int, Op] = {}
    live = Live(open_segments, rows_by_run, tool_completions, landing_of, records)
    table = _Table(machines, live)
    rows: list[Op] = []
    refused: list[Op] = []
    tool_invokes: list[Op] = []
    numbers: dict[int, str] = {}
    rows_by_number: dict[str, list[Op]] = {}
    open_tools: dict[tuple[str, str], list[Op]] = {}
    open_calls: dict[tuple[str, Any, Any], list[Op]] = {}
    landed: set[tuple[str, Any]] = set()
    finals: dict[str, Op] = {}
    landings = 0
    routes, unrouted, nowhere, statement, number_of = table.routes, _UNROUTED, _NOWHERE, _STATEMENTS, _NUMBERS
    for op in records:
        code, stream, handlers = routes.get(op[TYPE], nowhere).get(op[OP], unrouted)
        if stream is not None:
            stream.append(op)
        if handlers:
            for handler in handlers:
                try:
                    handler(op)
                except Exception as error:
                    table.fail(handler, error)
                    routes = table.routes
        if code == 0:
            pass
        elif code == _STORE_OK:
            value = op[VALUE]
            if not value.get("matched"):
                refused.append(op)
            elif value.get("row") is not None:
                transition = value.get("transition")
                number = number_of.get(transition) if type(transition) is str else None
                if number is None:
                    number = _transition_number(transition)
                if table.any_row or number in table.by_number:
                    live.number = number
                    for handler in (*table.any_row, *table.by_number.get(number, ())):
                        try:
                            handler(op)
                        except Exception as error:
                            table.fail(handler, error)
                            routes = table.routes
                run = op[RUN]
                rows.append(op)
                numbers[op[INDEX]] = number
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
        elif code == _SEGMENT_INVOKE:
            process = op[PROCESS]
            segments = open_segments.get(process)
            span = Span(op, segments[-1] if segments else None, records, True)
            if segments is None:
                open_segments[process] = [span]
                spans_by_process[process] = [span]
            else:
                segments.append(span)
                spans_by_process[process].append(span)
            all_spans.append(span)
            if span._records is not None:
                listing[process] = span
                listed_spans.append(span)
            elif process in listing:
                del listing[process]
            continue  # a segment record is no segment's record
        elif code == _SEGMENT_DONE:
            process = op[PROCESS]
            segments = open_segments.get(process)
            if segments:
                span = segments.pop()
                span.end = op[INDEX]
                span.completion = op
                run_rows = rows_by_run.get(span.run)
                span.last_row = run_rows[-1] if run_rows else None
                if segments and segments[-1]._records is not None:
                    listing[process] = segments[-1]
                elif process in listing:
                    del listing[process]
            continue
        elif code == _TOOL_INVOKE:
            run, value = op[RUN], op[VALUE]
            tool_invokes.append(op)
            open_tools.setdefault((op[PROCESS], run), []).append(op)
            open_calls.setdefault((run, value.get("call"), value.get("identity")), []).append(op)
        elif code == _TOOL_DONE:
            stack = open_tools.get((op[PROCESS], op[RUN]))
            if stack:
                invoke = stack.pop()
                tool_completions[invoke[INDEX]] = op
                calls = open_calls.get(_call_key(invoke), [])
                for i, call in enumerate(calls):
                    if call is invoke:
                        del calls[i]
                        break
        elif code == _LANDED:
            landings += 1
            run, value = op[RUN], op[VALUE]
            landed.add((run, value.get("execution")))
            outstanding = open_calls.get((run, value.get("call"), value.get("identity")))
            if outstanding:
                landing_of.setdefault(outstanding[-1][0], op)
        elif code == _LANDING:
            landings += 1
        elif code == _FINAL:
            finals[op[RUN]] = op
        if listing:
            listed = listing.get(op[PROCESS])
            if listed is not None and listed.run == op[RUN]:
                listed._records.append(op)  # type: ignore[union-attr]  # a listed segment has its lists
                if code in statement:
                    listed._statements.append(op)  # type: ignore[union-attr]
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
        tool_invokes=tool_invokes,
        refused=refused,
        listed_spans=listed_spans,
    )
    if table.streams:  # the kinds the machines read are listed already (``Index.of_type`` reads them)
        index._lazy["streams"] = table.streams
    return index, table.failed


def index_of(history: Iterable[Op]) -> Index:
    """The index alone: the single pass with no checker fed (a stage that judged the history already
    holds the index the judging pass built: :attr:`checks.catalog.Judgement.index`)."""
    return run_pass(history)[0]


def as_index(history: Iterable[Op] | Index) -> Index:
    """``history`` itself when it is an index already, else :func:`index_of` it."""
    return history if isinstance(history, Index) else index_of(history)


__all__ = ["ANY_ROW", "ROW", "Handler", "Key", "Live", "Machine", "as_index", "index_of", "run_pass"]
