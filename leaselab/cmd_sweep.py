"""``leaselab sweep CONFIG --out DIR``: run or resume a sweep configuration into a directory.

The face only: parse options, show progress (rich on a terminal, plain lines otherwise),
print the summary. The machinery is :mod:`sim.sweep.job`. Running it again on the same DIR
resumes; a DIR holding another configuration is refused (exit 2). Violations are results,
not errors: the exit code is 0 when the sweep finished.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from scenarios.limits import MAX_WORKERS
from sim.sweep.config import load_config
from sim.sweep.engine import SweepProgress
from sim.sweep.executors import executor_for
from sim.sweep.job import Rate, run_job

PLAIN_EVERY_S = 5.0


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "ETA ?"
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"ETA {hours}:{minutes:02d}:{secs:02d}" if hours else f"ETA {minutes}:{secs:02d}"


def _line(progress: SweepProgress, rate: Rate) -> str:
    per_s, eta = rate.of(progress)
    return (
        f"{progress.done}/{progress.total} tasks, {progress.simulations}/{progress.simulations_total} simulations, "
        f"{per_s:.1f} sims/s, {_eta(eta)}"
    )


@contextmanager
def _reporter(name: str, fancy: bool) -> Iterator[Callable[[SweepProgress], None]]:
    rate = Rate()
    if fancy:
        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            transient=True,
        )
        with bar:
            handle = bar.add_task(f"sweep {name}", total=None, detail="")

            def show(progress: SweepProgress) -> None:
                per_s, eta = rate.of(progress)
                detail = f"tasks · {per_s:.1f} sims/s · {_eta(eta)}"
                bar.update(handle, total=progress.total, completed=progress.done, detail=detail)

            yield show
        return
    last = [0.0]

    def plain(progress: SweepProgress) -> None:
        now = time.perf_counter()
        if now - last[0] >= PLAIN_EVERY_S or progress.done == progress.total:
            last[0] = now
            typer.echo(f"sweep {name}: {_line(progress, rate)}", err=True)

    yield plain


def sweep(
    config: Annotated[Path, typer.Argument(help="A sweep configuration (TOML).")],
    out: Annotated[Path, typer.Option("--out", help="The sweep directory (created, or resumed).")],
    workers: Annotated[int | None, typer.Option("--workers", min=1, max=MAX_WORKERS, help="Local processes.")] = None,
    scheduler: Annotated[str | None, typer.Option("--scheduler", help="Dask scheduler address.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
    keep_histories: Annotated[bool, typer.Option("--keep-histories", help="Also keep every history.")] = False,
) -> None:
    """Run CONFIG into DIR: Parquet shards, counterexamples, a manifest; resume on the same DIR."""
    cfg = load_config(config)
    place: Any = executor_for(scheduler, None) if scheduler else nullcontext(None)
    with place as executor, _reporter(cfg.name, sys.stderr.isatty() and not json_out) as show:
        result = run_job(cfg, out, executor=executor, workers=workers, keep_histories=keep_histories, on_progress=show)
    for warning in result.warnings:
        typer.echo(f"leaselab: warning: {warning}", err=True)
    summary = result.summary()
    if json_out:
        typer.echo(json.dumps(summary, indent=2))
        return
    rate = summary["simulations_per_s"]
    typer.echo(
        f"wrote {out}: {summary['simulations']} simulations in {summary['tasks']} shards "
        f"({summary['shards_reused']} reused, {summary['shards_redone']} redone), "
        f"{summary['counterexamples_written']} counterexamples, "
        f"{rate if rate is not None else '-'} sims/s"
    )
    for invariant, count in summary["violating_simulations"].items():
        typer.echo(f"  {invariant}: violated in {count} simulations")


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep)
