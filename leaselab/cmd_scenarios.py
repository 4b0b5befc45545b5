"""``leaselab scenarios [--json]``: the named scenario library, one line each."""

from __future__ import annotations

import json
from typing import Annotated

import typer


def scenarios(json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List the scenario library: name, one-line description, path."""
    from scenarios.loader import library

    entries = library()
    if json_out:
        doc = [{"name": e.name, "description": e.description, "path": str(e.path)} for e in entries]
        typer.echo(json.dumps(doc, indent=2))
        return
    width = max(len(e.name) for e in entries)
    for e in entries:
        typer.echo(f"{e.name:<{width}}  {e.description}")
        typer.echo(f"{'':<{width}}  {e.path}")


def register(app: typer.Typer) -> None:
    app.command("scenarios")(scenarios)
