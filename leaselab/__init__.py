"""leaselab's public API: what notebooks and users call (``import leaselab``).

A thin face over the layers: it re-exports, it holds no logic. Everything not listed
in ``__all__`` is internal.
"""

from __future__ import annotations

from model.policy import PRESETS, Policy, preset, resolve_policy

__all__ = [
    "PRESETS",
    "Policy",
    "preset",
    "resolve_policy",
]
