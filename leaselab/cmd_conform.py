"""``leaselab conform --runtime-src PATH``: run the real PHP runtime beside the model.

Every guarded statement T1..T15 and the deciders (classifier, tool-effect resolver,
recordStep, reaper, recovery) run on Hypothesis-generated cases as the real PHP of the
checkout (over leaselab's TYPO3 database stand-ins) on real engines, and on the model.
Exit 0 when every divergence is explained by ``sim/conform/known_divergences.toml``, 1
otherwise, 2 on bad input (not a checkout, PHP, DBAL or an engine missing).
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from model.errors import LeaselabError

if TYPE_CHECKING:
    from sim.conform import runner


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    """SIGINT and SIGTERM: remember it, then raise. A KeyboardInterrupt raised while a finalizer runs
    (``__del__``, a weakref callback: the garbage collector runs them between any two bytecodes) is
    printed and dropped by Python; the remembered stop makes the next PHP request raise it again."""
    from sim.conform.php_process import STOP

    STOP.set()
    raise KeyboardInterrupt


def conform(
    runtime_src: Annotated[Path, typer.Option("--runtime-src", help="Root of a netresearch/t3x-nr-llm checkout.")],
    engines: Annotated[str, typer.Option("--engines", help="Comma-separated: sqlite, mariadb, postgres.")] = "sqlite",
    examples: Annotated[int, typer.Option("--examples", help="Hypothesis cases per check and engine.")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Hypothesis seed.")] = 0,
    json_out: Annotated[bool, typer.Option("--json", help="Print the JSON summary.")] = False,
    dsn: Annotated[
        str | None,
        typer.Option(
            "--dsn", help="Use an existing server: mysql://u:p@host/db?unix_socket=..., postgres://..., sqlite:///path."
        ),
    ] = None,
    check: Annotated[
        list[str] | None, typer.Option("--check", help="Run only this check (repeatable; e.g. T4 or reaper).")
    ] = None,
    collation: Annotated[
        str | None,
        typer.Option(
            "--collation",
            help="Override the model store's identity collation (binary, unicode_ci); default per engine.",
        ),
    ] = None,
) -> None:
    """Run the real PHP of a runtime checkout next to the model and report every divergence."""
    from sim.conform import report

    opts = options(runtime_src, engines, examples, seed, dsn=dsn, collation=collation, checks=tuple(check or ()))
    results = run_interruptible(opts, progress=None if json_out else lambda line: print(line, file=sys.stderr))
    doc = report.document(results)
    if json_out:
        print(json.dumps(doc, indent=2))
    else:
        print(report.text(results, opts))
    raise typer.Exit(1 if doc["unexplained"] else 0)


def options(
    runtime_src: Path,
    engines: str,
    examples: int,
    seed: int,
    *,
    dsn: str | None = None,
    collation: str | None = None,
    checks: tuple[str, ...] = (),
) -> runner.Options:
    """The checked options of a run (bad input raises :class:`LeaselabError`: exit 2, one line)."""
    from sim.conform import engines as engine_mod
    from sim.conform import runner

    runtime_src = runtime_src.resolve()
    runner.validate_checkout(runtime_src)
    names = tuple(e.strip() for e in engines.split(",") if e.strip())
    for name in names:
        if name not in engine_mod.ENGINES:
            raise LeaselabError(
                f"unknown engine '{name}'", field="engines", hint="valid engines: " + ", ".join(engine_mod.ENGINES)
            )
    if examples < 1:
        raise LeaselabError(f"--examples must be at least 1, got {examples}", field="examples")
    if collation is not None and collation not in ("binary", "unicode_ci"):
        raise LeaselabError(f"unknown collation '{collation}'", field="collation", hint="binary or unicode_ci")
    for name in names if dsn is None else ():
        why = engine_mod.missing(name)
        if why is not None:
            raise LeaselabError(why, hint=engine_mod.APT_HINT)
    if dsn is not None and engine_mod.missing("sqlite") is not None:
        raise LeaselabError(str(engine_mod.missing("sqlite")), hint=engine_mod.APT_HINT)
    overrides = {"collation": collation} if collation else {}
    return runner.Options(runtime_src, names, examples, seed, dsn, overrides, checks)


def run_interruptible(opts: runner.Options, progress: Callable[[str], None] | None) -> list[runner.CheckResult]:
    """Run the checks; Ctrl-C, SIGINT or SIGTERM stops the servers, removes their data and exits 130.

    Both handlers are installed here, SIGINT's too: a process started in the background by a
    non-interactive shell (``cmd &``, as test runners and CI scripts do) inherits SIGINT *ignored*,
    and Python then installs no KeyboardInterrupt for it; a SIGINT sent to such a run was lost and
    the checks went on to their end, servers and all."""
    from sim.conform import runner
    from sim.conform.php_process import STOP

    STOP.clear()
    previous = signal.signal(signal.SIGTERM, _interrupt), signal.signal(signal.SIGINT, _interrupt)
    try:
        results = runner.run(opts, progress=progress)
        if STOP.is_set():  # the signal came after the last request and its exception was dropped
            raise KeyboardInterrupt
        return results
    except KeyboardInterrupt:
        print("leaselab: interrupted; servers stopped and their data removed", file=sys.stderr)
        raise typer.Exit(130) from None
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])


def register(app: typer.Typer) -> None:
    app.command("conform")(conform)
