"""``leaselab bench [--json]``: the world's speed next to raw simpy, measured in one process."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from leaselab.bench import STANDARD_WORKLOAD, world_bench


def bench(
    simulations: Annotated[int, typer.Option("--simulations", min=10, help="Simulations to time.")] = 2000,
    workload: Annotated[str, typer.Option("--workload", help="Scenario to time.")] = STANDARD_WORKLOAD,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Simulations per second and simpy events per second, next to the raw simpy event rate."""
    result = world_bench(workload, simulations).as_dict()
    if json_out:
        typer.echo(json.dumps(result, indent=2))
        return
    for key, value in result.items():
        typer.echo(f"{key:32s} {value}")


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)
