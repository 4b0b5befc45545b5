"""``leaselab verify SCENARIO --bound K``: the exhaustive explorer.

Says "no violation up to bound K", or prints each violated invariant with its
smallest schedule and writes it as a counterexample file under --out (default
``out/verify``, apart from the report's directory). Progress per level (schedules run
of the level's total, rate, ETA) goes to stderr. Exit 1 on a violation, 0 when none,
2 on bad input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from leaselab.options import target_from_cli
from scenarios.limits import MAX_SEED, MAX_SIMULATIONS
from scenarios.user_files import check_output_directory

DEFAULT_OUT = Path("out/verify")


def verify(
    scenario: Annotated[str, typer.Argument(help="A small scenario file or library name.")],
    policy: Annotated[str, typer.Option("--policy", help="A preset.")] = "head",
    bound: Annotated[int, typer.Option("--bound", min=0, max=4, help="Faults (and tie reversals) per schedule.")] = 1,
    flag: Annotated[list[str] | None, typer.Option("--flag", help="NAME=VALUE, repeatable.")] = None,
    faults: Annotated[str, typer.Option("--faults", help="F1,F2 or all.")] = "all",
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="The world's seed (latencies).")] = 0,
    max_schedules: Annotated[
        int | None, typer.Option("--max-schedules", min=1, max=MAX_SIMULATIONS, help="Stop after this many.")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Where counterexamples go.")] = DEFAULT_OUT,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Enumerate every placement of up to K faults over every request boundary of SCENARIO."""
    check_output_directory(out)  # before the search: what it finds must have somewhere to go
    from reports.progress import meter
    from sim.explore.counterexample import write
    from sim.explore.exhaustive import ExhaustiveExplorer

    target = target_from_cli(scenario, policy, flag or [], faults)
    with meter("verify") as show:

        def level_done(level: int, levels: int, done: int, total: int) -> None:
            if level:  # level 0 is the one fault-free run
                show(f"level {level}/{levels}", done, total, unit="schedules")

        report = ExhaustiveExplorer(seed=seed, max_schedules=max_schedules).verify(target, bound, level_done)
    paths = {name: write(cx, out / f"verify-{policy}-{name}.toml") for name, cx in report.violations}
    if json_out:
        doc = report.document()
        for entry in doc["violations"]:
            entry["counterexample"] = str(paths[entry["invariant"]])
        typer.echo(json.dumps(doc, indent=2))
    else:
        typer.echo(f"{report.schedules} schedules in {report.elapsed_s:.1f} s: {report.sentence()}")
        for name, cx in report.violations:
            ties = f" + reversed ties {list(cx.ties)}" if cx.ties else ""
            typer.echo(f"  {name}: {[f.text() for f in cx.faults]}{ties} -> {paths[name]}")
    raise typer.Exit(1 if report.violations else 0)


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
