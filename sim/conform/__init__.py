"""Conformance: the runtime's real PHP code beside the model, statement by statement and decider by decider.

``leaselab conform --runtime-src PATH`` loads the unmodified PHP classes of a checkout of the runtime
through a small TYPO3 database layer of our own on Doctrine DBAL (``php/``), on SQLite, or on a MariaDB
or PostgreSQL server it starts on a unix socket in a temporary directory (``engines``), with the tables
of the checkout's ``ext_tables.sql`` (``ddl``). Each check (``checks``) draws cases with Hypothesis and
compares what PHP and the model did (return value, affected rows, every column after); ``runner``
shrinks and explains divergences (``known_divergences.toml``), ``replay`` replays registered findings
on the real code (``reproductions.toml``), and ``report`` prints or writes JSON.

May import ``model``, ``checks``, ``scenarios`` and :mod:`sim.world` (the simulated store and the sync
driver the model side runs on); the project never contains the runtime's GPL code, only its path.
"""
