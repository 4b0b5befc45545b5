"""``leaselab replay FILE``: reproduce a counterexample exactly.

Exit 1 when the violation reproduces, 3 when the history digest differs
(nondeterminism), 0 when the same history no longer violates the invariant (the
checkers changed), 2 on a bad file. ``--causality`` then measures when the reproduced
history was doomed (``sim.explore.causality``) and prints the curve.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from sim.explore.counterexample import Counterexample
    from sim.world.simulate import SimulationResult

NONDETERMINISM_EXIT = 3


def replay(
    file: Annotated[Path, typer.Argument(help="A counterexample file.")],
    timeline: Annotated[bool, typer.Option("--timeline", help="Print one line per event.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    causality: Annotated[
        bool,
        typer.Option(
            "--causality",
            help="Then measure when it was doomed: P(same violation | history up to t), 16-93 fresh "
            "continuations per point, until its 95% interval is within 10 points (about 0.2-3 CPU s; progress "
            "on stderr).",
        ),
    ] = False,
) -> None:
    """Replay FILE and check that it reproduces the same history and violation."""
    from leaselab.results import explained_by, label, result_document, verdict_lines
    from reports import causality as causality_view
    from reports.timeline import render
    from sim.explore.counterexample import NONDETERMINISM_CAUSES, read

    cx = read(file)
    result = cx.run()
    same = result.digest == cx.digest
    reproduced = same and cx.invariant in result.violations
    measured = _causality(cx) if causality and reproduced else None
    why = explained_by(result)
    if json_out:
        doc = result_document(result, policy_name=cx.policy, flags=cx.flags, why=why)
        doc.update(
            {
                "counterexample": str(file),
                "invariant": cx.invariant,
                "expected_digest": cx.digest,
                "reproduced": reproduced,
                "faults": [f.text() for f in cx.faults],
            }
        )
        if timeline:
            doc["timeline"] = render(result.history)
        if measured is not None:
            doc["causality"] = causality_view.view(measured, result.history)
        typer.echo(json.dumps(doc, indent=2))
    else:
        if timeline:
            for line in render(result.history):
                typer.echo(line)
        for line in verdict_lines(result, why):
            typer.echo(line)
        if measured is not None:
            for line in causality_view.lines(measured, result.history):
                typer.echo(line)
    if not same:
        typer.echo(
            f"leaselab: {file}: replay diverged: digest {result.digest}, expected {cx.digest}. "
            f"Usual causes: {NONDETERMINISM_CAUSES}.",
            err=True,
        )
        raise typer.Exit(NONDETERMINISM_EXIT)
    if not reproduced:
        typer.echo(f"{file}: same history, but {cx.invariant} now holds (the checker changed)", err=json_out)
        raise typer.Exit(0)
    # With --json, stdout holds the document alone (its "reproduced" says the same); the line goes to stderr.
    known = label(why.get(cx.invariant, ""), cx.invariant)
    what = f"an instance of {cx.invariant}" if cx.invariant.startswith("cost:") else f"{cx.invariant} violated"
    typer.echo(
        f"reproduced: {what} [{known}], digest {result.digest}{_mechanism_note(cx, result)}",
        err=json_out,
    )
    raise typer.Exit(1)


def _mechanism_note(cx: Counterexample, result: SimulationResult) -> str:
    """'; mechanism F-18 (as recorded)', or what it is now when the register changed since the file was
    written (a recogniser added or narrowed); '' for a file that records none."""
    if not cx.mechanism or cx.invariant.startswith("cost:"):  # a cost's mechanism is the cost itself
        return ""
    from register.mechanism import mechanism_of

    now = mechanism_of(cx.invariant, result.indexed(), result.verdicts[cx.invariant]).label()
    if now == cx.mechanism:
        return f"; mechanism {cx.mechanism[:160]} (as recorded)"
    return f"; mechanism now {now[:160]}, recorded {cx.mechanism[:160]}"


def _causality(cx: Counterexample) -> dict[str, object]:
    """The curve of ``cx``, its progress on stderr through the shared meter (``reports.progress``:
    a bar on a terminal, a plain line every few seconds otherwise)."""
    from reports.progress import meter
    from sim.explore.causality import curve

    with meter("replay") as show:
        return curve(cx, progress=lambda done, total: show("causality", done, total, unit="points")).document()


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)
