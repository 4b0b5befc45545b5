"""The spec's refusal of a call `invoke` must not run, judged from the world's tool server.

- ``invoked_tool_known_and_offered`` (spec 3.2 step 8: "`invoke` (unknown name ⇒ error result; not
  offered ⇒ error result; ...)"): the tool server executes a call only for a tool the calling
  process's loaded code has and the run was offered. Both sides are ground truth the world made: the
  server's own ``tool`` invoke record (its ``true_effect`` is ``unknown`` exactly when the process's
  loaded tools lack the name: a deploy renamed or removed it, or no scenario defines it) and the
  creator's ``plan`` of the run (its ``offered``, when the run was offered a subset of the scenario's
  tools; a plan without it offered every tool the scenario defines). The runtime's registry, its
  effect labels and its tool steps are never read.

A sweep of automatic mutants showed the gap: with the refusal's ``or`` turned into ``and``, a call of
a tool a deploy renamed away (still in the run's offered list) reached the tool server, and no
invariant said so. Pure checker over the shared index of one history; it knows only the history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from checks.fused import Key, Machine
from checks.history import PLAN, RUN, TOOL, VALUE, Op, OpType
from checks.index import Index
from checks.judgement import ADR_PROMISE, Finding, Tally, invariant
from checks.own import UNKNOWN_EFFECT
from checks.verdict import Kind


@invariant(
    "invoked_tool_known_and_offered",
    Kind.ALWAYS,
    "the tool server executes a call only for a tool the calling process has and the run was offered "
    "(spec 3.2 step 8: unknown name or not offered ⇒ error result, never run)",
    tags=(ADR_PROMISE,),
)
class InvokedToolKnownAndOffered(Machine):
    """Every ``tool`` invoke record of the world's tool server names a tool whose true effect (the
    process's loaded code) is not ``unknown`` and which the run's plan offered (its ``offered`` list,
    when it names a subset). A run with no plan (a history cut before its creator) is judged on the
    known-name half only."""

    __slots__ = ("invokes", "plans")
    STREAMS: ClassVar[Mapping[str, Key]] = {"plans": (PLAN, OpType.OK), "invokes": (TOOL, OpType.INVOKE)}
    plans: list[Op]
    invokes: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        offered = {op[RUN]: frozenset(op[VALUE]["offered"]) for op in self.plans if "offered" in op[VALUE]}
        for op in self.invokes:
            value = op[VALUE]
            tool = value.get("tool")
            subset = offered.get(op[RUN])
            if value.get("true_effect") == UNKNOWN_EFFECT:
                why = "a name the calling process's loaded code lacks (unknown name ⇒ error result)"
            elif subset is not None and tool not in subset:
                why = f"a tool run {op[RUN]!r} was not offered (offered {sorted(subset)}; not offered ⇒ error result)"
            else:
                tally.hold()
                continue
            tally.violate((op.index,), f"the tool server executed call {value.get('call')!r} ({tool}) at {op.index}: "
                          f"{why}; spec 3.2 step 8 refuses it", at=op.index)  # fmt: skip
        return tally.finding("tool calls executed")
