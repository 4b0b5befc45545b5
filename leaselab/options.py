"""Option parsing shared by every CLI command: a policy name plus ``--flag NAME=VALUE`` overrides.

Any unknown policy or flag, or a bad flag value, is a :class:`model.errors.LeaselabError` naming the
valid choices; the CLI prints it as one line and exits 2. Knows nothing of typer. Imported by
every command at start-up, so the scenario loader and the explorers are imported only when a
command parses its words (see :mod:`leaselab.cli`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from model.errors import LeaselabError
from model.policy import Policy, parse_flag_assignment, preset

if TYPE_CHECKING:
    from sim.explore.base import Target


def policy_from_cli(policy: str, flags: Sequence[str]) -> Policy:
    """The preset ``policy`` (or its alias) with each ``NAME=VALUE`` of ``flags`` applied, in order.

    A later assignment of the same flag wins.
    """
    base = preset(policy)
    overrides = dict(parse_flag_assignment(text) for text in flags)
    return base.with_flags(**overrides) if overrides else base


def target_from_cli(scenario: str, policy: str, flags: Sequence[str], faults: str) -> Target:
    """An explorer target from the command line's words; bad input is a one-line LeaselabError."""
    from scenarios.loader import load_scenario
    from sim.explore.base import Target

    policy_from_cli(policy, flags)
    overrides = dict(parse_flag_assignment(f) for f in flags)
    load_scenario(scenario)
    return Target(scenario, policy, overrides, parse_families(faults))


def parse_families(text: str) -> tuple[str, ...]:
    """``--faults``: ``all`` or a comma-separated list of fault families."""
    from scenarios.families import FAMILIES

    if text.strip() == "all":
        return FAMILIES
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in FAMILIES]
    if unknown or not names:
        raise LeaselabError(
            f"unknown fault family '{unknown[0] if unknown else text}'",
            field="--faults",
            hint="valid: all, " + ", ".join(FAMILIES),
        )
    return names
