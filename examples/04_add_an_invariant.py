"""Add an invariant: one registration where its checker is defined, and every judge runs it.

    python examples/04_add_an_invariant.py

A checker is a machine the single judging pass feeds: it names the records it reads (here every
invoke of a tool) and concludes in ``finish`` from what it saw. This toy one says no run invokes more
than four tools; real ones judge a promise of the runtime from the world's ground truth.
"""

from checks import Finding, Index, Kind, judge
from checks.fused import Machine
from checks.history import TOOL, Op, OpType
from checks.judgement import Tally, invariant
from scenarios.loader import load_scenario
from sim.world.simulate import simulate


@invariant("at_most_four_tool_calls", Kind.ALWAYS, "no run invokes more than four tools (an example)")
class AtMostFourToolCalls(Machine):
    __slots__ = ("invokes",)
    STREAMS = {"invokes": (TOOL, OpType.INVOKE)}
    invokes: list[Op]

    def finish(self, ix: Index) -> Finding:
        tally = Tally()
        per_run: dict[str, list[int]] = {}
        for op in self.invokes:
            per_run.setdefault(op.run, []).append(op.index)
        for run, calls in sorted(per_run.items()):
            if len(calls) > 4:
                tally.violate(calls[4:], f"run {run} invoked {len(calls)} tools")
            else:
                tally.hold()
        return tally.finding("runs")


result = simulate(load_scenario("default"), "head", seed=3, judge=False)
verdict = judge(result.history).verdicts["at_most_four_tool_calls"]
print(f"at_most_four_tool_calls: {verdict.valid.name.lower()} ({verdict.explanation})")
