"""``leaselab policies [--json]``: the presets and the flags, one line each.

Text: every preset (oldest first) with its one-line doc and the flags where it differs from head,
then every flag with its head default and its doc. JSON, exactly::

    {"presets": {name: {flag: value}}, "flags": {name: {"doc": str, "default": value}}}

where ``presets`` holds every preset and every alias (``head``) with all its flags.
"""

from __future__ import annotations

import json
import textwrap
from typing import Annotated, Any

import typer

from model.policy import FLAG_DOCS, FLAG_NAMES, HEAD, PRESET_ALIASES, PRESET_DOCS, PRESETS, Policy, preset

_INDENT = "  "


def policies_document() -> dict[str, Any]:
    """The ``--json`` document: every preset and alias with all its flags, every flag with doc and default."""
    names = [*PRESETS, *PRESET_ALIASES]
    head = HEAD.as_dict()
    return {
        "presets": {name: preset(name).as_dict() for name in names},
        "flags": {flag: {"doc": FLAG_DOCS[flag], "default": head[flag]} for flag in FLAG_NAMES},
    }


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def _aliases_of(name: str) -> list[str]:
    return [alias for alias, target in PRESET_ALIASES.items() if target == name]


def _differences_from_head(policy: Policy) -> str:
    diff = HEAD.differences(policy)
    if not diff:
        return "(this is head)"
    return "differs from head: " + ", ".join(f"{flag}={_on_off(mine)}" for flag, (_, mine) in diff.items())


def policies_text() -> str:
    """The text listing, one preset or flag per entry, doc lines unwrapped."""
    labels = {name: " = ".join([name, *_aliases_of(name)]) for name in PRESETS}
    width = max(len(label) for label in labels.values())
    lines = ["Presets, oldest first:"]
    for name, policy in PRESETS.items():
        lines.append(f"{_INDENT}{labels[name]:<{width}}  {PRESET_DOCS[name]}")
        pad = _INDENT + " " * (width + 2)
        lines.extend(textwrap.wrap(_differences_from_head(policy), 100, initial_indent=pad, subsequent_indent=pad))
    flag_width = max(len(flag) for flag in FLAG_NAMES)
    head = HEAD.as_dict()
    lines += ["", "Flags (head default, then meaning):"]
    lines += [f"{_INDENT}{flag:<{flag_width}}  {_on_off(head[flag]):<3}  {FLAG_DOCS[flag]}" for flag in FLAG_NAMES]
    return "\n".join(lines)


def policies(
    json_output: Annotated[bool, typer.Option("--json", help="Print the presets and flags as JSON.")] = False,
) -> None:
    """List the policy presets and flags, one line each."""
    if json_output:
        typer.echo(json.dumps(policies_document(), indent=2))
    else:
        typer.echo(policies_text())


def register(app: typer.Typer) -> None:
    """Add the ``policies`` command to ``app``."""
    app.command("policies")(policies)
