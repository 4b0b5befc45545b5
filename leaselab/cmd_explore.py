"""``leaselab explore [SCENARIO]``: search for violations until the budget is spent.

Each distinct violation is shrunk (after the search) and written as a counterexample file under
--out (default ``out/explore``, apart from the report's directory). ``--workers N`` spreads one
swarm search over N processes (:mod:`sim.explore.parallel`). Progress (simulations, violations,
the budget left) goes to stderr. Exit 1 if any violation was found, 0 if none, 2 on bad input.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from leaselab.options import target_from_cli
from model.errors import LeaselabError
from scenarios.limits import MAX_BUDGET_S, MAX_SEED, MAX_SIMULATIONS, MAX_WORKERS
from scenarios.user_files import check_output_directory

if TYPE_CHECKING:
    from sim.explore.base import ExploreReport

DEFAULT_OUT = Path("out/explore")


def write_counterexamples(report: ExploreReport, out: Path) -> None:
    """One file per distinct violation, named by scenario, policy, invariant and signature, so a
    rerun that finds the same root cause overwrites its file instead of adding another."""
    from sim.explore.counterexample import write

    scenario = Path(report.target.scenario_ref).stem
    for i, violation in enumerate(report.violations, 1):
        tag = hashlib.blake2b("|".join(violation.signature).encode(), digest_size=3).hexdigest()
        name = f"{scenario}-{report.target.policy_name}-{violation.invariant}-{tag}.toml"
        path = write(violation.counterexample, out / name)
        report.violations[i - 1] = type(violation)(
            violation.invariant,
            violation.found_after_s,
            violation.simulations_until_found,
            violation.counterexample,
            violation.signature,
            path,
        )


def explore(
    scenario: Annotated[str, typer.Argument(help="A scenario file or library name.")] = "default",
    policy: Annotated[str, typer.Option("--policy", help="A preset.")] = "head",
    flag: Annotated[list[str] | None, typer.Option("--flag", help="NAME=VALUE, repeatable.")] = None,
    faults: Annotated[str, typer.Option("--faults", help="F1,F2 or all: the families profiles may draw.")] = "all",
    explorer: Annotated[str, typer.Option("--explorer", help="swarm or hypothesis.")] = "swarm",
    budget_s: Annotated[float, typer.Option("--budget-s", min=0.1, max=MAX_BUDGET_S, help="Wall-clock budget.")] = 30.0,
    simulations: Annotated[
        int | None,
        typer.Option(
            "--simulations", min=1, max=MAX_SIMULATIONS, help="Stop after this many simulations (deterministic)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="The explorer's seed.")] = 0,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            max=MAX_WORKERS,
            help="Spread one swarm search over N processes (first violation wins; deterministic with --simulations).",
        ),
    ] = 1,
    out: Annotated[Path, typer.Option("--out", help="Where counterexamples go.")] = DEFAULT_OUT,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Search SCENARIO (default: the mixed workload) for invariant violations."""
    check_output_directory(out)  # before the search: what it finds must have somewhere to go
    from reports.progress import meter
    from sim.explore.base import Budget
    from sim.explore.parallel import ParallelSwarmExplorer
    from sim.explore.registry import explorer_named

    target = target_from_cli(scenario, policy, flag or [], faults)
    search = explorer_named(explorer)
    if workers > 1:
        if explorer != "swarm":
            what = f"--workers applies to the swarm explorer, not {explorer}"
            raise LeaselabError(what, field="--workers", hint="add --explorer swarm")
        search = ParallelSwarmExplorer(workers)
    budget = Budget(seconds=budget_s, simulations=simulations, seed=seed)
    started = time.perf_counter()
    with meter("explore") as show:

        def searched(done: int, violations: int) -> None:
            left_s = max(0.0, budget_s - (time.perf_counter() - started))
            detail = f"{violations} violations"
            show("search", done, simulations, unit="simulations", detail=detail, eta_s=None if simulations else left_s)

        report = search.explore(target, budget, searched)
    write_counterexamples(report, out)
    if json_out:
        typer.echo(json.dumps(report.document(), indent=2))
    else:
        typer.echo(
            f"{report.explorer}: {report.simulations} simulations in {report.elapsed_s:.1f} s, "
            f"{len(report.violations)} distinct violations"
        )
        for v in report.violations:
            typer.echo(
                f"  {v.invariant}: after {v.found_after_s:.2f} s / {v.simulations_until_found} simulations, "
                f"{v.faults_in_minimal} faults in the minimal script -> {v.path}"
            )
    raise typer.Exit(1 if report.violations else 0)


def register(app: typer.Typer) -> None:
    app.command("explore")(explore)
