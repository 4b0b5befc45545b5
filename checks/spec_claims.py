"""Promises of the spec about the claims a worker or a resume makes and the calls a resume runs, that a
sweep of automatic mutants showed no invariant judged (with :mod:`checks.spec_rules`).

Each is judged from the store's answers and the world's records, never from the runtime's labels:

- ``claim_follows_precheck`` (spec 2 T3: "`runQueued()` after a pre-check (row exists, status queued,
  queued_request non-null — else return null, no write)"; spec 3.1: "runQueued order: findRun →
  pre-check → T3 claim"; T10 and spec 1.2: a resume reads the row and probes MAX+1 "before the claim
  (refuse if unreadable)"): a worker claims only a row its read found QUEUED with a stored request, and
  claims every such row; a resume claims only a row its read found waiting for its decision with a
  suspended state, and claims every such row unless its probe failed. What the read found is the
  store's answer (the status it returned) and the row the store held then, never the runtime's view.
- ``input_resume_runs_its_calls`` (spec 3.2: the approval scan precedes the input scan, so a turn
  waiting for input asks for no approval; "Resume: pending calls are processed first — denied /
  no-longer-offered / input-less calls are recorded as error tool steps ...; executed calls get
  onBeforeTool → invoke → tool step"): on a ``submit_input`` resume (the world's user always gives
  valid input), every pending call of a tool the process still has, and the run still offers, executes.
- ``approval_runs_as_decided`` (spec 3.2: "Resume: pending calls are processed first — denied /
  no-longer-offered / input-less calls are recorded as error tool steps **without** onBeforeTool;
  executed calls get onBeforeTool → invoke → tool step"; T10 and ADR-101: an approval claims the row and
  records its decision, and only a stale turn digest is handed back): judged against the approver's own
  decision, which the world records on the approve segment's invoke (never the runtime's approval step).

Pure checkers over the shared index of one history; they know only the history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from checks.fused import Key, Machine
from checks.history import EVENT, INDEX, OP, PLAN, PROVIDER, READ, RUN, STORE, TOOL, TYPE, VALUE, Op, OpType
from checks.index import Index, Span, row_of
from checks.judgement import ADR_PROMISE, Finding, Tally, invariant
from checks.own import UNKNOWN_EFFECT, spans_of_entries
from checks.verdict import Kind
from model.statements import CLAIM_FOR_RESUME, CLAIM_QUEUED, SUSPEND_RUN

# ---- claims and their pre-checks ------------------------------------------------------------------

_CLAIMANTS: Mapping[str, tuple[str, str, str]] = {
    "run_queued": (CLAIM_QUEUED, "queued", "has_request"),
    "approve": (CLAIM_FOR_RESUME, "waiting_for_approval", "has_state"),
    "submit_input": (CLAIM_FOR_RESUME, "waiting_for_input", "has_state"),
}
"""Entry -> the claim it issues, the status its pre-check must read and the payload the row must hold."""
_PROBES = frozenset({"MaxSequence", "CountEvents"})


@invariant(
    "claim_follows_precheck",
    Kind.ALWAYS,
    "a worker claims (T3) exactly the rows its read found QUEUED with a stored request; a resume claims (T10) "
    "exactly the rows its read found waiting for its decision with a state, unless its probe failed (spec 2, 3.1)",
    tags=(ADR_PROMISE,),
)
class ClaimFollowsPrecheck(Machine):
    """For each worker (``run_queued``) and resume (``approve``, ``submit_input``) segment: its claim (the
    first statement it issues) comes after its first read of the row, and that read found the row in the
    status its entry claims from (the status the store returned) while the store's row held the payload
    (a stored request; a suspended state); a worker whose read found that, or a resume whose read found
    that and whose position probe (MAX(sequence), or COUNT under KB-2) did not fail, issues the claim as
    its next statement. A segment that crashed or never completed is judged only on the claims it issued."""

    __slots__ = ()

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        for span in spans_of_entries(ix, frozenset(_CLAIMANTS)):
            _judge_claim(ix, tally, span)
        return tally.finding("claims and pre-checks")


def _judge_claim(ix: Index, tally: Tally, span: Span) -> None:
    claim_number, status, payload = _CLAIMANTS[span.entry]
    read: Op | None = None
    refused = False  # a resume's position probe failed: it refuses before the claim (spec 1.2)
    for op in span.records:
        name, type_ = op[OP], op[TYPE]
        if name == READ:
            what = op[VALUE].get("what")
            if read is None and what == "FindRun":
                read = op
            elif read is not None and what in _PROBES:
                refused = type_ is not OpType.OK
            continue
        if name != STORE or type_ is OpType.INVOKE or type_ is OpType.INFO:
            continue  # a statement is judged by its completion (ok or fail: the store answered it)
        issued = str(op[VALUE].get("transition", "")).partition(" ")[0]
        found = _found(ix, read, status, payload)
        if issued != claim_number:
            if found and not refused:
                _missed(tally, span, read, op, f"issued {op[VALUE].get('transition')!r} instead")
            return  # a statement after a refused pre-check: not this invariant's
        if found:
            _judge_after_claim(tally, span, op)
            return
        why = (
            "without reading the row first"
            if read is None
            else f"after its read at {read.index} found {_saw(ix, read)}"
        )
        tally.violate((*(() if read is None else (read.index,)), op.index),
                      f"the {span.entry} segment of run {span.run!r} issued {op[VALUE].get('transition')!r} at "
                      f"{op.index} {why}; it claims only a row {status} with {_PAYLOAD_WORDS[payload]}",
                      at=op.index)  # fmt: skip
        return
    completion = span.completion
    if completion is None or completion[TYPE] is not OpType.OK:
        return
    if _found(ix, read, status, payload) and not refused:
        _missed(tally, span, read, completion, "returned without a statement")
    elif read is not None:
        tally.hold()


def _judge_after_claim(tally: Tally, span: Span, claim: Op) -> None:
    """A claim that matched is followed, before the segment returns, by a statement or an audit step of the
    run (the position failure's settle, the decision or input step, the loop's steps): a segment that
    returned right after its claim left the row RUNNING under an owner that is gone."""
    completion = span.completion
    if claim[TYPE] is not OpType.OK or not claim[VALUE].get("matched"):
        tally.hold()
        return
    if completion is None or completion[TYPE] is not OpType.OK:
        tally.hold()  # a crash or a throw: not this invariant's
        return
    for op in span.records:
        if op[INDEX] <= claim[INDEX]:
            continue
        name, type_ = op[OP], op[TYPE]
        if (name == STORE and type_ is not OpType.INVOKE and type_ is not OpType.INFO) or (
            name == EVENT and type_ is OpType.INVOKE
        ):
            tally.hold()
            return
    tally.violate((claim.index, completion.index),
                  f"the {span.entry} segment of run {span.run!r} claimed it at {claim.index} and returned at "
                  f"{completion.index} without another statement or step; spec 3.1 goes on after the claim",
                  at=completion.index)  # fmt: skip


_PAYLOAD_WORDS = {"has_request": "a stored request", "has_state": "a suspended state"}


def _found(ix: Index, read: Op | None, status: str, payload: str) -> bool:
    """Whether ``read`` answered ``status`` while the store's row held the payload."""
    if read is None or read[TYPE] is not OpType.OK or read[VALUE].get("result") != status:
        return False
    row = ix.row_before(read[RUN], read[INDEX])
    return row is not None and bool(row_of(row).get(payload))


def _saw(ix: Index, read: Op) -> str:
    if read[TYPE] is not OpType.OK:
        return "nothing (it failed)"
    row = ix.row_before(read[RUN], read[INDEX])
    held = (
        ""
        if row is None
        else f" (request {bool(row_of(row).get('has_request'))}, state {bool(row_of(row).get('has_state'))})"
    )
    return f"{read[VALUE].get('result')!r}{held}"


def _missed(tally: Tally, span: Span, read: Op | None, at: Op, what: str) -> None:
    assert read is not None
    tally.violate((read.index, at.index),
                  f"the {span.entry} segment of run {span.run!r} read it claimable at {read.index} and {what} at "
                  f"{at.index}; spec 3.1 claims it next", at=at.index)  # fmt: skip


# ---- the input path --------------------------------------------------------------------------------


@invariant(
    "input_resume_runs_its_calls",
    Kind.ALWAYS,
    "a resume with the user's input executes every pending call of a tool the process has and the run offers "
    "(spec 3.2: a turn waiting for input asks for no approval)",
    tags=(ADR_PROMISE,),
)
class InputResumeRunsItsCalls(Machine):
    """On every ``submit_input`` segment, each ``tool`` event it records before its first provider call (a
    pending call's step) for a tool the process has (its true effect is not ``unknown``) and the run offers
    (the plan's ``offered``, when it names a subset) follows an invocation of that call in the segment.
    The world's user always submits valid input, and the approval scan ran before the input scan, so
    nothing refuses such a call."""

    __slots__ = ("plans",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"plans": (PLAN, OpType.OK)}
    plans: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        spans = spans_of_entries(ix, _INPUT_ENTRIES)
        if not spans:
            return tally.finding("pending calls resumed with input")
        offered = {op[RUN]: frozenset(op[VALUE]["offered"]) for op in self.plans if "offered" in op[VALUE]}
        for span in spans:
            invoked: set[object] = set()
            subset = offered.get(span.run)
            for op in span.records:
                name, type_, value = op[OP], op[TYPE], op[VALUE]
                if name == PROVIDER:
                    break
                if name == TOOL and type_ is OpType.INVOKE:
                    invoked.add(value.get("call"))
                    continue
                if name != EVENT or type_ is not OpType.INVOKE or value.get("kind") != "tool":
                    continue
                tool = value.get("tool")
                if value.get("true_effect") == UNKNOWN_EFFECT or (subset is not None and tool not in subset):
                    continue
                if value.get("call") in invoked:
                    tally.hold()
                    continue
                tally.violate((op.index,), f"the submit_input segment of run {span.run!r} recorded pending call "
                              f"{value.get('call')!r} ({tool}) at {op.index} without running it; with valid input "
                              "the spec runs it", at=op.index)  # fmt: skip
        return tally.finding("pending calls resumed with input")


_INPUT_ENTRIES = frozenset({"submit_input"})


# ---- the approval path -----------------------------------------------------------------------------


@invariant(
    "approval_runs_as_decided",
    Kind.ALWAYS,
    "an approval of the turn the row waits on is recorded, not released, and runs exactly the pending calls "
    "the approver approved, never a denied one (spec 3.2, T10, ADR-101)",
    tags=(ADR_PROMISE,),
)
class ApprovalRunsAsDecided(Machine):
    """On every ``approve`` segment, judged against the approver's decision as the world records it on the
    segment's invoke (``denied``, and ``stale`` for a decision on a turn the row no longer waited on; an
    approval of the current turn carries neither):

    - a decision on the current turn that claimed the row (T10 matched) records its approval step before it
      issues any T9: the spec releases only a stale approval, or a write turn whose approval step could not
      be stored (after trying to store it);
    - each pending call's ``tool`` step (recorded before the segment's first provider call) for a tool the
      process has and the run offers follows an invocation of that call when the approver approved, and
      none when the approver denied (a denied call is an error step without onBeforeTool or invoke)."""

    __slots__ = ("plans",)
    STREAMS: ClassVar[Mapping[str, Key]] = {"plans": (PLAN, OpType.OK)}
    plans: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        spans = spans_of_entries(ix, _APPROVE_ENTRIES)
        if not spans:
            return tally.finding("approvals")
        offered = {op[RUN]: frozenset(op[VALUE]["offered"]) for op in self.plans if "offered" in op[VALUE]}
        for span in spans:
            truth = span.invoke[VALUE]
            if truth.get("stale"):
                continue  # a stale decision: released or not, it is not the approver's word on this turn
            _judge_approval(tally, span, bool(truth.get("denied")), offered.get(span.run))
        return tally.finding("approvals")


def _judge_approval(tally: Tally, span: Span, denied: bool, subset: frozenset[str] | None) -> None:
    claimed = recorded = False
    invoked: set[object] = set()
    for op in span.records:
        name, type_, value = op[OP], op[TYPE], op[VALUE]
        if name == PROVIDER:
            return
        if name == STORE and (type_ is OpType.OK or type_ is OpType.FAIL):
            issued = str(value.get("transition", "")).partition(" ")[0]
            if issued == CLAIM_FOR_RESUME and type_ is OpType.OK and value.get("matched"):
                claimed = True
            elif issued == SUSPEND_RUN and claimed and not recorded:
                tally.violate((op.index,), f"the approve segment of run {span.run!r} claimed the turn its approver "
                              f"decided and released it at {op.index} before recording the decision; the spec "
                              "releases only a stale approval", at=op.index)  # fmt: skip
                return
            continue
        if name == TOOL and type_ is OpType.INVOKE:
            invoked.add(value.get("call"))
            if denied:
                tally.violate((op.index,), f"the approve segment of run {span.run!r} ran pending call "
                              f"{value.get('call')!r} at {op.index}, which its approver denied",
                              at=op.index)  # fmt: skip
                return
            continue
        if name != EVENT or type_ is not OpType.INVOKE:
            continue
        kind = value.get("kind")
        if kind == "approval":
            recorded = True
            continue
        if kind != "tool":
            continue
        tool = value.get("tool")
        if denied or value.get("true_effect") == UNKNOWN_EFFECT or (subset is not None and tool not in subset):
            tally.hold()
            continue
        if value.get("call") in invoked:
            tally.hold()
            continue
        tally.violate((op.index,), f"the approve segment of run {span.run!r} recorded pending call "
                      f"{value.get('call')!r} ({tool}) at {op.index} without running it; its approver approved "
                      "it", at=op.index)  # fmt: skip
        return
    if claimed and recorded:
        tally.hold()


_APPROVE_ENTRIES = frozenset({"approve"})


__all__: list[str] = []
