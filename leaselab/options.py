"""Option parsing shared by every CLI command: a policy name plus ``--flag NAME=VALUE`` overrides.

Any unknown policy or flag, or a bad flag value, is a :class:`model.errors.LeaselabError` naming the
valid choices; the CLI prints it as one line and exits 2. Knows nothing of typer.
"""

from __future__ import annotations

from collections.abc import Sequence

from model.policy import Policy, parse_flag_assignment, preset


def policy_from_cli(policy: str, flags: Sequence[str]) -> Policy:
    """The preset ``policy`` (or its alias) with each ``NAME=VALUE`` of ``flags`` applied, in order.

    A later assignment of the same flag wins.
    """
    base = preset(policy)
    overrides = dict(parse_flag_assignment(text) for text in flags)
    return base.with_flags(**overrides) if overrides else base
