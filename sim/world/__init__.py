"""The world: a simpy simulation of workers, clients, approvers, the reaper, the bus and the stores.

A scenario (:mod:`scenarios`) and a policy go in; the world plans the runs (``workload``),
starts the processes (``processes``), and the interpreter (``interpreter``) answers every
request the reference runtime yields with the handlers of ``rows``, ``bus``, ``tools``,
``provider`` and ``clocks``, while the fault plan (``faults``) decides what breaks and the
recorder (``recorder``) writes the history; ``simulate`` runs one simulation and judges it.
``kernel`` is simpy with tie control, ``store`` the in-memory database, ``sync_driver`` the
simpy-free driver of the unit tests.

May import ``model``, ``checks``, ``scenarios`` and simpy; never the register, the explorers, sweeps, the review, the
benchmarks or ``reports``.
"""
