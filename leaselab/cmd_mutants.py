"""``leaselab mutants``: flip each policy flag of head and check the search kills every mutant.

A mutant is killed when a swarm batch on one of its targets shows a violation head does not
have (see :mod:`sim.explore.mutants`); a mutant no search can tell from head is listed as
equivalent with its reason. Prints the mutation score, killed / (total - equivalent), and the
survivors. JSON, exactly::

    {"score": float, "killed": [{"flag", "invariant", "simulations", "scenario", "faults"}],
     "equivalent": [{"flag", "reason"}], "survivors": [flag]}

Exit 0 when no mutant survives, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from model.errors import LeaselabError
from model.policy import FLAG_NAMES
from sim.explore.mutants import MutationReport, run_mutants


def _flags(only: list[str] | None) -> tuple[str, ...]:
    if not only:
        return FLAG_NAMES
    unknown = [name for name in only if name not in FLAG_NAMES]
    if unknown:
        raise LeaselabError(f"unknown flag '{unknown[0]}'", field="--only", hint="valid: " + ", ".join(FLAG_NAMES))
    return tuple(dict.fromkeys(only))


def report_lines(report: MutationReport) -> list[str]:
    judged = len(report.killed) + len(report.survivors)
    lines = [
        f"mutation score {report.score:.2f}: {len(report.killed)} killed of {judged} "
        f"({len(report.equivalent)} equivalent), {report.simulations} simulations in {report.elapsed_s:.1f} s"
    ]
    for kill in report.killed:
        lines.append(
            f"  killed     {kill.flag}: {kill.invariant} after {kill.simulations} simulations "
            f"on {kill.target.describe()}"
        )
    for flag, reason in report.equivalent:
        lines.append(f"  equivalent {flag}: {reason}")
    for flag in report.survivors:
        lines.append(f"  SURVIVED   {flag}")
    return lines


def mutants(
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    budget_s: Annotated[float, typer.Option("--budget-s", min=0.1, help="Wall-clock budget per mutant.")] = 60.0,
    simulations: Annotated[int, typer.Option("--simulations", min=1, help="Simulations per target.")] = 300,
    seed: Annotated[int, typer.Option("--seed", min=0, help="The swarm's seed.")] = 0,
    only: Annotated[list[str] | None, typer.Option("--only", help="Mutate only this flag (repeatable).")] = None,
) -> None:
    """Flip each flag of head, one at a time; every mutant must be killed or listed as equivalent."""
    flags = _flags(only)
    if sys.stderr.isatty() and not json_out:
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), transient=True) as bar:
            task = bar.add_task("mutants", total=None)

            def show(flag: str, what: str) -> None:
                bar.update(task, description=f"{flag}: {what}")

            report = run_mutants(simulations, seed, budget_s=budget_s, flags=flags, progress=show)
    else:
        report = run_mutants(simulations, seed, budget_s=budget_s, flags=flags)
    if json_out:
        typer.echo(json.dumps(report.document(), indent=2))
    else:
        for line in report_lines(report):
            typer.echo(line)
    raise typer.Exit(1 if report.survivors else 0)


def register(app: typer.Typer) -> None:
    app.command("mutants")(mutants)
