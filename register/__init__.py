"""The register: what the project knows about the runtime, and how a violation is explained by it.

Findings (violations of ``head`` that contradict an ADR promise), recorded non-guarantees, the
claims the ADRs make (:mod:`register.claims`), the historic defects a policy can switch back on
(:mod:`register.known_defects`), the recognisers that say whether a violation happened the way
an entry's write-up describes, and the one API the other stages ask: :func:`explain` (which
entries explain a violation) and :func:`unexplained` (the violations none does). Each entry's
counterexample and write-up live in ``register/entries/``; whether it was reproduced on the runtime's
real PHP, in :mod:`register.real_code`.

May import :mod:`model` and :mod:`checks` only: it is pure, and reads histories and the judge's
index, never the world, a sweep or a report.
"""

from __future__ import annotations

from register.explain import explain, unexplained

__all__ = ["explain", "unexplained"]
