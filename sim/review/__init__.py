"""The built-in ADR review: a sweep plus the evidence a reviewer needs, as plain data for ``reports``.

``builtin`` holds the review's configuration (``adr-review.toml``); ``review`` runs the sweep and
plans and gathers the evidence; ``jobs`` are the evidence jobs it sends to the executor
(shrinking a counterexample, recognising registered findings, exhaustive verification).

May import ``model``, ``checks``, ``register``, ``scenarios``, :mod:`sim.world`, :mod:`sim.explore` and
:mod:`sim.sweep`; never the benchmarks or ``reports`` (``leaselab report`` joins the review and the rendering).
"""
