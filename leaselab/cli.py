"""The ``leaselab`` command line: one typer app, one small module per command.

Commands live in ``leaselab/cmd_<name>.py``; each defines ``register(app)`` and is discovered
here, so adding a command never edits this file. Bad input never shows a traceback: a
:class:`model.errors.LeaselabError` or a usage error (unknown option or command) becomes one
line ``leaselab: <message>`` on stderr and exit code 2. Anything else is a harness bug and
crashes loudly.

Start-up stays cheap: ``leaselab --help`` and a usage error load typer and the ``cmd_*``
modules only, never pandas, matplotlib, pyarrow or simpy; each command imports what it needs
when it runs (``tests/leaselab/test_cli_startup.py`` measures the CPU time and the modules
loaded). A boolean option is shown in ``--help`` as a bare flag (``--json``), without a
``<bool>`` value it does not take.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

import leaselab
from model.errors import MAX_LINE_CHARS, LeaselabError, clamp

USAGE_EXIT_CODE = 2
PROG = "leaselab"


def error_line(message: str) -> str:
    """The one line a bad input is reported as: ``leaselab: <message>``, whitespace collapsed, under 200
    characters (a usage error can quote a long argument)."""
    return clamp(f"{PROG}: {message}", MAX_LINE_CHARS)


def _fail(message: str) -> NoReturn:
    typer.echo(error_line(message), err=True)
    raise typer.Exit(USAGE_EXIT_CODE)


@contextmanager
def _one_line_errors() -> Iterator[None]:
    try:
        yield
    except LeaselabError as error:
        _fail(error.one_line())
    except typer.TyperException as error:
        # Since typer 0.26 every click usage error is a TyperException with exit code 2. A bare
        # `leaselab` raises NoArgsIsHelpError (a usage error too) whose message is the help page.
        if error.exit_code != USAGE_EXIT_CODE or type(error).__name__ == "NoArgsIsHelpError":
            raise
        ctx = getattr(error, "ctx", None)
        command_path = getattr(ctx, "command_path", PROG)
        _fail(f"{error.format_message()} (see '{command_path} --help')")


def show_flags_bare(params: Sequence[Any]) -> None:
    """Give every flag (click options of typer's own click) an empty metavar, so the help shows
    ``--json`` rather than ``--json <bool>``."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""


class LeaselabGroup(TyperGroup):
    """The app's command group: reports bad input as one line and shows flags as flags (see the
    module docstring)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        with _one_line_errors():
            return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        with _one_line_errors():
            return super().invoke(ctx)

    def get_params(self, ctx: Any) -> Any:
        params = super().get_params(ctx)
        show_flags_bare(params)
        return params

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            show_flags_bare(command.get_params(ctx))
        return command


app = typer.Typer(
    name=PROG,
    cls=LeaselabGroup,
    no_args_is_help=True,
    add_completion=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"{PROG} {leaselab.__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_print_version, help="Print the version and exit."
    ),
) -> None:
    """Fault-injection simulation and verification harness for a lease-based agent runtime."""


def command_modules() -> list[str]:
    """The ``leaselab.cmd_*`` modules, by name."""
    return sorted(
        f"{leaselab.__name__}.{info.name}"
        for info in pkgutil.iter_modules(leaselab.__path__)
        if info.name.startswith("cmd_")
    )


def _register_commands(target: typer.Typer) -> None:
    for name in command_modules():
        importlib.import_module(name).register(target)


_register_commands(app)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Console-script entry point: run the app and exit with its code."""
    try:
        app(args=list(argv) if argv is not None else None, prog_name=PROG)
    except LeaselabError as error:  # raised outside any command, e.g. while parsing the group
        typer.echo(error_line(error.one_line()), err=True)
        sys.exit(USAGE_EXIT_CODE)
    sys.exit(0)  # pragma: no cover - the app always exits itself in standalone mode
