"""``leaselab explore [SCENARIO]``: search for violations until the budget is spent.

Each distinct mechanism (a registered finding, a recorded non-guarantee, or an unexplained witness
shape: :mod:`sim.explore.discovery`) is reported once, shrunk while it keeps its mechanism (after the
search), and written as a counterexample file under --out (default ``out/explore``, apart from the
report's directory). The terminal names what the register explains beside each violation ("known:
F-06", "non-guarantee: NG-identity"). ``--explorer guided`` (the default) branches from milestone
histories (:mod:`sim.explore.guided`), ``swarm`` draws afresh every time; ``--workers N`` spreads one
search over N processes (:mod:`sim.explore.parallel`). ``--ranges deployment`` widens the scenario's
fault ranges to those of real deployments. ``--target cost:NAME`` searches for one instance of a cost
the report counts (:mod:`sim.explore.costs`) and writes it like a violation (exit 1 when found).
``--target F-16`` (any registered finding or recorded non-guarantee) spends the search on that one
mechanism, as the mechanism bench does (:mod:`sim.explore.entry_target`: only its invariants' violations kept,
stopped at its first meeting, its chain climbed by the guided explorer); the first line says whether and when it was
met, and its counterexample is shrunk while it keeps the mechanism (exit 1 when met).
Progress (simulations, violations, the budget left) goes to
stderr.

Exit 1 if any violation was found, known ones included (the first line of output says how many the
register explains), 0 if none, 2 on bad input, 130 after Ctrl-C: what was found so far is written
(unshrunk) with ``summary.json``, and the output says where and how to search on. A run that found
something writes ``summary.json`` too (``interrupted`` false), so an interrupted run's never outlives a
complete one; a run that found nothing writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from leaselab.options import target_from_cli
from model.errors import LeaselabError
from scenarios.limits import MAX_BUDGET_S, MAX_SEED, MAX_SIMULATIONS, MAX_WORKERS
from scenarios.user_files import check_output_directory

if TYPE_CHECKING:
    from sim.explore.base import ExploreReport

DEFAULT_OUT = Path("out/explore")
INTERRUPTED_EXIT_CODE = 130
RANGES = ("library", "deployment")


def file_tag(violation: Any) -> str:
    """What names a violation's file beside scenario, policy and invariant: its register id, or a short
    hash of an unexplained mechanism's witness shape."""
    known: str = violation.known
    if known:
        return str(violation.mechanism)
    if str(violation.mechanism).startswith("cost:"):
        return "cost"
    text = violation.mechanism or "|".join(violation.signature)
    return hashlib.blake2b(text.encode(), digest_size=3).hexdigest()


def write_counterexamples(report: ExploreReport, out: Path, ranges: str = "library") -> None:
    """One file per distinct mechanism, named by scenario (and fault ranges), policy (and its flag
    overrides), invariant and mechanism, so a rerun that finds the same mechanism overwrites its file
    instead of adding another, and a search of another policy or ranges never does
    (:mod:`leaselab.cx_names`); an unshrunk find never replaces a minimal file."""
    from leaselab.cx_names import policy_tag, scenario_tag, write_keeping_minimal

    scenario = scenario_tag(Path(report.target.scenario_ref).stem, ranges)
    policy = policy_tag(report.target.policy_name, report.target.flags)
    for i, violation in enumerate(report.violations, 1):
        what = violation.invariant.replace(":", "-")  # cost:NAME -> cost-NAME: a portable file name
        name = f"{scenario}-{policy}-{what}-{file_tag(violation)}.toml"
        path = write_keeping_minimal(violation.counterexample, out / name)
        report.violations[i - 1] = type(violation)(
            violation.invariant,
            violation.found_after_s,
            violation.simulations_until_found,
            violation.counterexample,
            violation.signature,
            path,
        )


def first_line(report: ExploreReport) -> str:
    """The summary: simulations, time, mechanisms, how many the register explains, and the exit code."""
    known = sum(1 for v in report.violations if v.known)
    unexplained = len(report.violations) - known
    head = (
        f"{report.explorer}: {report.simulations:,} simulations in {report.elapsed_s:.1f} s, "
        f"{len(report.violations)} distinct mechanisms"
    )
    if report.target.cost:
        found = "found" if report.violations else "not found"
        return f"{head.rsplit(',', 1)[0]}: {report.target.cost} {found} (exit {1 if report.violations else 0})"
    aimed = report.extra.get("target")
    if aimed:
        from sim.explore.entry_target import outcome_text

        if report.extra.get("interrupted"):
            return f"{head.rsplit(',', 1)[0]} before Ctrl-C: {outcome_text(aimed)} (exit 130)"
        return f"{head.rsplit(',', 1)[0]}: {outcome_text(aimed)} (exit {1 if report.violations else 0})"
    if report.extra.get("interrupted"):
        return f"{head} before Ctrl-C: {known} known to the register, {unexplained} unexplained (exit 130)"
    if not report.violations:
        return head + ": no violation"
    return (
        f"{head}: {known} known to the register, {unexplained} unexplained "
        f"(exit 1: a known violation is still a violation)"
    )


def violation_line(v: Any) -> str:
    label = v.known or ("instance" if v.mechanism.startswith("cost:") else "unexplained")
    shape = "" if v.known or label == "instance" else f" [{v.mechanism.removeprefix('unexplained: ')[:120]}]"
    return (
        f"  {label}: {v.invariant}{shape}: first met after {v.found_after_s:.2f} s / "
        f"{v.simulations_until_found:,} simulations, {v.faults_in_minimal} "
        f"fault{'' if v.faults_in_minimal == 1 else 's'} in the "
        f"{'unshrunk' if 'not shrunk' in v.counterexample.note else 'minimal'} script -> {v.path}"
    )


def resume_command(seed: int) -> str:
    """The command line that searches on after Ctrl-C: the same one with the next seed."""
    words = ["leaselab", *sys.argv[1:]]
    if "--seed" in words:
        at = words.index("--seed")
        words[at + 1 : at + 2] = [str(seed + 1)]
    else:
        words += ["--seed", str(seed + 1)]
    return shlex.join(words)


def explore(
    scenario: Annotated[str, typer.Argument(help="A scenario file or library name.")] = "default",
    policy: Annotated[str, typer.Option("--policy", help="A preset.")] = "head",
    flag: Annotated[list[str] | None, typer.Option("--flag", help="NAME=VALUE, repeatable.")] = None,
    faults: Annotated[str, typer.Option("--faults", help="F1,F2 or all: the families profiles may draw.")] = "all",
    explorer: Annotated[str, typer.Option("--explorer", help="guided, swarm or hypothesis.")] = "guided",
    ranges: Annotated[
        str, typer.Option("--ranges", help="library (the scenario's own fault ranges) or deployment.")
    ] = "library",
    target_name: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="A register id (F-16, NG-identity: search for that mechanism alone, stop at its first "
            "meeting) or cost:NAME (find one instance of a cost the report counts, e.g. "
            "cost:progressing_reaped), instead of every violation.",
        ),
    ] = None,
    budget_s: Annotated[float, typer.Option("--budget-s", min=0.1, max=MAX_BUDGET_S, help="Wall-clock budget.")] = 30.0,
    simulations: Annotated[
        int | None,
        typer.Option(
            "--simulations", min=1, max=MAX_SIMULATIONS, help="Stop after this many simulations (deterministic)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="The explorer's seed.")] = 0,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            max=MAX_WORKERS,
            help="Spread one guided or swarm search over N processes (deterministic with --simulations).",
        ),
    ] = 1,
    out: Annotated[Path, typer.Option("--out", help="Where counterexamples go.")] = DEFAULT_OUT,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Search SCENARIO (default: the mixed workload) for invariant violations, one per mechanism."""
    check_output_directory(out)  # before the search: what it finds must have somewhere to go
    if ranges not in RANGES:
        raise LeaselabError(f"unknown fault ranges '{ranges}'", field="--ranges", hint="valid: " + ", ".join(RANGES))
    from dataclasses import replace

    from reports.progress import meter
    from sim.explore.base import Budget
    from sim.explore.parallel import ParallelSwarmExplorer
    from sim.explore.registry import explorer_named

    wanted: frozenset[str] | None = None
    entry = None
    if target_name is not None:
        from sim.explore.costs import check_cost, is_cost
        from sim.explore.entry_target import check_entry_target

        if is_cost(target_name):
            wanted = frozenset({check_cost(target_name)})
        else:
            entry = check_entry_target(target_name)
        if explorer not in ("guided", "swarm"):
            what = f"--target applies to the guided and swarm explorers, not {explorer}"
            raise LeaselabError(what, field="--target", hint="add --explorer guided")
    target = target_from_cli(scenario, policy, flag or [], faults)
    if ranges == "deployment":
        target = replace(target, scenario_override=target.scenario.at_deployment_ranges())
    if wanted is not None:
        target = replace(target, cost=target_name or "")
    search = explorer_named(explorer)
    if workers > 1:
        if explorer not in ("guided", "swarm"):
            what = f"--workers applies to the guided and swarm explorers, not {explorer}"
            raise LeaselabError(what, field="--workers", hint="add --explorer guided")
        search = ParallelSwarmExplorer(workers, explorer)
    # one instance of a cost is what a user asks for: the search stops at the first, as for a register id
    budget = Budget(
        seconds=budget_s, simulations=simulations, seed=seed, invariants=wanted, stop_at_first=wanted is not None
    )
    if entry is not None:
        budget = entry.budget(budget)
    started = time.perf_counter()
    with meter("explore") as show:

        def searched(done: int, violations: int) -> None:
            left_s = max(0.0, budget_s - (time.perf_counter() - started))
            detail = f"{violations} mechanisms"
            show("search", done, simulations, unit="simulations", detail=detail, eta_s=None if simulations else left_s)

        try:
            report = search.explore(target, budget, searched)
        except KeyboardInterrupt:  # an explorer that cannot stop mid-search (hypothesis): nothing to keep
            typer.echo(f"interrupted: the {explorer} explorer keeps nothing mid-search; nothing written", err=True)
            raise typer.Exit(INTERRUPTED_EXIT_CODE) from None
    if entry is not None:
        from sim.explore.entry_target import outcome

        outcome(report, entry)
    write_counterexamples(report, out, ranges)
    interrupted = bool(report.extra.get("interrupted"))
    if interrupted or report.violations:  # beside the files it describes: never an interrupted run's, stale
        summary = out / "summary.json"
        document = {**report.document(), "interrupted": interrupted}
        summary.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    if json_out:
        typer.echo(json.dumps(report.document(), indent=2))
    else:
        typer.echo(first_line(report))
        for v in report.violations:
            typer.echo(violation_line(v))
    if interrupted:
        typer.echo(
            f"interrupted after {report.simulations:,} simulations: {len(report.violations)} counterexamples "
            f"(not shrunk) and summary.json written to {out}/; search on (the next seed, a stream this one "
            f"did not draw) with: {resume_command(seed)}",
            err=True,
        )
        raise typer.Exit(INTERRUPTED_EXIT_CODE)
    raise typer.Exit(1 if report.violations else 0)


def register(app: typer.Typer) -> None:
    app.command("explore")(explore)
