"""The simulated world: it interprets the runtime's requests with time, latency and faults.

May import ``model`` and ``scenarios`` (and simpy). Nothing here is random except
through the one ``random.Random`` a simulation owns.
"""
