"""Sweeps: scenarios x policies x fault intensities x seeds, into Parquet shards that survive a kill.

``config`` reads a sweep configuration (TOML) and expands it into ``task``s; ``rows`` runs one
task (one cell, a block of seeds) and turns each simulation into a sweep row, with ``metrics``
for the liveness and cost columns; ``engine`` streams tasks through an executor (``executors``:
a local process pool or a Dask cluster) into shards (``shards``: their encoding, writing and the
checks a resume makes; ``ledger``: atomic writes and every finished shard's checksum);
``directory`` is the sweep directory's manifest, lock and loader; ``job`` joins them into
``leaselab sweep`` and keeps one counterexample per policy and mechanism; ``shrinking`` shrinks
them after the sweep when asked; ``toml_out`` writes TOML.

May import ``model``, ``checks``, ``register``, ``scenarios``, :mod:`sim.world` and :mod:`sim.explore`
(for counterexample files); never the review, the benchmarks or ``reports``.
"""
