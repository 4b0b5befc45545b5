"""``leaselab sweep CONFIG --out DIR``: run or resume a sweep configuration into a directory.

The face only: parse options, show progress (:mod:`reports.progress`: a bar on a terminal, plain
lines otherwise; the verification of a resumed directory's shards first), print the summary. The
machinery is :mod:`sim.sweep.job`. Running it again on the same DIR resumes; a DIR holding a report
or another configuration is refused (exit 2). Exit 1 when an invariant failed in some simulation of
the configuration's last policy (or of ``--policy LABEL``), like every other command's violation,
and the first line of the summary says so; the judged policy's workers explain each violation
(``why.*`` columns), so every failed invariant's line says which finding or non-guarantee explains
its violations (``known: F-06``) or that none does (``UNREGISTERED``). Where the judged policy's cells are
cells the register recorded (:mod:`register.met_rates`), a last line says whether every entry met there
before was met again, and names each "no longer met" (unlikely to be missed at the recorded rate) or met
too rarely there to say with the simulations run. ``--known-ok`` exits 0 when
every violation is on record, ``--exit-zero`` always. The counterexamples are one per policy and
mechanism (:mod:`sim.sweep.job`); the lines before the register's list the judged policy's, and
``--shrink`` shrinks them after the sweep while each keeps its mechanism. Ctrl-C keeps the finished
shards, says how to resume, and exits 130.
"""

from __future__ import annotations

import json
import shlex
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any

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
    known_ok: Annotated[
        bool,
        typer.Option("--known-ok", help="Exit 0 when every violation is a registered finding or non-guarantee."),
    ] = False,
    shrink: Annotated[
        bool,
        typer.Option(
            "--shrink",
            help="Then shrink each kept counterexample (one per policy and mechanism) while it keeps its "
            "mechanism: up to 120 simulations each.",
        ),
    ] = False,
) -> None:
    """Run CONFIG into DIR: Parquet shards, counterexamples, a manifest; resume on the same DIR."""
    from reports.progress import meter
    from sim.sweep.config import load_config
    from sim.sweep.job import judged_policy, run_job
    from sim.sweep.shrinking import SHRINK_TESTS

    cfg = load_config(config)
    judged = judged_policy(cfg, policy)
    try:
        with ExitStack() as stack:
            executor = enter_executor(stack, scheduler, None) if scheduler else None
            show = stack.enter_context(meter(f"sweep {cfg.name}"))
            result = run_job(
                cfg,
                out,
                executor=executor,
                workers=workers,
                keep_histories=keep_histories,
                on_progress=shown(show),
                explain=judged,
                shrink_tests=SHRINK_TESTS if shrink else 0,
            )
    except KeyboardInterrupt:
        typer.echo(interrupted_line(config, out, sys.argv[1:]), err=True)
        raise typer.Exit(INTERRUPTED_EXIT) from None
    for warning in result.warnings:
        typer.echo(f"leaselab: warning: {warning}", err=True)
    summary = result.summary(judged)
    code = sweep_exit_code(summary["judged"], exit_zero=exit_zero, known_ok=known_ok)
    if json_out:
        typer.echo(json.dumps(summary, indent=2))
    else:
        for line in summary_lines(summary, code, known_ok=known_ok, exit_zero=exit_zero):
            typer.echo(line)
    raise typer.Exit(code)


INTERRUPTED_EXIT = 130


def connecting_line(scheduler: str) -> str:
    """Shown while connecting to a Dask scheduler, which can take up to its timeout to fail."""
    from sim.sweep.executors import CONNECT_TIMEOUT

    return f"leaselab: connecting to the Dask scheduler at {scheduler} (gives up after {CONNECT_TIMEOUT}) ..."


def enter_executor(stack: ExitStack, scheduler: str | None, workers: int | None, stream: IO[str] | None = None) -> Any:
    """``executor_for(scheduler, workers)`` entered on ``stack``. On a terminal, a status line says where
    it connects while it waits (an unreachable scheduler takes its whole timeout to fail) and is erased
    after, so that bad input still leaves exactly one line; a log or a pipe gets no status line."""
    from sim.sweep.executors import executor_for

    out = stream if stream is not None else sys.stderr
    shown = scheduler is not None and out.isatty()
    if shown:
        out.write(connecting_line(str(scheduler)))
        out.flush()
    try:
        return stack.enter_context(executor_for(scheduler, workers))
    finally:
        if shown:
            out.write("\r\033[K")
            out.flush()


def interrupted_line(config: Path, out: Path, argv: list[str]) -> str:
    """What Ctrl-C prints: what is kept and the command that resumes (the same command)."""
    from sim.sweep.directory import SHARDS

    finished = len(list((out / SHARDS).glob("*.parquet"))) if (out / SHARDS).is_dir() else 0
    again = shlex.join(["leaselab", *argv]) if argv[:1] == ["sweep"] else f"leaselab sweep {config} --out {out}"
    return f"leaselab: interrupted: {plural(finished, 'finished shard')} kept in {out / SHARDS}; resume with: {again}"


def sweep_exit_code(judged: dict[str, Any], *, exit_zero: bool, known_ok: bool) -> int:
    """1 when the judged policy failed an invariant (with ``known_ok``, only one some violation of which
    the register does not explain); 0 with ``exit_zero``."""
    if exit_zero or not judged["failed"]:
        return 0
    if not known_ok:
        return 1
    unexplained = any(why in ("", "?") for tally in judged["explained_by"].values() for why in tally)
    return 1 if unexplained else 0


def _why_text(tally: dict[str, int]) -> str:
    from leaselab.results import label

    parts = []
    for why, count in sorted(tally.items(), key=lambda item: (-item[1], item[0])):
        named = "not examined (shard of an older sweep)" if why == "?" else label(why)
        parts.append(f"{named} {count:,}")
    return "; ".join(parts)


def summary_lines(summary: dict[str, Any], code: int, *, known_ok: bool, exit_zero: bool = False) -> list[str]:
    """The text summary: the verdict of the judged policy and the exit code first, then what was written,
    then one line per failed invariant of the judged policy with what explains its violations."""
    judged = summary["judged"]
    label, failed = judged["policy"], judged["failed"]
    if not failed:
        idle = judged.get("unjudged", [])
        runs = plural(judged["simulations"], "simulation")
        if idle:  # one that judged no case showed nothing: not "held"
            held = plural(judged["held"], "invariant")
            verdict = f"{label}: {held} held in {runs}; {len(idle)} judged no case ({', '.join(idle)})"
        else:
            verdict = f"{label}: every invariant held in {runs}"
    else:
        tallies = judged["explained_by"].values()
        news = any(why in ("", "?") for tally in tallies for why in tally)
        on_record = "" if news else ", all on record"
        verdict = f"{label}: {plural(len(failed), 'invariant')} failed{on_record}"
    if code == 0 and failed:
        why_zero = "--exit-zero" if exit_zero or not known_ok else "--known-ok"
        verdict += f"; exit 0 ({why_zero})"
    elif failed:
        verdict += "; exit 1 as for any violation (--known-ok: 0 when all are on record; --exit-zero: always 0)"
    else:
        verdict += "; exit 0"
    rate = summary["simulations_per_s"]
    lines = [
        verdict,
        f"wrote {summary['out']}: {plural(summary['simulations'], 'simulation')} in "
        f"{plural(summary['tasks'], 'shard')} ({summary['shards_reused']:,} reused, "
        f"{summary['shards_redone']:,} redone), {plural(summary['counterexamples'], 'counterexample')} "
        f"({summary['counterexamples_written']:,} new this run), "
        + (f"{rate:,} simulations/s this run" if rate is not None else "no simulation this run"),
    ]
    from reports.stats import DASH, percent, wilson

    for invariant, count in failed.items():
        tally = judged["explained_by"].get(invariant, {})
        n = judged["simulations"]
        low, high = wilson(count, n)  # every rate with its interval
        lines.append(
            f"  {invariant}: violated in {count:,} of {n:,} simulations of {label} "
            f"({percent(count / n)} [{percent(low)}{DASH}{percent(high)}])"
            + (f" [{_why_text(tally)}]" if tally else "")
        )
    mine = [m for m in summary.get("mechanisms", ()) if m["policy"] == label]
    if mine:
        lines.append(f"{plural(len(mine), 'distinct mechanism')} of {label}, one counterexample each:")
    for m in mine:
        shrunk = f"shrunk {m['faults_found']} -> {plural(m['faults'], 'fault')}" if m.get("shrunk") else "not shrunk"
        lines.append(
            f"  {_mechanism_text(m['mechanism'])} ({m['invariant']}): first met at simulation "
            f"{m['first_simulation']:,}, {m['first_s']:.1f} s, {shrunk} -> {_under(summary['out'], m['file'])}"
        )
    lines += met_lines(summary.get("register_met") or {})
    if mine:  # paths as given on the command line, so the command pastes from any directory it was run in
        lines.append(f"replay one (exit 1 reproduced): leaselab replay {_under(summary['out'], mine[0]['file'])}")
    return lines


def _under(out: str, file: str) -> str:
    """A kept counterexample's path as the user can paste it: under the --out they gave, shell-quoted."""
    return shlex.quote(str(Path(out) / "counterexamples" / file))


def met_lines(met: dict[str, Any]) -> list[str]:
    """What the register's record of these cells says (:mod:`register.met_rates`): nothing when the sweep
    shares no recorded cell; else one sentence, then each entry no longer met and each too rare to say."""
    if not met.get("line"):
        return []
    lines = [f"register: {met['line']}"]
    for item in met["no_longer_met"]:
        lines.append(
            f"  no longer met: {item['entry']} (met before in {item['grid']}: {item['met_before']:,} of "
            f"{item['recorded_simulations']:,} simulations; this sweep ran {item['simulations']:,} there, "
            f"{item['expected']:.1f} expected, P(none) {item['p_none']:.2g}); replay: {item['replay']}"
        )
    for item in met["not_enough_simulations"]:
        lines.append(
            f"  not enough simulations to say: {item['entry']} (met before in {item['grid']}, "
            f"{item['expected']:.1f} expected in the {item['simulations']:,} simulations run there)"
        )
    return lines


def _mechanism_text(mechanism: str) -> str:
    from leaselab.results import label

    if mechanism.startswith("unexplained: "):
        return "unexplained [" + mechanism.removeprefix("unexplained: ")[:80] + "]"
    return label(mechanism)


def plural(count: int, noun: str) -> str:
    """``1 shard``, ``2,000 shards``."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep)
