"""History record types: one flat, append-only, Jepsen-style history per simulation.

Every record has an index, the simulated (true) time, the process, the operation, the
run (uuid, '' when none), a value mapping and a type: ``invoke`` / ``ok`` / ``fail`` /
``info`` (info = outcome unknown, e.g. the caller crashed mid-call). Faults are recorded
by the process ``nemesis``; ground-truth side effects by the process ``world``.
The simulator writes records; the invariant checkers (:mod:`checks`) read them.

Operation vocabulary (``op`` -> what ``value`` holds). Every request the runtime yields
becomes an ``invoke`` record when issued and a completion when answered:

``segment``  one entry-point call. invoke {entry, identity}; ok {outcome}; fail {error};
             info {crashed} when its process died. A user's cancel is a segment of process
             ``user`` (entry ``cancel``, outcome true/false).
``store``    a guarded UPDATE or INSERT (T1-T11, T13, T14). invoke {transition, site,
             identity, actor, clock_s}; ok {transition, site, identity, actor, clock_s, matched,
             changed, row} where ``row`` is the full after-state (see :func:`row_value`) when
             matched, else None; fail {transition, site, identity, actor, clock_s, error}.
             ``clock_s`` is what the issuing process's clock showed at its latest clock read.
``read``     FindRun / MaxSequence / CountEvents / SelectStale. invoke {what, site};
             ok {what, site, result}; fail {what, site, error}.
``event``    an audit insert (T6). invoke/ok/fail {seq, kind, round, tool, call, execution,
             effect (as the runtime resolved it), true_effect (the world's ground truth for
             that tool name: an effect value, 'unknown' for a name no tool has, '' for a
             non-tool step), identity}; fail adds {error}.
``provider`` invoke {round, synthesis}; ok {tokens}; fail {error, failure_class (spec 4's classifier under
             the policy's KB-13 flag: the runtime's label, judged against true_class by
             failure_classified_per_spec; a code mutant that patches only the recovery's
             classifier does not change it), true_class (the class of the failure the fault plan
             injected: the ground truth the invariants read)}.
``tool``     invoke {call, tool, effect, true_effect, identity, key, remote}; ok {execution, landed,
             replayed}; fail {error}; info {crashed}.
``landing``  process ``world``, type ok: a side effect actually landed in the external
             ledger. {call, tool, effect (true), execution, identity}.
``dispatch`` invoke {delay_ms, site}; ok {}; fail {error}.
``deliver``  process of the receiving worker, type ok: a wake-up reached a worker
             {duplicate}.
``emit``     the live observer. invoke/ok/fail {round, kind}.
``decide``   type ok: a decider states what it read and chose {decider, pending_effect,
             requeue_count, has_request, decision} (reaper per row, recovery).
``account``  type ok, process of the reaper: what the reaper counted a row as once it acted on
             it {account: requeued | dead_lettered | skipped, reason} (the per-row parts of
             the counts it prints; the runtime's claim, judged against the rows).
``idle``     type ok, process of the reaper: a reaper tick that found nothing, as one record
             {identity, invoked_s}. It stands for the tick's three records: its ``segment`` invoke
             {entry: reap, identity} at ``invoked_s``, its SelectStale ``read`` ok that returned no
             row and its ``segment`` ok with the zero outcome {exit_code 0, requeued 0,
             dead_lettered 0, skipped 0}, both at ``time_s``. A tick is folded only when no other
             record fell between those three; any other tick is recorded in full.
``fault``    process ``nemesis``, type info: {family, kind, target, detail} when an injected
             fault takes effect.
``crash`` / ``restart``  process ``nemesis``, type info: {process, identity}.
``phase``    process ``nemesis``, type info: {phase} ('chaos' at 0, 'quiet' when healed); the 'chaos'
             record also carries {epoch_s, lease_s, deadline_s}: ``epoch_s`` is the true wall
             clock's reading (unix seconds) at time 0; ``lease_s`` and ``deadline_s`` are the lease
             and the longest operation deadline the deployed code declares (0 = none).
             Record times are seconds since the epoch; a process's clock reads
             ``epoch_s + floor(time_s + its offset)``, so row columns written from a clock
             (``lease_expires``, ``started_at``, ``finished_at``) and a statement's ``clock_s`` are
             unix seconds, and ``value - epoch_s`` puts them on the records' time axis (:func:`epoch_of`).
``final``    process ``world``, type ok, one per run at the end: {row}.
``plan``     process ``world``, type ok, one per run when its client starts: the workload's
             ground truth {kind, stops, stop_kinds} where ``stops`` lists the rounds the
             scenario's script ends through the pipeline (budget, guardrail, context) rather
             than normally and ``stop_kinds`` how each ends (a ``TurnOutcome`` value); for a run
             whose loop a cap or the pipeline ends, also {cap (the request's explicit round cap,
             null for none), calls (how many tool calls each scripted turn asks for), tools (how
             many offered tools the scenario defines)} (a run that sets neither keeps the record it
             always had, so recorded histories replay to their digests); for a run offered a subset
             of the scenario's tools, {offered} (their names).

Ground truth the world adds beside the runtime's account (never derived from the runtime's
registry, resolver or classifier): ``true_effect`` is the scenario's definition of the tool
code the process loaded; ``true_class`` is the class of the failure the fault plan injected;
store records carry ``actor`` (the kind of process that issued the statement); reads that
return rows carry the rows' physical fences (``fence`` for FindRun, ``fences`` for
SelectStale); landings carry the ``process`` and its ``own_identity``.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, Final, NamedTuple

from model.records import RunRow


class OpType(StrEnum):
    INVOKE = "invoke"
    OK = "ok"
    FAIL = "fail"
    INFO = "info"


class Op(NamedTuple):
    """One history record. A NamedTuple rather than a frozen dataclass: the recorder builds
    hundreds per simulation and tuple construction is several times cheaper."""

    index: int  # type: ignore[assignment]  # shadows tuple.index on purpose: the Jepsen name
    time_s: float
    process: str
    op: str
    run: str
    type: OpType
    value: Mapping[str, Any]

    def get(self, key: str, default: Any = None) -> Any:
        return self.value.get(key, default)


# A record's fields by position, for the judging pass and its checkers' loops over every record
# (``op[RUN]`` is a tuple read; ``op.run`` a descriptor call per record). Elsewhere a record is read
# by name.
INDEX: Final = 0
TIME_S: Final = 1
PROCESS: Final = 2
OP: Final = 3
RUN: Final = 4
TYPE: Final = 5
VALUE: Final = 6


_TYPE_TEXT = {t: t.value for t in OpType}

# Operation names, so checkers and recorder cannot drift apart.
SEGMENT = "segment"
STORE = "store"
READ = "read"
EVENT = "event"
PROVIDER = "provider"
TOOL = "tool"
LANDING = "landing"
DISPATCH = "dispatch"
DELIVER = "deliver"
EMIT = "emit"
DECIDE = "decide"
ACCOUNT = "account"
IDLE = "idle"
FAULT = "fault"
CRASH = "crash"
RESTART = "restart"
PHASE = "phase"
FINAL = "final"
PLAN = "plan"

NEMESIS = "nemesis"
WORLD = "world"


def epoch_of(history: Iterable[Op]) -> int:
    """The true clock's reading at time 0 that the history's 'chaos' phase record states; 0 when it
    states none (a hand-built history whose row times are on the records' own axis)."""
    for op in history:
        if op.op == PHASE and op.get("phase") == "chaos":
            return int(op.get("epoch_s") or 0)
    return 0


IDLE_OUTCOME: Mapping[str, int] = {"exit_code": 0, "requeued": 0, "dead_lettered": 0, "skipped": 0}
"""The outcome of a reaper tick that found nothing: the only one an ``idle`` record stands for."""


def unfolded(history: Iterable[Op]) -> list[Op]:
    """The history with every ``idle`` record written out as the three records it stands for (its
    segment invoke, its empty SelectStale read, its zero-outcome completion), renumbered: the history
    as it was recorded before idle ticks were folded. Nothing is lost by folding; this shows it."""
    out: list[Op] = []
    for op in history:
        if op.op != IDLE:
            out.append(op._replace(index=len(out)) if op.index != len(out) else op)
            continue
        process, answered_s, value = op.process, op.time_s, op.value
        invoke = {"entry": "reap", "identity": value["identity"]}
        read = {"what": "SelectStale", "site": "", "result": [], "fences": []}
        done = {"outcome": dict(IDLE_OUTCOME)}
        at = len(out)
        out.append(Op(at, value["invoked_s"], process, SEGMENT, "", OpType.INVOKE, invoke))
        out.append(Op(at + 1, answered_s, process, READ, "", OpType.OK, read))
        out.append(Op(at + 2, answered_s, process, SEGMENT, "", OpType.OK, done))
    return out


def row_value(row: RunRow) -> dict[str, Any]:
    """The after-state of a row as a history value: every column a checker may judge.

    ``_value_`` rather than ``.value``: the same string, without the enum property (a row
    value is built for every store update of every simulation)."""
    return {
        "uid": row.uid,
        "status": row.status._value_,
        "claimed_by": row.claimed_by,
        "lease_expires": row.lease_expires,
        "requeue_count": row.requeue_count,
        "pending_effect": row.pending_effect,
        "has_request": row.queued_request is not None,
        "has_state": row.suspended_state is not None,
        "termination_reason": row.termination_reason._value_,
        "error_class": row.error_class,
        "iterations": row.iterations,
        "total_tokens": row.total_tokens,
        "finished_at": row.finished_at,
        "started_at": row.started_at,
    }


def op_line(op: Op) -> str:
    """A canonical one-line text of a record; the digest hashes these lines.

    ``repr`` of the value is canonical because the recorder builds every value with
    the same key order (dict order is insertion order, independent of PYTHONHASHSEED)
    and values hold only str, int, float, bool, None, lists and dicts.
    """
    return f"{op.index}|{op.time_s!r}|{op.process}|{op.op}|{op.run}|{op.type}|{op.value!r}"


def digest(history: Iterable[Op]) -> str:
    """A stable digest of a history: identical in any process, any PYTHONHASHSEED.

    Hashes a ``marshal`` (format 2: no object references, so only values matter) of
    every record as plain tuples; dict order is insertion order, which the recorder
    keeps identical run to run. A value marshal cannot encode falls back to
    :func:`op_line` text, which is slower but equally canonical.
    """
    rows = [(op[0], op[1], op[2], op[3], op[4], _TYPE_TEXT[op[5]], op[6]) for op in history]
    try:
        data = marshal.dumps(rows, 2)
    except ValueError:
        data = "\n".join(map(op_line, history)).encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()
