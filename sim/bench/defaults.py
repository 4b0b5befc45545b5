"""The benchmarks' default sizes, apart from their machinery: ``leaselab bench --help`` shows them
without importing the world (the CLI's start-up must stay cheap). Knows numbers only."""

from __future__ import annotations

DEFAULT_SEEDS = 5
"""Seeds per known defect in the search benchmark."""
DEFAULT_BUDGET_S = 30.0
"""Wall seconds per search in the search benchmark."""
PARALLEL_SIMULATIONS = 400
"""Simulations of the parallel-swarm timing."""
MEMORY_SIMULATIONS = 100_000
"""The memory target: memory per simulation flat over 100,000 simulations in one process."""
