"""Promises of the spec that automatic mutants of the runtime showed no invariant judged.

Each is judged from what the store, the bus and the segments physically did, against the spec's own
numbers written here (never the runtime's constants: a runtime whose ``LEASE_S`` drifted would carry
the drift into any check that imported it):

- ``lease_is_the_specs`` (spec 1.3 ``LEASE_SECONDS`` = 900; spec 2 T1, T3, T4, T5, T10:
  "lease_expires=now+900"): every matched claim, renewal or fence statement that leaves a lease on the
  row leaves exactly the issuing process's clock reading (``clock_s``, the world's record of what the
  process read) plus 900 s. (A proposal's deadline extension, the chaos phase's ``deadline_s`` > 0, is
  judged by ``lease_within_bound`` instead.)
- ``requeue_backoff_per_spec`` (spec 1.3 "Requeue backoff": "delay_ms = min(30 000 x 2^c, 600 000),
  where c is the requeue_count read before the requeue added one ... When the reaper re-dispatches a run
  it attaches no delay"): the wake-up dispatched after an owner requeue (T11, the run's latest row)
  carries that delay; one dispatched after the reaper's requeue (T13) or an insert (T2) carries none.
- ``entry_points_throw_as_specified`` (spec 3.1, T2, T3, T10, 5.1, and C4 of spec 9): a worker's
  ``run_queued`` segment, an interactive run and a reaper tick throw nothing ("A lost claim or a store
  error also returns null"; "After the claim it does not throw for an outcome"), except C4, a store error
  right after the segment's own matched claim (T1, T3 or T10); ``approve`` / ``submit_input`` throw only
  ``RunAlreadyResumingException`` (T10), ``enqueue`` only ``RunEnqueueFailedException`` (T2), ``cancel``
  nothing. A segment's failure is the world's record of the exception that escaped it.
- ``event_sequence_without_gap`` (spec 1.2: "A successful insert uses the current value and then
  increments it; a failed insert leaves it alone, so the numbers have no gaps"; the counter starts at 0
  or at MAX(sequence)+1): no event the store took has a sequence more than one past the highest the
  run's stream held just before it (a collision, a zombie's repeat, is ``unique_event_sequence``'s).

Functions of the index, run after the single pass; they know only the history.
"""

from __future__ import annotations

from collections.abc import Mapping

from checks.history import DISPATCH, EVENT, IDLE, INDEX, PHASE, READ, RUN, TYPE, VALUE, Op, OpType
from checks.index import Index, Span, row_of
from checks.judgement import ADR_PROMISE, Finding, Tally, invariant
from checks.own import matched, number
from checks.verdict import Kind
from model.statements import CLAIMS, MARK_PENDING_EFFECT, RENEW_LEASE, REQUEUE

SPEC_LEASE_S = 900
"""Spec 1.3, ``LEASE_SECONDS``."""
SPEC_BACKOFF_MS = 30_000
SPEC_BACKOFF_CAP_MS = 600_000
"""Spec 1.3, ``REQUEUE_BACKOFF_MS`` and ``REQUEUE_BACKOFF_CAP_MS``."""
_RENEWALS = frozenset({RENEW_LEASE, MARK_PENDING_EFFECT})
"""Spec 2: renewLease and markPendingEffect, which push the lease out like a claim."""
_LEASING = CLAIMS | _RENEWALS
_OWNER_REQUEUE = REQUEUE
"""Spec 2: the owner's requeue, after which recovery dispatches with backoff (spec 5.2)."""

THROWS: Mapping[str, frozenset[str]] = {
    "run_queued": frozenset(),
    "run_interactive": frozenset(),
    "reap": frozenset(),
    "cancel": frozenset(),
    "approve": frozenset({"RunAlreadyResumingException"}),
    "submit_input": frozenset({"RunAlreadyResumingException"}),
    "enqueue": frozenset({"RunEnqueueFailedException"}),
}
"""Entry point -> the exceptions the spec lets escape it (beyond C4)."""


def spec_backoff_ms(count_before: int) -> int:
    """Spec 1.3: min(30 000 x 2^c, 600 000)."""
    return int(min(SPEC_BACKOFF_MS * 2**count_before, SPEC_BACKOFF_CAP_MS))


def _deadline_declared(ix: Index) -> bool:
    return any(
        op[VALUE].get("phase") == "chaos" and (op[VALUE].get("deadline_s") or 0) > 0
        for op in ix.of_type(PHASE, OpType.INFO)
    )


@invariant(
    "lease_is_the_specs",
    Kind.ALWAYS,
    "every claim, renewal or fence statement that leaves a lease leaves its clock reading plus the spec's "
    "900 s (spec 1.3, 2)",
    tags=(ADR_PROMISE,),
)
def lease_is_the_specs(ix: Index) -> Finding:
    """Every lease a claim, renewal or fence statement leaves is its clock reading plus 900 s."""
    tally = Tally()
    if _deadline_declared(ix):
        tally.unknown((), "the deployed code declares an operation deadline: lease_within_bound judges its leases")
        return tally.finding("leases set")
    for transition in sorted(_LEASING):
        for op in ix.rows_of(transition):
            clock = op[VALUE].get("clock_s")
            lease = row_of(op).get("lease_expires")
            if not isinstance(clock, (int, float)) or not isinstance(lease, (int, float)) or lease == 0:
                continue
            if lease == clock + SPEC_LEASE_S:
                tally.hold()
                continue
            tally.violate(
                (op[INDEX],),
                f"{op.value.get('transition')!r} at {op.index} left run {op.run!r} a lease "
                f"{_seconds(lease - clock)} past the issuing process's clock ({clock}); "
                f"the spec's lease is {SPEC_LEASE_S} s",
                at=op[INDEX],
            )
    return tally.finding("leases set")


def _seconds(value: float) -> str:
    """A lease length for a message; a mutant's absurd one (an integer of thousands of digits, which
    ``str`` refuses and a float cannot hold) is described by its size."""
    if isinstance(value, int) and value.bit_length() > 64:
        return f"a {value.bit_length()}-bit number of seconds"
    return f"of {value:g} s" if isinstance(value, float) else f"of {value} s"


@invariant(
    "requeue_backoff_per_spec",
    Kind.ALWAYS,
    "a wake-up after an owner requeue carries min(30 s x 2^c, 600 s); after a reaper requeue or an insert "
    "none (spec 1.3)",
    tags=(ADR_PROMISE,),
)
def requeue_backoff_per_spec(ix: Index) -> Finding:
    """A wake-up after an owner requeue carries the spec's backoff; one after a reaper requeue or an
    insert carries none."""
    tally = Tally()
    for invoke in ix.of_type(DISPATCH, OpType.INVOKE):
        row = ix.row_before(invoke.run, invoke.index)
        delay = invoke.value.get("delay_ms")
        if row is None or not isinstance(delay, (int, float)) or row.process != invoke.process:
            continue  # not right after a statement of the dispatching process on the run
        if number(row) == _OWNER_REQUEUE:
            counts = _counts_read(ix, row)
            if not counts:
                continue
            allowed = sorted({spec_backoff_ms(count) for count in counts})
        else:
            allowed = [0]
        if delay in allowed:
            tally.hold()
            continue
        tally.violate(
            (row.index, invoke.index),
            f"the wake-up of run {invoke.run!r} dispatched at {invoke.index} after {row.value.get('transition')!r} at "
            f"{row.index} carries a delay of {delay} ms; the spec's is {' or '.join(map(str, allowed))} ms",
            at=invoke.index,
        )
    return tally.finding("dispatches")


_REREAD = "recovery.reread"


def _counts_read(ix: Index, requeue: Op) -> set[int]:
    """The counts the backoff of an owner requeue may rest on: the c of spec 1.3's backoff is the count the
    recovery's re-read *read*, which is the row as it stood at that read (ground truth: the row the store
    held, not what the decider says it read); a requeue that stalls in the store lands later, after other
    requeues moved the count (the row at the read and every row up to the requeue count). Without a
    re-read in the record, the count the requeue itself incremented."""
    after = row_of(requeue).get("requeue_count")
    counts = {after - 1} if isinstance(after, int) and after >= 1 else set()
    reread = next(
        (
            op
            for op in reversed(ix.of_type(READ, OpType.OK))
            if op.index < requeue.index
            and op.process == requeue.process
            and op.run == requeue.run
            and op.value.get("site") == _REREAD
        ),
        None,
    )
    if reread is None:
        return counts
    held = [ix.row_before(requeue.run, reread.index)] + [
        op for op in ix.rows if op.run == requeue.run and reread.index < op.index < requeue.index
    ]
    counts |= {c for op in held if op is not None and isinstance(c := row_of(op).get("requeue_count"), int)}
    return counts


@invariant(
    "entry_points_throw_as_specified",
    Kind.ALWAYS,
    "no segment lets escape an exception the spec does not let escape its entry point (spec 3.1, T2, T3, T10, C4)",
    tags=(ADR_PROMISE,),
)
def entry_points_throw_as_specified(ix: Index) -> Finding:
    """No segment lets an exception escape that the spec does not let escape its entry point (C4 aside)."""
    tally = Tally()
    for span in ix.spans:
        done = span.completion
        allowed = THROWS.get(span.entry)
        if done is None or allowed is None:
            continue
        if done[TYPE] is not OpType.FAIL:
            tally.hold()
            continue
        error = str(done[VALUE].get("error", ""))
        if error in allowed or _c4(span):
            tally.hold()
            continue
        tally.violate(
            (span.key, done[INDEX]),
            f"the {span.entry} segment of run {span.run!r} threw {error} at {done[INDEX]}; the spec lets "
            f"{', '.join(sorted(allowed)) or 'nothing'} escape it",
            at=done[INDEX],
        )
    for _tick in ix.of_type(IDLE, OpType.OK):  # a folded reaper tick: a reap segment that returned
        tally.hold()
    return tally.finding("segments")


@invariant(
    "event_sequence_without_gap",
    Kind.ALWAYS,
    "no stored event's sequence skips past one more than the highest its run's stream held (spec 1.2)",
    tags=(ADR_PROMISE,),
)
def event_sequence_without_gap(ix: Index) -> Finding:
    """No stored event's sequence skips past one more than the highest its run's stream held before it."""
    tally = Tally()
    highest: dict[str, int] = {}
    for op in ix.of_type(EVENT, OpType.OK):
        seq = op[VALUE].get("seq")
        if not isinstance(seq, int):
            continue
        before = highest.get(op[RUN], -1)
        if seq <= before + 1:
            tally.hold()
        else:
            tally.violate(
                (op[INDEX],),
                f"run {op.run!r}'s event at {op.index} has sequence {seq}, but its stream held sequences up to "
                f"{before}: a gap the spec's counter cannot leave",
                at=op[INDEX],
            )
        highest[op[RUN]] = max(before, seq)
    return tally.finding("stored events")


def _c4(span: Span) -> bool:
    """Spec 9 C4: a store error right after the segment's own matched claim escapes."""
    statements = span.statements
    if len(statements) < 2:
        return False
    claim, failed = statements[-2], statements[-1]
    claimed = matched(claim) and number(claim) in CLAIMS
    return claimed and failed[TYPE] is OpType.FAIL and _next_request(span, claim, failed)


def _next_request(span: Span, claim: Op, failed: Op) -> bool:
    """No completed request of the segment lies between its claim and the failed statement."""
    between = [op for op in span.records if claim[INDEX] < op[INDEX] < failed[INDEX] and op[TYPE] is not OpType.INVOKE]
    return not between


__all__ = [
    "SPEC_BACKOFF_CAP_MS",
    "SPEC_BACKOFF_MS",
    "SPEC_LEASE_S",
    "THROWS",
    "entry_points_throw_as_specified",
    "event_sequence_without_gap",
    "lease_is_the_specs",
    "requeue_backoff_per_spec",
    "spec_backoff_ms",
]
