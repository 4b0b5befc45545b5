"""``leaselab run SCENARIO``: one simulation, its verdicts, optionally its timeline.

Exit 0 when every invariant holds, 1 on a violation, 2 on bad input.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from leaselab.options import policy_from_cli
from model.policy import parse_flag_assignment
from scenarios.limits import MAX_SEED


def run(
    scenario: Annotated[str, typer.Argument(help="A scenario file (.toml) or a library name.")],
    policy: Annotated[str, typer.Option("--policy", help="A preset: adr-104 ... adr-141, head.")] = "head",
    flag: Annotated[list[str] | None, typer.Option("--flag", help="NAME=VALUE, repeatable.")] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="The simulation's seed.")] = 0,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    timeline: Annotated[bool, typer.Option("--timeline", help="Print one line per event.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="With --timeline: every record.")] = False,
) -> None:
    """Run one simulation of SCENARIO and judge its history."""
    from leaselab.results import result_document, verdict_lines
    from reports.timeline import render
    from sim.world.simulate import simulate

    flags = flag or []
    resolved = policy_from_cli(policy, flags)
    overrides = dict(parse_flag_assignment(f) for f in flags)
    result = simulate(scenario, resolved, seed)
    if json_out:
        doc = result_document(result, policy_name=policy, flags=overrides)
        if timeline:
            doc["timeline"] = render(result.history, verbose=verbose)
        typer.echo(json.dumps(doc, indent=2))
    else:
        if timeline:
            for line in render(result.history, verbose=verbose):
                typer.echo(line)
        for line in verdict_lines(result):
            typer.echo(line)
        if result.violations:
            typer.echo(
                f"reproduce with: leaselab run {scenario} --policy {policy} --seed {seed}"
                + "".join(f" --flag {f}" for f in flags)
            )
    raise typer.Exit(1 if result.violations else 0)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
