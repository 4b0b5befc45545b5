"""``leaselab bench [--json]``: the world's speed next to raw simpy, measured in one process: both
standard workloads (default, single_run), memory per simulation, the throughput targets as ratios and
the layer targets (world + judge against runtime + simpy; see :mod:`sim.bench.world`). ``--workload W``
times one workload only.

``leaselab bench --search [--json] [--seeds N] [--budget-s S] [--defect KB-n ...]``: for each known
defect, the median time to its first counterexample for the swarm explorer and for a hand-written
Hypothesis test (see :mod:`sim.bench.search`). Progress goes to stderr: a line per search with the
count and an ETA; for the world benchmark, per step (``reports.progress``).

``leaselab bench --search --findings [--json] [--seeds N] [--budget-s S] [--entry F-18 ...]
[--max-simulations M]``: for each registered finding and non-guarantee, from its counterexample's
scenario and from ``default``, the median simulations and seconds to its first meeting for the swarm
and the guided explorer (see :mod:`sim.bench.mechanisms`).

``leaselab bench --sweep [--json] [--simulations N] [--memory-simulations M]``: sweep scaling with
1 and 2 local workers, a Dask LocalCluster against the local pool, and the coordinator's memory
over a long sweep (see :mod:`sim.bench.sweep`).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from model.errors import LeaselabError
from scenarios.limits import MAX_BUDGET_S, MAX_SEEDS_PER_CELL, MAX_SIMULATIONS, MAX_WORKERS
from sim.bench.defaults import DEFAULT_BUDGET_S, DEFAULT_SEEDS, MEMORY_SIMULATIONS, PARALLEL_SIMULATIONS

WORLD_MEMORY_SIMULATIONS = MEMORY_SIMULATIONS
SWEEP_MEMORY_SIMULATIONS = 200_000


def bench(
    simulations: Annotated[
        int,
        typer.Option(
            "--simulations", min=10, max=MAX_SIMULATIONS, help="Simulations to time (single_run; default runs a tenth)."
        ),
    ] = 2000,
    workload: Annotated[
        str | None, typer.Option("--workload", help="Time only this scenario (default: both standard workloads).")
    ] = None,
    memory_simulations: Annotated[
        int | None,
        typer.Option(
            "--memory-simulations",
            min=10,
            max=MAX_SIMULATIONS,
            help=f"Simulations of the memory check (default {WORLD_MEMORY_SIMULATIONS:,}; "
            f"with --sweep, of the coordinator's memory sweep, default {SWEEP_MEMORY_SIMULATIONS:,}).",
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    search: Annotated[
        bool, typer.Option("--search", help="Benchmark the search: time to each known defect, swarm vs Hypothesis.")
    ] = False,
    seeds: Annotated[
        int | None,
        typer.Option(
            "--seeds", min=1, max=MAX_SEEDS_PER_CELL, help=f"With --search: seeds per defect (default {DEFAULT_SEEDS})."
        ),
    ] = None,
    budget_s: Annotated[
        float | None,
        typer.Option(
            "--budget-s",
            min=0.1,
            max=MAX_BUDGET_S,
            help=f"With --search: wall seconds per search (default {DEFAULT_BUDGET_S:g}).",
        ),
    ] = None,
    defect: Annotated[
        list[str] | None, typer.Option("--defect", help="With --search: only this defect (KB-n), repeatable.")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers", min=1, max=MAX_WORKERS, help="With --search: processes of the parallel swarm (default 2)."
        ),
    ] = None,
    parallel_simulations: Annotated[
        int | None,
        typer.Option(
            "--parallel-simulations",
            min=10,
            max=MAX_SIMULATIONS,
            help="With --search: simulations of the parallel-swarm timing.",
        ),
    ] = None,
    sweep: Annotated[
        bool, typer.Option("--sweep", help="Benchmark sweeps: 1 vs 2 workers, Dask vs local pool, coordinator memory.")
    ] = False,
    findings: Annotated[
        bool,
        typer.Option(
            "--findings",
            help="With --search: per registered finding and non-guarantee, simulations and seconds to its first "
            "meeting, swarm vs guided.",
        ),
    ] = False,
    entry: Annotated[
        list[str] | None, typer.Option("--entry", help="With --search --findings: only this entry (F-18), repeatable.")
    ] = None,
    origin: Annotated[
        list[str] | None,
        typer.Option("--origin", help="With --search --findings: own or default (default: both), repeatable."),
    ] = None,
    max_simulations: Annotated[
        int | None,
        typer.Option(
            "--max-simulations",
            min=1,
            max=MAX_SIMULATIONS,
            help="With --search --findings: simulations after which a search counts as not finding it "
            "(default 20,000).",
        ),
    ] = None,
) -> None:
    """Simulations per second and simpy events per second, next to the raw simpy event rate;
    with --search, the time to each known defect's first counterexample, swarm vs plain Hypothesis;
    with --sweep, sweep scaling, Dask overhead and the coordinator's memory."""
    if sweep:
        _sweep(json_out, simulations, memory_simulations or SWEEP_MEMORY_SIMULATIONS)
        return
    if search and findings:
        _findings(
            json_out,
            DEFAULT_SEEDS if seeds is None else seeds,
            budget_s or 600.0,
            entry or [],
            max_simulations or 20_000,
            origin or ["own", "default"],
        )
        return
    if findings or entry or max_simulations or origin:
        name = "--findings" if findings else "--entry" if entry else "--origin" if origin else "--max-simulations"
        raise LeaselabError(f"{name} applies to the search benchmark only", field=name, hint="add --search --findings")
    if search:
        _search(
            json_out,
            DEFAULT_SEEDS if seeds is None else seeds,
            budget_s or DEFAULT_BUDGET_S,
            defect,
            workers or 2,
            parallel_simulations or PARALLEL_SIMULATIONS,
        )
        return
    options = (
        ("--seeds", seeds),
        ("--budget-s", budget_s),
        ("--defect", defect),
        ("--workers", workers),
        ("--parallel-simulations", parallel_simulations),
    )
    given = [name for name, value in options if value]
    if given:
        raise LeaselabError(f"{given[0]} applies to the search benchmark only", field=given[0], hint="add --search")
    from reports.progress import meter
    from sim.bench.world import targets_bench, world_bench

    if workload:
        result = world_bench(workload, simulations).as_dict()
    else:
        with meter("bench") as show:

            def step(name: str, done: int, total: int) -> None:
                show(name, done, total, unit="simulations")

            result = targets_bench(simulations, memory_simulations or WORLD_MEMORY_SIMULATIONS, step)
    if json_out:
        typer.echo(json.dumps(result, indent=2))
        return
    _print(result)


def _print(result: dict[str, object], prefix: str = "") -> None:
    for key, value in result.items():
        if isinstance(value, dict):
            _print(value, f"{prefix}{key}.")
        else:
            typer.echo(f"{prefix + key:56s} {value}")


def _search(
    json_out: bool, seeds: int, budget_s: float, defects: list[str] | None, workers: int, parallel_simulations: int
) -> None:
    from reports.progress import meter
    from sim.bench.search import planned_searches, search_bench, table

    total = planned_searches(defects, seeds) + 1  # and the parallel timing, reported last
    with meter("bench --search", every_s=0.0) as show:
        done = [0]

        def say(line: str) -> None:
            done[0] = min(done[0] + 1, total)
            show("", done[0], total, unit="searches", detail=line)

        document = search_bench(
            defects, seeds, budget_s, say, workers=workers, parallel_simulations=parallel_simulations
        )
    if json_out:
        typer.echo(json.dumps(document, indent=2))
        return
    for line in table(document):
        typer.echo(line)


def _findings(
    json_out: bool, seeds: int, budget_s: float, only: list[str], max_simulations: int, origins: list[str]
) -> None:
    from reports.progress import meter
    from sim.bench.mechanisms import bench as mechanism_bench
    from sim.bench.mechanisms import entries, table

    known = {e.id for e in entries()}
    unknown = [e for e in only if e not in known]
    if unknown:
        raise LeaselabError(f"unknown register entry '{unknown[0]}'", field="--entry", hint="e.g. F-18, NG-identity")
    bad = [o for o in origins if o not in ("own", "default")]
    if bad:
        raise LeaselabError(f"unknown origin '{bad[0]}'", field="--origin", hint="valid: own, default")
    with meter("bench --search --findings", every_s=0.0) as show:
        done = [0]

        def say(line: str) -> None:
            done[0] += 1
            show("", done[0], None, unit="searches", detail=line)

        document = mechanism_bench(
            seeds=seeds, max_simulations=max_simulations, budget_s=budget_s, only=only, origins=origins, progress=say
        )
    if json_out:
        typer.echo(json.dumps(document, indent=2))
        return
    typer.echo(table(document))


def _sweep(json_out: bool, simulations: int, memory_simulations: int) -> None:
    from sim.bench.sweep import sweep_bench
    from sim.bench.sweep import table as sweep_table

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
