"""The simulator's stages, one subpackage each, in the order a simulation's evidence flows.

- :mod:`sim.world`: the simpy world that interprets the runtime's requests under faults and
  records one history per simulation; ``sim.world.simulate.simulate`` is the single entry.
- :mod:`sim.explore`: the explorers (swarm, Hypothesis, exhaustive), shrinking, mutants and
  counterexample files.
- :mod:`sim.sweep`: sweeps (configuration, tasks, rows, the sweep directory, the engine,
  executors, Dask).
- :mod:`sim.review`: the built-in ADR review's orchestration (a sweep plus its evidence jobs).
- :mod:`sim.bench`: the benchmark machinery behind ``leaselab bench``.

Imports go one way, down this list: each stage may import ``model``, ``checks``, ``register``, ``scenarios``
and the stages above it, never those below (``tests/test_layers.py`` enforces it); nothing in ``sim``
imports ``reports`` or ``leaselab``. Nothing here is random except through the one
``random.Random`` a simulation owns.
"""
