"""``leaselab mutants``: flip each policy flag of head, and swap in each code mutant of the model,
and check the search kills every mutant under faults.

A mutant is killed when a swarm batch on one of its targets shows a violation head does not
have (see :mod:`sim.explore.mutants`); a mutant no search can tell from head is listed as
equivalent with its reason. Prints the mutation score, killed / (total - equivalent), and the
survivors. JSON, exactly::

    {"score": float, "killed": [{"flag", "invariant", "simulations", "scenario", "faults"}],
     "equivalent": [{"flag", "reason"}], "survivors": [flag],
     "code_score": float, "code_killed": [...as killed...], "code_survivors": [name],
     "unexercised": [{"invariant", "reason"}],
     "code_sweep_score": float, "code_sweep_flagged": [{"mutant", "invariant", "scenario", "simulations",
     "through_oracle"}], "code_sweep_missed": [name]}

``score`` is the flag mutants' score, ``code_score`` the code mutants' (sim/explore/code_mutants.py),
``code_sweep_score`` the code mutants the head sweep alone flags with an unregistered violation (no
unit test, no target chosen for the mutant; ``through_oracle``: caught by an outcome oracle or an ADR-promise invariant;
sim/explore/sweep_mutants.py). A mutant the sweep alone misses is reported, not a failure.
``unexercised`` lists the invariants nothing violated (no kill, known defect or finding).
Exit 0 when no mutant survives and every unexercised invariant has a reason, 1 otherwise,
2 on bad input.

``--auto [--sample N] [--seed S] [--workers W | --scheduler ADDRESS]``: automatic mutants of ``model/`` made
with cosmic-ray's operators, judged by the head sweep alone and by the unit tests (leaselab/auto_mutants_cli.py);
the sweep's seed is the property suite's (``--seed`` draws the sample), exit 0 once judged. ``--scheduler``
runs each mutant's process on a Dask cluster, with the sweep's executor code (the same result as ``--workers``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from model.errors import LeaselabError, unknown_name
from model.policy import FLAG_NAMES
from scenarios.limits import MAX_BUDGET_S, MAX_SEED, MAX_SIMULATIONS, MAX_WORKERS

if TYPE_CHECKING:
    from sim.explore.code_mutants import CodeMutant
    from sim.explore.mutants import MutationReport

SWEEP_SIMULATIONS_DEFAULT = 25
"""``sim.explore.sweep_mutants.SWEEP_SIMULATIONS``, written out so that ``--help`` imports no simulation
code (tests/leaselab/test_cli_mutants.py checks the two agree)."""


def _flags(only: list[str] | None) -> tuple[str, ...]:
    from sim.explore.code_mutants import CODE_MUTANT_NAMES

    if not only:
        return FLAG_NAMES
    unknown = [name for name in only if name not in FLAG_NAMES and name not in CODE_MUTANT_NAMES]
    if unknown:
        valid = (*FLAG_NAMES, *CODE_MUTANT_NAMES)
        what, hint = unknown_name("flag or code mutant", unknown[0], valid, see="`leaselab policies` + code_mutants.py")
        raise LeaselabError(what, field="--only", hint=hint)
    return tuple(name for name in dict.fromkeys(only) if name in FLAG_NAMES)


def _code(only: list[str] | None) -> tuple[CodeMutant, ...]:
    from sim.explore.code_mutants import CODE_MUTANTS

    if not only:
        return CODE_MUTANTS
    return tuple(m for m in CODE_MUTANTS if m.name in only)


def report_lines(report: MutationReport) -> list[str]:
    judged = len(report.killed) + len(report.survivors)
    lines = [
        f"mutation score {report.score:.2f}: {len(report.killed)} killed of {judged} "
        f"({len(report.equivalent)} equivalent), {report.simulations} simulations in {report.elapsed_s:.1f} s"
    ]
    for kill in report.killed:
        lines.append(
            f"  killed     {kill.flag}: {kill.invariant} after {kill.simulations} simulations "
            f"on {kill.target.describe()}"
        )
    for flag, reason in report.equivalent:
        lines.append(f"  equivalent {flag}: {reason}")
    for flag in report.survivors:
        lines.append(f"  SURVIVED   {flag}")
    code_judged = len(report.code_killed) + len(report.code_survivors)
    lines.append(f"code mutation score {report.code_score:.2f}: {len(report.code_killed)} killed of {code_judged}")
    for kill in report.code_killed:
        lines.append(
            f"  killed     {kill.flag}: {kill.invariant} after {kill.simulations} simulations "
            f"on {kill.target.describe()}"
        )
    for name in report.code_survivors:
        lines.append(f"  SURVIVED   {name}")
    swept = len(report.code_sweep_flagged) + len(report.code_sweep_missed)
    if swept:
        through_new = sum(1 for flagged in report.code_sweep_flagged if flagged.through_oracle)
        lines.append(
            f"code mutation score, head sweep alone {report.code_sweep_score:.2f}: {len(report.code_sweep_flagged)} "
            f"flagged unregistered of {swept} ({through_new} through an outcome oracle or ADR promise)"
        )
        for flagged in report.code_sweep_flagged:
            new = " (outcome oracle)" if flagged.through_oracle else ""
            lines.append(
                f"  flagged    {flagged.mutant}: {flagged.invariant}{new} after {flagged.simulations} simulations "
                f"on {flagged.scenario}"
            )
        for name in report.code_sweep_missed:
            lines.append(f"  missed     {name}: the head sweep met no unregistered violation")
    for invariant, reason in report.unexercised:
        lines.append(f"  unexercised {invariant}: {reason or 'NO MUTANT AND NO REASON'}")
    return lines


def mutants(
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    budget_s: Annotated[
        float, typer.Option("--budget-s", min=0.1, max=MAX_BUDGET_S, help="Wall-clock budget per mutant.")
    ] = 60.0,
    simulations: Annotated[
        int, typer.Option("--simulations", min=1, max=MAX_SIMULATIONS, help="Simulations per target.")
    ] = 300,
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="The swarm's seed.")] = 0,
    sweep_simulations: Annotated[
        int,
        typer.Option(
            "--sweep-simulations",
            min=0,
            max=MAX_SIMULATIONS,
            help="Head-sweep simulations per library scenario for each code mutant (0: skip).",
        ),
    ] = SWEEP_SIMULATIONS_DEFAULT,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Mutate only this flag or code mutant (repeatable).")
    ] = None,
    auto: Annotated[
        bool,
        typer.Option("--auto", help="Automatic mutants of model/ (cosmic-ray): sweep-only score among test kills."),
    ] = False,
    sample: Annotated[
        int | None, typer.Option("--sample", min=1, max=MAX_SIMULATIONS, help="With --auto: mutants to judge.")
    ] = None,
    workers: Annotated[
        int, typer.Option("--workers", min=1, max=MAX_WORKERS, help="With --auto: mutants judged at once.")
    ] = 1,
    timeout_s: Annotated[
        float, typer.Option("--timeout-s", min=1.0, max=MAX_BUDGET_S, help="With --auto: stop a mutant's process.")
    ] = 300.0,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="With --auto: Dask scheduler address (as `leaselab sweep`).")
    ] = None,
) -> None:
    """Flip each flag of head, one at a time; every mutant must be killed or listed as equivalent.
    With --auto: judge automatic mutants of the runtime by the head sweep alone and by the unit tests."""
    if auto:
        from leaselab.auto_mutants_cli import run_auto

        if only:
            raise LeaselabError("--only names flag and code mutants; --auto samples its own", field="--only")
        lines, document = run_auto(sample, seed, workers, sweep_simulations or 1, timeout_s, scheduler)
        typer.echo(json.dumps(document, indent=2) if json_out else "\n".join(lines))
        raise typer.Exit(0)
    from reports.progress import meter
    from sim.explore.mutants import run_mutants

    flags, code = _flags(only), _code(only)
    with meter("mutants") as show:

        def judged(mutant: str, done: int, total: int) -> None:
            show("", done, total, unit="mutants", detail=f"searching {mutant}" if mutant else "")

        report = run_mutants(
            simulations,
            seed,
            budget_s=budget_s,
            flags=flags,
            progress=judged,
            code=code,
            sweep_simulations=sweep_simulations,
        )
    if json_out:
        typer.echo(json.dumps(report.document(), indent=2))
    else:
        for line in report_lines(report):
            typer.echo(line)
    failed = report.survivors or report.code_survivors or (not only and report.unexplained_unexercised)
    raise typer.Exit(1 if failed else 0)


def register(app: typer.Typer) -> None:
    app.command("mutants")(mutants)
