"""The reference runtime: a faithful sans-IO model of the agent runtime and its guarantees.

Rules of this package: standard library only. It never imports simpy, ``random``,
``time``, reads ``datetime.now`` or performs I/O. Every entry point is a generator
that yields frozen request objects (see :mod:`model.requests`) and receives their
results; whoever drives it decides time, latency and failure.
"""
