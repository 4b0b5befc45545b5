"""``leaselab report [CONFIG] --out DIR``: the ADR review, written as index.html and report.md.

A thin face over :func:`sim.review.review.run_review`: it picks the configuration (the built-in ADR
review when CONFIG is omitted), the executor (local processes, or a Dask cluster with
``--scheduler``) and the progress display (:mod:`reports.progress`: a bar with rate and ETA on a
terminal, plain lines otherwise), and prints the path of index.html. Shards land in ``DIR/shards``
and survive an interrupted run: the same command again verifies them and computes only what is
missing. A DIR holding a sweep is refused (exit 2). Exit 1 when an invariant failed in some
simulation of the configuration's last policy (or of ``--policy LABEL``), like every other
command's violation; ``--exit-zero`` keeps 0 when only the report is wanted.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scenarios.limits import MAX_SEEDS_PER_CELL, MAX_WORKERS
from scenarios.user_files import check_output_directory

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from sim.review.review import Review

PHASE_UNITS = {"checking": "shards", "simulating": "simulations", "evidence": "jobs"}


def report(
    config: Annotated[
        Path | None, typer.Argument(help="A sweep configuration (TOML); default: the built-in ADR review.")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("reports/out"),
    seeds: Annotated[
        int | None, typer.Option("--seeds", min=1, max=MAX_SEEDS_PER_CELL, help="Seeds per cell, in every grid.")
    ] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, max=MAX_WORKERS, help="Local processes.")] = None,
    scheduler: Annotated[str | None, typer.Option("--scheduler", help="Dask scheduler address.")] = None,
    bound: Annotated[int, typer.Option("--bound", min=0, max=3, help="Exhaustive verification bound.")] = 1,
    policy: Annotated[
        str | None,
        typer.Option("--policy", help="The policy label whose failed invariants exit 1 (default: the last one)."),
    ] = None,
    exit_zero: Annotated[
        bool, typer.Option("--exit-zero", help="Exit 0 even when an invariant failed (write the report only).")
    ] = False,
) -> None:
    """Run the sweep, shrink and replay its violations, verify small scenarios; write DIR/index.html."""
    from reports.progress import meter
    from sim.review.builtin import builtin_review
    from sim.review.review import ReviewOptions, run_review
    from sim.sweep.config import load_config
    from sim.sweep.executors import executor_for
    from sim.sweep.job import judged_policy

    sweep_config = load_config(config) if config is not None else builtin_review()
    check_output_directory(out)
    judged = judged_policy(sweep_config, policy)
    local = workers or os.cpu_count() or 1
    options = ReviewOptions(
        out=out,
        seeds=seeds,
        workers=local if scheduler is None else 0,
        verify_bound=bound,
        command=_command(config, out, seeds, bound),
    )
    with executor_for(scheduler, local) as executor:
        with meter("report") as show:

            def step(phase: str, done: int, total: int) -> None:
                show(phase, done, total, unit=PHASE_UNITS.get(phase, ""))

            review = run_review(sweep_config, options, executor, step)
        paths = render(review, executor if scheduler is None else None)  # figures drawn in the local pool
    failed = review.failed(judged)
    verdict = ", ".join(f"{name} ({count})" for name, count in failed.items()) if failed else "every invariant held"
    typer.echo(
        f"{review.simulations} simulations, {len(review.files)} counterexamples, "
        f"{review.elapsed_s():.0f} s; report.md: {paths['markdown']}; {judged}: {verdict}",
        err=True,
    )
    typer.echo(str(paths["html"].resolve()))
    raise typer.Exit(1 if failed and not exit_zero else 0)


def render(review: Review, executor: Executor | None = None) -> dict[str, Path]:
    """Write a review's index.html, report.md and report.json into its output directory; ``executor``
    (a local process pool) draws the figures in parallel."""
    from reports.document import write_review

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
