"""``leaselab report [CONFIG] --out DIR``: the ADR review, written as index.html and report.md.

A thin face over :func:`sim.review.review.run_review`: it picks the configuration (the built-in ADR
review when CONFIG is omitted), the executor (local processes, or a Dask cluster with
``--scheduler``) and the progress display (a bar with rate and ETA on a terminal, plain
lines otherwise), and prints the path of index.html. Shards land in ``DIR/shards`` and
survive an interrupted run: the same command again computes only what is missing.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from concurrent.futures import Executor
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from reports.document import write_review
from sim.review.builtin import builtin_review
from sim.review.review import Review, ReviewOptions, run_review
from sim.sweep.config import load_config
from sim.sweep.executors import executor_for


class _Lines:
    """Plain progress lines for logs and CI: at most one every ``every_s`` seconds per phase, and the last."""

    def __init__(self, every_s: float = 5.0) -> None:
        self.every_s = every_s
        self.started: dict[str, float] = {}
        self.last: dict[str, float] = {}
        self.phase_end = time.perf_counter()

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        start = self.started.setdefault(phase, self.phase_end)
        self.phase_end = now
        if done < total and now - self.last.get(phase, start) < self.every_s:
            return
        self.last[phase] = now
        elapsed = max(now - start, 1e-9)
        rate = done / elapsed
        eta = (total - done) / rate if rate > 0 else float("inf")
        unit = "simulations" if phase == "simulating" else "jobs"
        typer.echo(
            f"{phase}: {done}/{total} {unit} ({100 * done / max(total, 1):.0f}%), {rate:.1f}/s, "
            f"elapsed {elapsed:.0f} s, ETA {eta:.0f} s",
            err=True,
        )


class _Rate(ProgressColumn):
    """Items per second (rich's own speed columns are for bytes)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.1f}/s" if speed else "?/s", justify="right")


class _Bar:
    """A rich progress bar per phase with rate and ETA (terminal only)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase not in self.tasks:
            self.tasks[phase] = self.progress.add_task(phase, total=total)
        self.progress.update(self.tasks[phase], completed=done, total=total)


def report(
    config: Annotated[
        Path | None, typer.Argument(help="A sweep configuration (TOML); default: the built-in ADR review.")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("reports/out"),
    seeds: Annotated[int | None, typer.Option("--seeds", min=1, help="Seeds per cell, in every grid.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Local processes.")] = None,
    scheduler: Annotated[str | None, typer.Option("--scheduler", help="Dask scheduler address.")] = None,
    bound: Annotated[int, typer.Option("--bound", min=0, max=3, help="Exhaustive verification bound.")] = 1,
) -> None:
    """Run the sweep, shrink and replay its violations, verify small scenarios; write DIR/index.html."""
    sweep_config = load_config(config) if config is not None else builtin_review()
    local = workers or os.cpu_count() or 1
    options = ReviewOptions(
        out=out,
        seeds=seeds,
        workers=local if scheduler is None else 0,
        verify_bound=bound,
        command=_command(config, out, seeds, bound),
    )
    with executor_for(scheduler, local) as executor:
        if sys.stderr.isatty():
            columns = (
                TextColumn("{task.description:<10}"),
                BarColumn(),
                MofNCompleteColumn(),
                _Rate(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
            )
            with Progress(*columns, transient=False) as bar:
                review = run_review(sweep_config, options, executor, _Bar(bar))
        else:
            review = run_review(sweep_config, options, executor, _Lines())
        paths = render(review, executor if scheduler is None else None)  # figures drawn in the local pool
    typer.echo(
        f"{review.simulations} simulations, {len(review.files)} counterexamples, "
        f"{review.elapsed_s():.0f} s; report.md: {paths['markdown']}",
        err=True,
    )
    typer.echo(str(paths["html"].resolve()))


def render(review: Review, executor: Executor | None = None) -> dict[str, Path]:
    """Write a review's index.html, report.md and report.json into its output directory; ``executor``
    (a local process pool) draws the figures in parallel."""
    return write_review(
        review.frame,
        policies=review.policies,
        counterexamples=review.counterexamples,
        histories=review.histories,
        verification=review.verification,
        findings=review.findings,
        explanations=review.explanations,
        provenance=review.provenance,
        out_dir=review.out,
        wall_clock=review.elapsed_s,
        executor=executor,
    )


def _command(config: Path | None, out: Path, seeds: int | None, bound: int) -> str:
    """The command line that reproduces this report."""
    parts = ["leaselab", "report"]
    if config is not None:
        parts.append(str(config))
    parts += ["--out", str(out)]
    if seeds is not None:
        parts += ["--seeds", str(seeds)]
    if bound != 1:
        parts += ["--bound", str(bound)]
    return shlex.join(parts)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
