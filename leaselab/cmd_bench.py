"""``leaselab bench [--json]``: the world's speed next to raw simpy, measured in one process.

``leaselab bench --search [--json] [--seeds N] [--budget-s S] [--defect KB-n ...]``: for each known
defect, the median time to its first counterexample for the swarm explorer and for a hand-written
Hypothesis test (see :mod:`leaselab.bench_search`). Progress lines go to stderr.

``leaselab bench --sweep [--json] [--simulations N] [--memory-simulations M]``: sweep scaling with
1 and 2 local workers, a Dask LocalCluster against the local pool, and the coordinator's memory
over a long sweep (see :mod:`sim.sweep_bench`).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from leaselab.bench import STANDARD_WORKLOAD, world_bench
from leaselab.bench_search import DEFAULT_BUDGET_S, DEFAULT_SEEDS, search_bench, table
from model.errors import LeaselabError
from sim.sweep_bench import sweep_bench
from sim.sweep_bench import table as sweep_table


def bench(
    simulations: Annotated[int, typer.Option("--simulations", min=10, help="Simulations to time.")] = 2000,
    workload: Annotated[str, typer.Option("--workload", help="Scenario to time.")] = STANDARD_WORKLOAD,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    search: Annotated[
        bool, typer.Option("--search", help="Benchmark the search: time to each known defect, swarm vs Hypothesis.")
    ] = False,
    seeds: Annotated[
        int | None, typer.Option("--seeds", min=1, help=f"With --search: seeds per defect (default {DEFAULT_SEEDS}).")
    ] = None,
    budget_s: Annotated[
        float | None,
        typer.Option(
            "--budget-s", min=0.1, help=f"With --search: wall seconds per search (default {DEFAULT_BUDGET_S:g})."
        ),
    ] = None,
    defect: Annotated[
        list[str] | None, typer.Option("--defect", help="With --search: only this defect (KB-n), repeatable.")
    ] = None,
    sweep: Annotated[
        bool, typer.Option("--sweep", help="Benchmark sweeps: 1 vs 2 workers, Dask vs local pool, coordinator memory.")
    ] = False,
    memory_simulations: Annotated[
        int, typer.Option("--memory-simulations", min=10, help="With --sweep: simulations of the memory sweep.")
    ] = 200_000,
) -> None:
    """Simulations per second and simpy events per second, next to the raw simpy event rate;
    with --search, the time to each known defect's first counterexample, swarm vs plain Hypothesis."""
    if sweep:
        _sweep(json_out, simulations, memory_simulations)
        return
    if search:
        _search(json_out, DEFAULT_SEEDS if seeds is None else seeds, budget_s or DEFAULT_BUDGET_S, defect)
        return
    given = [name for name, value in (("--seeds", seeds), ("--budget-s", budget_s), ("--defect", defect)) if value]
    if given:
        raise LeaselabError(f"{given[0]} applies to the search benchmark only", field=given[0], hint="add --search")
    result = world_bench(workload, simulations).as_dict()
    if json_out:
        typer.echo(json.dumps(result, indent=2))
        return
    for key, value in result.items():
        typer.echo(f"{key:32s} {value}")


def _search(json_out: bool, seeds: int, budget_s: float, defects: list[str] | None) -> None:
    document = search_bench(defects, seeds, budget_s, progress=lambda line: typer.echo(line, err=True))
    if json_out:
        typer.echo(json.dumps(document, indent=2))
        return
    for line in table(document):
        typer.echo(line)


def _sweep(json_out: bool, simulations: int, memory_simulations: int) -> None:
    spt = max(1, min(250, simulations // 8))
    document = sweep_bench(
        simulations,
        memory_simulations,
        spt,
        memory_seeds_per_task=max(1, min(100, memory_simulations // 20)),
        progress=lambda line: typer.echo(line, err=True),
    )
    if json_out:
        typer.echo(json.dumps(document, indent=2))
        return
    for line in sweep_table(document):
        typer.echo(line)


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)
