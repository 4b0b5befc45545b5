"""``leaselab run SCENARIO``: one simulation, its verdicts, optionally its timeline.

The first line says how many invariants failed, how many of those the register explains (a
registered finding, ``known: F-06``, or a recorded non-guarantee, ``non-guarantee: NG-identity``),
and the exit code: 0 when every invariant holds, 1 on a violation (with ``--known-ok``, only on
one the register does not explain), 2 on bad input. ``--intensity``, ``--latency-ratio``,
``--transport``, ``--fault-ranges`` and ``--collation`` are the other keys of a sweep row, so any row
replays.
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
    intensity: Annotated[
        float, typer.Option("--intensity", min=0.0, max=100.0, help="Fault probabilities x this (a sweep row's).")
    ] = 1.0,
    latency_ratio: Annotated[
        float,
        typer.Option("--latency-ratio", min=0.0, max=100.0, help="Tool latency / lease (0 = as written)."),
    ] = 0.0,
    transport: Annotated[str, typer.Option("--transport", help="sync or async ('' = as the scenario says).")] = "",
    fault_ranges: Annotated[str, typer.Option("--fault-ranges", help="library (as written) or deployment.")] = "",
    collation: Annotated[
        str,
        typer.Option("--collation", help="The store's identity collation: binary or unicode_ci ('' = as written)."),
    ] = "",
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    timeline: Annotated[bool, typer.Option("--timeline", help="Print one line per event.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="With --timeline: every record.")] = False,
    known_ok: Annotated[
        bool,
        typer.Option("--known-ok", help="Exit 0 when every violation is a registered finding or non-guarantee."),
    ] = False,
) -> None:
    """Run one simulation of SCENARIO and judge its history."""
    from leaselab.results import exit_code, explained_by, headline, result_document, verdict_lines
    from reports.timeline import render
    from scenarios.overrides import cell_overrides
    from sim.world.simulate import simulate

    flags = flag or []
    resolved = policy_from_cli(policy, flags)
    overrides = dict(parse_flag_assignment(f) for f in flags)
    cell_overrides(intensity, latency_ratio, transport, fault_ranges, collation, cli=True)
    result = simulate(
        scenario,
        resolved,
        seed,
        intensity=intensity,
        latency_ratio=latency_ratio,
        transport=transport,
        fault_ranges=fault_ranges,
        collation=collation,
    )
    why = explained_by(result)
    if json_out:
        doc = result_document(result, policy_name=policy, flags=overrides, why=why)
        if timeline:
            doc["timeline"] = render(result.history, verbose=verbose)
        typer.echo(json.dumps(doc, indent=2))
    else:
        typer.echo(headline(policy, result, why, known_ok=known_ok))
        if timeline:
            for line in render(result.history, verbose=verbose):
                typer.echo(line)
        for line in verdict_lines(result, why):
            typer.echo(line)
        if result.violations:
            cell = [
                *(["--intensity", f"{intensity:g}"] if intensity != 1.0 else []),
                *(["--latency-ratio", f"{latency_ratio:g}"] if latency_ratio else []),
                *(["--transport", transport] if transport else []),
                *(["--fault-ranges", fault_ranges] if fault_ranges else []),
                *(["--collation", collation] if collation else []),
            ]
            typer.echo(
                f"reproduce with: leaselab run {scenario} --policy {policy} --seed {seed}"
                + "".join(f" --flag {f}" for f in flags)
                + "".join(f" {word}" for word in cell)
            )
    raise typer.Exit(exit_code(why, known_ok=known_ok))


def register(app: typer.Typer) -> None:
    app.command("run")(run)
