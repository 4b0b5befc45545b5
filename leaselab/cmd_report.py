"""``leaselab report [CONFIG] --out DIR``: the ADR review, written as index.html and report.md.

A thin face over :func:`sim.review.review.run_review`: it picks the configuration (the built-in ADR
review when CONFIG is omitted), the executor (local processes, or a Dask cluster with
``--scheduler``) and the progress display (:mod:`reports.progress`: a bar with rate and ETA on a
terminal, plain lines otherwise), and prints the path of index.html. Shards land in ``DIR/shards``
and survive an interrupted run: the same command again verifies them and computes only what is
missing; counterexamples and figures of an earlier report in DIR that this run did not write are
removed, and the command says which. A DIR holding a sweep is refused (exit 2). The verdict line on
stderr is the report's headline for ``head`` (the configuration's plain head policy, else its last;
or ``--policy LABEL``), whether the register explains its failures, and the exit code: 1 when an
invariant of that policy failed in some simulation, like every other command's violation;
``--exit-zero`` keeps 0 when only the report is wanted.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scenarios.limits import MAX_SEEDS_PER_CELL, MAX_WORKERS
from scenarios.user_files import check_output_directory

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from sim.review.review import Review
    from sim.sweep.config import SweepConfig

RUNTIME_ENGINES = "sqlite,mariadb,postgres"
PHASE_UNITS = {"checking": "shards", "simulating": "simulations", "evidence": "jobs", "figures": "figures"}


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
        typer.Option(
            "--policy", help="The policy label whose failed invariants exit 1 (default: head, else the last one)."
        ),
    ] = None,
    exit_zero: Annotated[
        bool, typer.Option("--exit-zero", help="Exit 0 even when an invariant failed (write the report only).")
    ] = False,
    runtime_src: Annotated[
        Path | None,
        typer.Option(
            "--runtime-src",
            help="Also run `leaselab conform` on this runtime checkout and show its checks (see --runtime-engines).",
        ),
    ] = None,
    runtime_engines: Annotated[
        str, typer.Option("--runtime-engines", help="The engines of those checks (comma-separated).")
    ] = RUNTIME_ENGINES,
) -> None:
    """Run the sweep, shrink and replay its violations, verify small scenarios; write DIR/index.html."""
    from leaselab.cmd_sweep import enter_executor
    from reports.progress import meter
    from sim.review.builtin import builtin_review
    from sim.review.cleanup import remove_stale, removed_line
    from sim.review.review import ReviewOptions, run_review
    from sim.sweep.config import load_config
    from sim.sweep.job import judged_policy

    started_ns = time.time_ns()
    sweep_config = load_config(config) if config is not None else builtin_review()
    check_output_directory(out)
    conformance = None
    if runtime_src is not None:
        conformance = run_conformance(runtime_src, runtime_engines)
    judged = judged_policy(sweep_config, policy if policy is not None else head_of(sweep_config))
    local = workers or os.cpu_count() or 1
    options = ReviewOptions(
        out=out,
        seeds=seeds,
        workers=local if scheduler is None else 0,
        verify_bound=bound,
        command=_command(config, out, seeds, bound, runtime_src, runtime_engines),
    )
    try:
        with ExitStack() as stack:
            executor = enter_executor(stack, scheduler, local)
            show = stack.enter_context(meter("report"))

            def step(phase: str, done: int, total: int) -> None:
                show(phase, done, total, unit=PHASE_UNITS.get(phase, ""))

            review = run_review(sweep_config, options, executor, step)
            paths = render(  # figures drawn in the local pool
                review,
                executor if scheduler is None else None,
                lambda done, total: show("figures", done, total, unit="figures"),
                conformance=conformance,
            )
    except KeyboardInterrupt:
        typer.echo(interrupted_line(out, shlex.join(["leaselab", *sys.argv[1:]])), err=True)
        raise typer.Exit(INTERRUPTED_EXIT) from None
    removed = remove_stale(out, started_ns)
    failed = review.failed(judged)
    code = 1 if failed and not exit_zero else 0
    if removed:
        typer.echo(f"leaselab: {removed_line(removed)}", err=True)
    typer.echo(
        f"{review.simulations:,} simulations, {len(review.files):,} counterexamples, "
        f"{review.elapsed_s():.0f} s; report.md: {paths['markdown']}",
        err=True,
    )
    typer.echo(verdict_line(paths["json"], judged, failed, code, exit_zero=exit_zero), err=True)
    typer.echo(str(paths["html"].resolve()))
    raise typer.Exit(code)


INTERRUPTED_EXIT = 130


def interrupted_line(out: Path, again: str) -> str:
    """What Ctrl-C prints: the finished shards kept and the command that resumes, and, when the code
    has uncommitted changes, that a resume will redo them (:func:`sim.review.provenance.fresh_shards`)."""
    from leaselab.cmd_sweep import plural
    from sim.review.provenance import git_commit, reusable_commit
    from sim.sweep.directory import SHARDS

    finished = len(list((out / SHARDS).glob("*.parquet"))) if (out / SHARDS).is_dir() else 0
    line = f"leaselab: interrupted: {plural(finished, 'finished shard')} kept in {out / SHARDS}; resume with: {again}"
    if finished and not reusable_commit(git_commit()):
        line += " (the code has uncommitted changes, so a resume redoes them; commit first to keep them)"
    return line


def head_of(config: SweepConfig) -> str | None:
    """The label of the configuration's plain ``head`` (the preset, no flags), the policy the report's
    answer is about; None when it has none (then the last policy is judged)."""
    from sim.review.plan import HEAD, canonical

    return next((p.label for p in config.policy if canonical(p.preset) == HEAD and not p.flags), None)


def verdict_line(report_json: Path, judged: str, failed: dict[str, int], code: int, *, exit_zero: bool) -> str:
    """The terminal's verdict: the report's own headline for ``judged`` (its primary grid, the numbers the
    answer shows), whether the register explains its failures (for head), and the exit code."""
    doc = json.loads(report_json.read_text(encoding="utf-8"))
    headline = next((v["headline"] for v in doc.get("verdicts", ()) if v["policy"] == judged), "")
    if not headline:
        headline = f"{judged}: {len(failed):,} invariants failed." if failed else f"{judged}: every invariant held."
    ranges = doc.get("explained_ranges") or {}
    explained = f" {ranges['line']}" if failed and ranges.get("line") and judged == ranges["library"]["policy"] else ""
    if not failed:
        tail = "exit 0"
    elif exit_zero:
        tail = "exit 0 (--exit-zero; 1 without it, as for any violation)"
    else:
        tail = "exit 1 as for any violation (--exit-zero: 0)"
    return f"{headline}{explained} {tail[0].upper()}{tail[1:]}."


def run_conformance(runtime_src: Path, engines: str) -> dict[str, Any]:
    """``leaselab conform``'s document for the report's real-runtime section, with the checkout and the
    wall time. Bad input exits 2 before the sweep starts; Ctrl-C or SIGTERM during it stops the servers,
    removes their data and exits 130."""
    from leaselab.cmd_conform import options, run_interruptible
    from reports.progress import meter
    from sim.conform import report
    from sim.conform.checks import all_checks

    opts = options(runtime_src, engines, 200, 0)
    total = len(all_checks()) * len(opts.engines)
    started = time.monotonic()
    with meter("report") as show:
        done = [0]

        def step(_line: str) -> None:
            done[0] += 1
            show("conformance", done[0], total, unit="checks")

        results = run_interruptible(opts, progress=step)
    return {**report.document(results), "runtime_src": str(opts.runtime_src), "wall_s": time.monotonic() - started}


def render(
    review: Review,
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    conformance: dict[str, Any] | None = None,
) -> dict[str, Path]:
    """Write a review's index.html, report.md and report.json into its output directory; ``executor``
    (a local process pool) draws the figures in parallel; ``progress(done, total)`` counts them;
    ``conformance`` is ``leaselab conform``'s document when the report ran it."""
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
        progress=progress,
        conformance=conformance,
    )


def _command(
    config: Path | None,
    out: Path,
    seeds: int | None,
    bound: int,
    runtime_src: Path | None = None,
    runtime_engines: str = RUNTIME_ENGINES,
) -> str:
    """The command line that reproduces this report."""
    parts = ["leaselab", "report"]
    if config is not None:
        parts.append(str(config))
    parts += ["--out", str(out)]
    if seeds is not None:
        parts += ["--seeds", str(seeds)]
    if bound != 1:
        parts += ["--bound", str(bound)]
    if runtime_src is not None:
        parts += ["--runtime-src", str(runtime_src)]
        if runtime_engines != RUNTIME_ENGINES:
            parts += ["--runtime-engines", runtime_engines]
    return shlex.join(parts)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
