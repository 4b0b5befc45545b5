"""Search: swarm, Hypothesis and exhaustive explorers behind one interface, shrinking, counterexamples.

``base`` defines targets, budgets and violations; ``swarm``, ``hypo`` and ``exhaustive`` search
(``parallel`` spreads the swarm over processes, ``registry`` names them); ``shrink`` minimises a
fault script; ``counterexample`` reads and writes the replay files; ``mutants`` and
``code_mutants`` score the invariants by killing flag and code mutants of ``head``.

May import ``model``, ``checks``, ``register``, ``scenarios`` and :mod:`sim.world`; never sweeps, the review, the
benchmarks or ``reports``.
"""
