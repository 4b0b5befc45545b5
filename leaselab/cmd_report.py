"""``leaselab report``: sweep every library scenario under every preset and write the verdict table.

Runs on the local cores by default (a process pool), or on a Dask cluster with
``--scheduler``. Shards land in ``OUT/shards`` and survive an interrupted run:
running the same command again only computes what is missing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from leaselab.executors import executor_for
from model.errors import LeaselabError
from model.policy import PRESETS, preset
from reports.frames import load_shards
from reports.verdicts import verdict_markdown
from scenarios.loader import library_names
from sim.sweep import SweepPlan, SweepProgress, run_sweep, validate_scenarios


def report(
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="Seeds per scenario and preset.")] = 200,
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("reports/out"),
    scenario: Annotated[list[str] | None, typer.Option("--scenario", help="Limit to these scenarios.")] = None,
    policy: Annotated[list[str] | None, typer.Option("--policy", help="Limit to these presets.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Local processes.")] = None,
    scheduler: Annotated[str | None, typer.Option("--scheduler", help="Dask scheduler address.")] = None,
) -> None:
    """Sweep scenarios x presets x seeds and write OUT/verdicts.md."""
    scenarios = scenario or library_names()
    policies = policy or list(PRESETS)
    for name in policies:
        preset(name)
    validate_scenarios(scenarios)
    plan = SweepPlan(scenarios, policies, seeds)
    shard_dir = out / "shards"
    started = time.perf_counter()
    with executor_for(scheduler, workers) as executor, _progress() as bar:
        task = bar.add_task("simulating", total=len(plan.tasks()))

        def advance(progress: SweepProgress) -> None:
            bar.update(task, completed=progress.done)

        done = run_sweep(plan, shard_dir, executor=executor, on_task_done=advance)
    frame = load_shards(done.paths)
    target = out / "verdicts.md"
    text = verdict_markdown(frame, policies=policies, title="leaselab verdicts")
    text += f"\n{len(frame)} simulations, {seeds} seeds per cell, {time.perf_counter() - started:.1f} s.\n"
    _write_atomic(target, text)
    typer.echo(f"wrote {target} ({len(frame)} simulations, {done.skipped} shards reused)")


def _write_atomic(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as error:
        raise LeaselabError(f"cannot write: {error.strerror}", file=str(path)) from None


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True
    )


def register(app: typer.Typer) -> None:
    app.command("report")(report)
