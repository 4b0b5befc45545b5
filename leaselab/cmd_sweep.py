"""``leaselab sweep CONFIG --out DIR``: run or resume a sweep configuration into a directory.

The face only: parse options, show progress (:mod:`reports.progress`: a bar on a terminal, plain
lines otherwise; the verification of a resumed directory's shards first), print the summary. The
machinery is :mod:`sim.sweep.job`. Running it again on the same DIR resumes; a DIR holding a report
or another configuration is refused (exit 2). Exit 1 when an invariant failed in some simulation of
the configuration's last policy (or of ``--policy LABEL``), like every other command's violation;
``--exit-zero`` keeps 0 for pipelines that only collect data.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scenarios.limits import MAX_WORKERS

if TYPE_CHECKING:
    from reports.progress import Meter
    from sim.sweep.engine import SweepProgress


def shown(show: Meter) -> Any:
    """A sweep's progress callback drawing on ``show``: shards checked, then simulations run."""

    def on_progress(progress: SweepProgress) -> None:
        if progress.phase == "checking":
            show("checking", progress.checked, progress.to_check, unit="shards")
            return
        detail = f"{progress.done:,}/{progress.total:,} shards"
        if progress.violations:
            detail += f", {progress.violations:,} violations"
        show("", progress.simulations, progress.simulations_total, unit="simulations", detail=detail)

    return on_progress


def sweep(
    config: Annotated[Path, typer.Argument(help="A sweep configuration (TOML).")],
    out: Annotated[Path, typer.Option("--out", help="The sweep directory (created, or resumed).")],
    workers: Annotated[int | None, typer.Option("--workers", min=1, max=MAX_WORKERS, help="Local processes.")] = None,
    scheduler: Annotated[str | None, typer.Option("--scheduler", help="Dask scheduler address.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
    keep_histories: Annotated[bool, typer.Option("--keep-histories", help="Also keep every history.")] = False,
    policy: Annotated[
        str | None,
        typer.Option("--policy", help="The policy label whose failed invariants exit 1 (default: the last one)."),
    ] = None,
    exit_zero: Annotated[
        bool, typer.Option("--exit-zero", help="Exit 0 even when an invariant failed (collect data only).")
    ] = False,
) -> None:
    """Run CONFIG into DIR: Parquet shards, counterexamples, a manifest; resume on the same DIR."""
    from reports.progress import meter
    from sim.sweep.config import load_config
    from sim.sweep.executors import executor_for
    from sim.sweep.job import judged_policy, run_job

    cfg = load_config(config)
    judged = judged_policy(cfg, policy)
    place: Any = executor_for(scheduler, None) if scheduler else nullcontext(None)
    with place as executor, meter(f"sweep {cfg.name}") as show:
        result = run_job(
            cfg, out, executor=executor, workers=workers, keep_histories=keep_histories, on_progress=shown(show)
        )
    for warning in result.warnings:
        typer.echo(f"leaselab: warning: {warning}", err=True)
    summary = result.summary(judged)
    if json_out:
        typer.echo(json.dumps(summary, indent=2))
    else:
        rate = summary["simulations_per_s"]
        typer.echo(
            f"wrote {out}: {summary['simulations']} simulations in {summary['tasks']} shards "
            f"({summary['shards_reused']} reused, {summary['shards_redone']} redone), "
            f"{summary['counterexamples_written']} counterexamples, "
            f"{rate if rate is not None else '-'} sims/s"
        )
        for invariant, count in summary["violating_simulations"].items():
            typer.echo(f"  {invariant}: violated in {count} simulations")
        failed = summary["judged"]["failed"]
        verdict = ", ".join(failed) if failed else "every invariant held"
        typer.echo(f"{judged}: {verdict}")
    raise typer.Exit(1 if summary["judged"]["failed"] and not exit_zero else 0)


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep)
