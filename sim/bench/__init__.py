"""Benchmark machinery behind ``leaselab bench`` and the scripts of ``benchmarks/``.

``world`` measures simulations per second against raw simpy and memory per simulation;
``layers`` attributes a simulation's time to the runtime, the world, simpy and the judge;
``search`` compares the explorers on the known defects; ``sweep`` measures sweep scaling and
the Dask overhead; ``stats`` holds the small statistics they share.

May import every other stage of ``sim`` (it measures them); nothing imports it but the face.
"""
