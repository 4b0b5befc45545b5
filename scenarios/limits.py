"""The documented range of every count a user can write outside a scenario's own fields.

Seeds, request indexes, worker counts, budgets: the CLI options (``min=``/``max=``), the sweep
configuration and the counterexample file all take their bounds from here, so the same number
is refused alike wherever it is written (the README's input contract table quotes them). A
bound is generous (far past any useful value) but finite: an unbounded worker count forks
without end, an infinite budget never ends, a seed past 2**63 is no TOML integer.
Knows no schema and no command.
"""

from __future__ import annotations

MAX_SEED = 2**63 - 1
"""A seed is a TOML integer (64-bit signed) and not negative; explorers draw 32-bit seeds."""
MAX_REQUEST_INDEX = 1_000_000_000
"""The largest global request index a fault may name; a simulation issues thousands."""
MAX_SEEDS_PER_CELL = 100_000_000
"""Seeds per cell of a sweep (``seeds``, ``--seeds``): 10^8 simulations per cell and policy."""
MAX_SIMULATIONS = 1_000_000_000
"""``--simulations`` of an explorer, a bench or the mutants."""
MAX_WORKERS = 256
"""Local processes (``--workers``): each is a Python interpreter; past a few per core it only costs memory."""
MAX_BUDGET_S = 7 * 86_400.0
"""A wall-clock budget (``--budget-s``) of at most a week; an infinite one would never end."""
