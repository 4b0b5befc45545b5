"""``leaselab verify SCENARIO --bound K``: the exhaustive explorer.

Says "no violation up to bound K", or prints each distinct mechanism met (a registered finding, a
recorded non-guarantee or an unexplained witness shape, named "known: F-06", "non-guarantee: NG-..."
or "unexplained") once, with the seconds and schedules (one simulation each) until first met and its
smallest schedule (the search goes level by level: a mechanism's first schedule has the fewest faults),
and writes it as a counterexample file under --out (default ``out/verify``, apart from the report's
directory) named by scenario, policy (with its flag overrides), invariant and mechanism, so verifying
a second scenario, policy or flag variant never overwrites the first's files. Its JSON says
``mechanism`` per violation. Progress per level
(schedules run of the level's total, rate, ETA) goes to stderr. Exit 1 on a violation, known ones
included (the first line says how many the register explains), 0 when none, 2 on bad input.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated

import typer

from leaselab.options import target_from_cli
from scenarios.limits import MAX_SEED, MAX_SIMULATIONS
from scenarios.user_files import check_output_directory

DEFAULT_OUT = Path("out/verify")


def verify(
    scenario: Annotated[str, typer.Argument(help="A small scenario file or library name.")],
    policy: Annotated[str, typer.Option("--policy", help="A preset.")] = "head",
    bound: Annotated[int, typer.Option("--bound", min=0, max=4, help="Faults (and tie reversals) per schedule.")] = 1,
    flag: Annotated[list[str] | None, typer.Option("--flag", help="NAME=VALUE, repeatable.")] = None,
    faults: Annotated[str, typer.Option("--faults", help="F1,F2 or all.")] = "all",
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="The world's seed (latencies).")] = 0,
    max_schedules: Annotated[
        int | None, typer.Option("--max-schedules", min=1, max=MAX_SIMULATIONS, help="Stop after this many.")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Where counterexamples go.")] = DEFAULT_OUT,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Enumerate every placement of up to K faults over every request boundary of SCENARIO."""
    check_output_directory(out)  # before the search: what it finds must have somewhere to go
    from leaselab.cx_names import policy_tag
    from reports.progress import meter
    from sim.explore.counterexample import write
    from sim.explore.exhaustive import ExhaustiveExplorer

    target = target_from_cli(scenario, policy, flag or [], faults)
    with meter("verify") as show:

        def level_done(level: int, levels: int, done: int, total: int) -> None:
            if level:  # level 0 is the one fault-free run
                show(f"level {level}/{levels}", done, total, unit="schedules")

        explorer = ExhaustiveExplorer(seed=seed, max_schedules=max_schedules, mechanisms=True)
        report = explorer.verify(target, bound, level_done)
    stem = Path(target.scenario_ref).stem
    named = policy_tag(policy, target.flags)  # a --flag variant never overwrites the plain policy's file
    paths = {
        key: write(cx, out / f"verify-{stem}-{named}-{cx.invariant}-{_tag(cx.mechanism)}.toml")
        for key, cx in report.mechanisms
    }
    known = sum(1 for _, cx in report.mechanisms if _known(cx.mechanism))
    if json_out:
        doc = report.document()
        for entry, (key, cx) in zip(doc.get("mechanisms", []), report.mechanisms, strict=True):
            entry["counterexample"] = str(paths[key])
            entry["explained"] = bool(_known(cx.mechanism))
        doc["violations"] = doc.pop("mechanisms", [])
        typer.echo(json.dumps(doc, indent=2))
    else:
        line = f"{report.schedules} schedules in {report.elapsed_s:.1f} s: {report.sentence()}"
        if report.mechanisms:
            line += (
                f"; {len(report.mechanisms)} distinct mechanisms, {known} known to the register, "
                f"{len(report.mechanisms) - known} unexplained (exit 1: a known violation is still a violation)"
            )
        typer.echo(line)
        for key, cx in report.mechanisms:
            ties = f" + reversed ties {list(cx.ties)}" if cx.ties else ""
            label = _known(cx.mechanism) or f"unexplained [{cx.mechanism.removeprefix('unexplained: ')[:120]}]"
            seconds, schedules = report.mechanism_found[key]
            typer.echo(
                f"  {label}: {cx.invariant}: first met after {seconds:.2f} s / {schedules:,} schedules: "
                f"{[f.text() for f in cx.faults]}{ties} -> {paths[key]}"
            )
    raise typer.Exit(1 if report.violations else 0)


def _known(mechanism: str) -> str:
    """'known: F-06' or 'non-guarantee: NG-...' for a mechanism the register explains, else ''."""
    if not mechanism or mechanism.startswith("unexplained"):
        return ""
    return ("non-guarantee: " if mechanism.startswith("NG-") else "known: ") + mechanism


def _tag(mechanism: str) -> str:
    if _known(mechanism):
        return mechanism
    return hashlib.blake2b(mechanism.encode(), digest_size=3).hexdigest()


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
