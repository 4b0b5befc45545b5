"""Render a report context (:mod:`reports.sections`) to ``index.html``, ``report.md`` and ``report.json``.

HTML: one self-contained page (inline CSS, figures as inline SVG, no script, no network),
rendered by jinja2 with autoescape on, so a scenario or tool named ``<script>`` shows as
text. Markdown: the same sections, figures as PNG files under ``figures/`` (Markdown
viewers rarely show inline SVG), every interpolated value HTML-escaped too, because most
Markdown viewers render raw HTML. JSON: every number of the report, for tests and tools.

Knows the context's shape and the figure functions; never runs a simulation.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, as_completed
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
from markupsafe import Markup, escape

from checks.history import Op
from reports import causality, figures, swimlane, wording
from reports.lanes import only_runs
from reports.sections import CounterexampleView, FindingView, Provenance, VerifyView, build, public
from reports.stats import DASH, percent
from reports.timeline import render as timeline_lines
from reports.wording import fault_text

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _environment(markdown: bool = False) -> jinja2.Environment:
    """HTML: jinja2's autoescape. Markdown: every value passes through :func:`_md_text` instead
    (``<``, ``>`` and ``&`` escaped, quotes kept readable), unless a filter marked it safe."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=not markdown,
        finalize=_md_text if markdown else None,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["pct"] = lambda v: DASH if v is None or (isinstance(v, float) and math.isnan(v)) else percent(v)
    env.filters["md"] = _md_cell
    env.filters["ci"] = lambda lower, upper: f"{percent(lower).rstrip('%')}{DASH}{percent(upper)}"
    env.filters["label"] = _breakable
    env.filters["fault"] = fault_text
    env.filters["per_simulation"] = per_simulation
    env.filters["phases"] = phases_text
    env.filters["n"] = lambda v: f"{v:,}" if isinstance(v, numbers.Integral) and not isinstance(v, bool) else v
    env.filters["fence"] = lambda text: Markup(str(text).replace("```", "` ` `"))
    return env


def per_simulation(provenance: Mapping[str, Any]) -> str:
    """The run's wall time per simulation ('2.61 ms per simulation'): what a reader compares across
    machines and seed counts (the whole run's wall time over its simulations, evidence included)."""
    simulations = int(provenance.get("simulations") or 0)
    if not simulations:
        return "no simulations"
    return f"{1000.0 * float(provenance['wall_s']) / simulations:.2f} ms per simulation"


def phases_text(phases: Mapping[str, float]) -> str:
    """'sweep 158 s · evidence 15 s · figures 9 s' (wall seconds per phase, in the order they ran)."""
    return " · ".join(f"{name} {seconds:.0f} s" for name, seconds in phases.items())


def _breakable(label: Any) -> Markup:
    """A policy label for a table heading, breakable before '+' so a flagged policy's column stays narrow."""
    return Markup(str(escape(str(label))).replace("+", "<wbr>+"))


def _md_text(value: Any) -> Any:
    """A value interpolated into Markdown: raw HTML neutralised (most viewers render it)."""
    if isinstance(value, Markup):
        return value
    return Markup(str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def _md_cell(value: Any) -> Markup:
    """A value for a Markdown table cell: raw HTML neutralised, pipes and newlines too."""
    return Markup(str(_md_text(value)).replace("|", "\\|").replace("\n", " "))


def add_figures(
    context: dict[str, Any],
    histories: Mapping[int, Sequence[Op]],
    out_dir: Path,
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Path]:
    """Draw every figure into the context (``svg`` keys) and as PNG files under ``out_dir/figures``;
    ``progress(done, total)`` is told as each figure is drawn.

    ``histories`` maps a counterexample's position in ``context['counterexamples']`` to its
    replayed history. Returns the PNG paths by figure name. With ``executor`` (a local process pool)
    the figures are drawn in its processes: drawing is the report's one long serial step (about a
    third of a second per figure, some thirty figures), and each figure is a pure function of its table.
    """
    jobs: list[tuple[dict[str, Any], str, str, tuple[Any, ...]]] = []
    policies = context["summary"]["policies"] or [v["policy"] for v in context["verdicts"]]
    for i, comparison in enumerate(context["decisions"]):
        title = f"{comparison['before']} → {comparison['after']}"
        jobs.append((comparison, f"decision-{i + 1}", "forest", (comparison["_table"], title)))
    for i, comparison in enumerate(context["proposals"]):
        title = f"{comparison['before']} → {comparison['after']}"
        jobs.append((comparison, f"proposal-{i + 1}", "forest", (comparison["_table"], title)))
    labels = {
        "intensity": "fault intensity (x the scenario's fault probabilities)",
        "latency": "tool latency / lease length",
    }
    for key, curve in context["curves"].items():
        if curve["points"]:
            order = [p for p in (*policies, *curve["cells"]) if p in curve["cells"]]
            order = list(dict.fromkeys(order))
            jobs.append((curve, f"curve-{key}", "curve", (curve["_table"], curve["x"], labels[key], order)))
        mine = curve.get("by_invariant") or {}
        if mine.get("drawn"):
            ylabel = f"simulations of {mine['policy']} violating it (%)"
            spec = (mine["_table"], curve["x"], labels[key], mine["drawn"], ylabel)
            jobs.append((mine, f"curve-{key}-by-invariant", "curve", spec))
    hits = context["coverage"]["_hits"]
    if not hits.empty:
        jobs.append((context["coverage"], "fault-heatmap", "heatmap", (hits,)))
    for i, cx in enumerate(context["counterexamples"]):
        history = histories.get(i)
        if history is None:
            continue
        mechanism = str(cx.get("mechanism", ""))
        named = str(cx.get("named", mechanism))
        title = f"{cx['invariant']} under {cx['policy']}{' (' + named + ')' if named else ''}: "
        title += f"{cx['scenario']} seed {cx['seed']}"
        if "deployment ranges" in str(cx.get("role", "")):
            title += " (deployment fault ranges)"
        shown = cx["causality"] if cx.get("causality") else None
        jobs.append((cx, f"counterexample-{i + 1}", "swimlane", (list(history), title, lane_markers(cx), shown)))
    figure_dir = out_dir / "figures"
    args = [(kind, spec, figure_dir / f"{name}.png") for _, name, kind, spec in jobs]
    tell = progress or (lambda done, total: None)
    tell(0, len(args))
    if executor is None:
        drawn = []
        for a in args:
            drawn.append(draw_figure(*a))
            tell(len(drawn), len(args))
    else:
        futures = [executor.submit(draw_figure, *a) for a in args]
        for done, _ in enumerate(as_completed(futures), start=1):
            tell(done, len(args))
        drawn = [future.result() for future in futures]
    pngs: dict[str, Path] = {}
    for (target, name, _, _), svg in zip(jobs, drawn, strict=True):
        pngs[name] = figure_dir / f"{name}.png"
        target["svg"] = svg
        target["png"] = f"figures/{name}.png"
    return pngs


_FIGURES: dict[str, Callable[..., Any]] = {
    "forest": figures.forest_figure,
    "curve": figures.curve_figure,
    "heatmap": figures.heatmap_figure,
    "swimlane": lambda history, title, markers, shown: swimlane.figure(
        history, title=title, markers=markers, under=causality.panel(shown) if shown is not None else None
    ),
}


def draw_figure(kind: str, spec: tuple[Any, ...], png: Path) -> str:
    """One figure: drawn from its table (``spec``), written as PNG to ``png``, returned as inline SVG.
    A top-level function of plain arguments, so a process pool can run it."""
    fig = _FIGURES[kind](*spec)
    figures.save_png(fig, png)
    return figures.to_svg(fig, prefix=png.stem)


def lane_markers(cx: Mapping[str, Any]) -> list[swimlane.LaneMarker]:
    """What a counterexample's lanes mark beyond the history: its witness records (the last one, the
    violating event, named with the invariant), the records its explanation cites, by number, and any
    ``markers`` the evidence adds as plain dicts (the fields of :class:`reports.lanes.LaneMarker`)."""
    cited = wording.cited_records(str(cx.get("explanation", "")))
    extra = [swimlane.LaneMarker(**m) for m in cx.get("markers", ())]
    return [*swimlane.witness_markers(tuple(cx.get("witness", ())), str(cx["invariant"]), cited), *extra]


def render_html(context: Mapping[str, Any]) -> str:
    return _environment().get_template("index.html.j2").render(**context)


def render_markdown(context: Mapping[str, Any]) -> str:
    return _environment(markdown=True).get_template("report.md.j2").render(**context)


def write(
    context: dict[str, Any],
    histories: Mapping[int, Sequence[Op]],
    out_dir: Path,
    before_render: Callable[[dict[str, Any]], None] | None = None,
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Path]:
    """Write index.html, report.md, report.json and figures/ into ``out_dir``; return their paths.

    ``before_render`` may amend the context once the figures are drawn (e.g. the wall time);
    ``executor`` draws the figures in parallel (see :func:`add_figures`)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    add_figures(context, histories, out_dir, executor, progress)
    if before_render is not None:
        before_render(context)
    paths = {
        "html": out_dir / "index.html",
        "markdown": out_dir / "report.md",
        "json": out_dir / "report.json",
    }
    _write(paths["html"], render_html(context))
    _write(paths["markdown"], render_markdown(context))
    _write(paths["json"], json.dumps(public(context), indent=1, sort_keys=True, default=str) + "\n")
    return paths


def _write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _with_causality_views(
    counterexamples: Sequence[Mapping[str, Any]], histories: Mapping[int, Sequence[Op]]
) -> list[Mapping[str, Any]]:
    """Each measured curve as its reader's view (intervals, named records), against the full history, and
    its decisive moments as lane markers (so the lanes ring them where the curve marks them)."""
    shown: list[Mapping[str, Any]] = []
    for i, cx in enumerate(counterexamples):
        if not cx.get("causality"):
            shown.append(cx)
            continue
        curve = causality.view(cx["causality"], histories.get(i))
        markers = [*cx.get("markers", ()), *causality.moment_markers(curve)]
        shown.append({**cx, "causality": curve, "markers": markers})
    return shown


def write_review(
    frame: pd.DataFrame,
    *,
    policies: Sequence[str],
    counterexamples: Sequence[Mapping[str, Any]],
    histories: Mapping[int, Sequence[Op]],
    verification: Sequence[Mapping[str, Any]],
    findings: Sequence[Mapping[str, Any]],
    provenance: Mapping[str, Any],
    out_dir: Path,
    wall_clock: Callable[[], float] | None = None,
    explanations: Sequence[Mapping[str, Any]] = (),
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
    conformance: Mapping[str, Any] | None = None,
) -> dict[str, Path]:
    """The whole report from rows and plain evidence records (the keys of this package's views);
    ``wall_clock()`` gives the run's wall time once the figures are drawn; ``progress(done, total)``
    counts the figures drawn."""
    views = [
        CounterexampleView(
            **{
                **cx,
                "faults": tuple(cx["faults"]),
                "runs": tuple(cx.get("runs", ())),
                "witness": tuple(cx.get("witness", ())),
                "markers": tuple(cx.get("markers", ())),
            },
            timeline=tuple(timeline_lines(histories[i], runs=set(cx["runs"]) or None)) if i in histories else (),
            explanation_text=wording.annotate(
                str(cx.get("explanation", "")),
                {op.index: op.time_s for op in histories.get(i, ())},
                cx.get("witness", ()),
            ),
        )
        for i, cx in enumerate(_with_causality_views(counterexamples, histories))
    ]
    histories = {i: only_runs(h, counterexamples[i].get("runs", ())) for i, h in histories.items()}
    context = build(
        frame,
        policies=policies,
        counterexamples=views,
        verification=[
            VerifyView(**{**v, "violated": tuple(v["violated"]), "violations": tuple(v.get("violations", ()))})
            for v in verification
        ],
        findings=[FindingView(**f) for f in findings],
        provenance=Provenance(**provenance),
        explanations=explanations,
        conformance=conformance,
    )

    def stamp(ctx: dict[str, Any]) -> None:
        if wall_clock is not None:
            made = ctx["provenance"]
            made["wall_s"] = wall_clock()
            if made["phases_s"]:
                made["phases_s"] = {**made["phases_s"], "figures": made["wall_s"] - sum(made["phases_s"].values())}

    return write(context, histories, out_dir, before_render=stamp, executor=executor, progress=progress)
