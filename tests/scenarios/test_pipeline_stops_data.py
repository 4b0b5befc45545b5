"""tests/data/pipeline_stops.toml: the pipeline stops and the round cap no library scenario scripts.

A head sweep, it was measured, on it kills automatic mutants of the loop's pipeline (the guardrail,
budget and context arms) that the library's sweep misses; here: it runs clean at head and each run ends
through its scripted stage."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from sim.world.simulate import simulate

DATA = Path(__file__).resolve().parents[1] / "data" / "pipeline_stops.toml"


def test_each_run_ends_through_its_scripted_stage_at_head() -> None:
    result = simulate(DATA, "head", 1)
    assert result.violations == []
    ends = Counter((op.value["row"]["status"], op.value["row"]["termination_reason"]) for op in result.history
                   if op.op == "final")  # fmt: skip
    assert ends == {
        ("failed", "policy_denied"): 2,
        ("failed", "approval_denied"): 2,
        ("completed", "context_truncated"): 2,
        ("completed", "budget_exhausted"): 2,
        ("completed", "max_iterations"): 2,
    }
