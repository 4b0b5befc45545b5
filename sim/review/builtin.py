"""The built-in ADR review: the sweep configuration ``leaselab report`` runs without a CONFIG.

It is a TOML file shipped beside this module (``sim/review/adr-review.toml``), read through
:mod:`importlib.resources` so that it is found in an installed package too.
"""

from __future__ import annotations

from importlib import resources

from sim.sweep.config import SweepConfig, loads_config

BUILTIN_REVIEW = "adr-review.toml"


def builtin_review() -> SweepConfig:
    """The ADR review ``leaselab report`` runs without a CONFIG (``sim/review/adr-review.toml``)."""
    text = resources.files("sim.review").joinpath(BUILTIN_REVIEW).read_text(encoding="utf-8")
    return loads_config(text, source=f"sim/review/{BUILTIN_REVIEW}")
