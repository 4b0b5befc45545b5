"""The library scenario pipeline_stops: the pipeline stops and the round caps no other scenario scripts.

A head sweep on it kills automatic mutants of the loop's pipeline (the guardrail, budget and context
arms) and of its round count (the default 5, an explicit cap, the ceiling of 20) that the rest of the
library's sweep misses; here: it runs clean at head and each run ends through its scripted stage."""

from __future__ import annotations

from collections import Counter

from scenarios.loader import load_scenario
from sim.world.simulate import simulate


def test_each_run_ends_through_its_scripted_stage_at_head() -> None:
    result = simulate(load_scenario("pipeline_stops"), "head", 1)
    assert result.violations == []
    ends = Counter((op.value["row"]["status"], op.value["row"]["termination_reason"]) for op in result.history
                   if op.op == "final")  # fmt: skip
    assert ends == {
        ("failed", "policy_denied"): 2,
        ("failed", "approval_denied"): 2,
        ("completed", "context_truncated"): 3,
        ("completed", "budget_exhausted"): 3,
        ("completed", "max_iterations"): 4,
        ("completed", "completed"): 1,
        ("failed", "not_retryable"): 1,
    }, "with no tool offered a budget denial is a failure (spec C2); a context overflow still truncates"
    rounds = sorted(op.value["row"]["iterations"] for op in result.history
                    if op.op == "final" and op.value["row"]["termination_reason"] == "max_iterations")  # fmt: skip
    assert rounds == [2, 2, 5, 20], "an explicit cap, the default 5, and a cap of 25 clamped to the ceiling of 20"
