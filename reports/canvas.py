"""The report's matplotlib figures, built without pyplot: no backend is chosen, none is replaced.

Every figure of :mod:`reports` is a :class:`ReportFigure` (a ``matplotlib.figure.Figure`` made
directly, never through ``pyplot``), so importing ``reports`` leaves the caller's backend alone: a
notebook keeps its inline backend, and a figure returned by a cell shows itself there through
``_repr_png_``. The report renders headless by its own choice: SVG and PNG are written through
matplotlib's own canvases (``savefig`` picks the SVG or Agg canvas by format), which need no display.
The report's look (:data:`STYLE`) is applied with ``rc_context`` while a figure is built and saved,
never written into the global ``rcParams``, and figures are not registered with pyplot, so nothing
needs closing and nothing accumulates.

Knows matplotlib only; nothing of the report's data.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec

import matplotlib
from matplotlib.figure import Figure
from matplotlib.typing import RcKeyType

STYLE: dict[RcKeyType, Any] = {
    "svg.hashsalt": "leaselab",
    "svg.fonttype": "none",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
"""The report's rcParams: deterministic SVG (fixed hash salt, text kept as text) and a quiet frame."""
PNG_DPI = 110

P = ParamSpec("P")


class ReportFigure(Figure):
    """A figure that draws itself as PNG where IPython displays it (a notebook cell's value)."""

    def _repr_png_(self) -> bytes:
        return png_bytes(self)


def styled(build: Callable[P, ReportFigure]) -> Callable[P, ReportFigure]:
    """Run a figure builder under :data:`STYLE` (rcParams are read as artists are made)."""

    @functools.wraps(build)
    def run(*args: P.args, **kwargs: P.kwargs) -> ReportFigure:
        with matplotlib.rc_context(STYLE):
            return build(*args, **kwargs)

    return run


def new_figure(width_in: float, height_in: float) -> ReportFigure:
    """An empty figure of this size (inches), outside pyplot."""
    return ReportFigure(figsize=(width_in, height_in))


def to_svg(fig: Figure, prefix: str = "") -> str:
    """The figure as an inline ``<svg>`` element (no XML prologue, no date); with ``prefix``, its ids
    scoped by it (:func:`scoped_ids`), so that many figures inline in one page keep every id unique."""
    buffer = io.StringIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    svg = text[text.index("<svg") :]
    return scoped_ids(svg, prefix) if prefix else svg


_ID = re.compile(r'\bid="([^"]+)"')
_URL = re.compile(r"url\(#([^)]+)\)")
_HREF = re.compile(r'(href=")#([^"]+)"')


def scoped_ids(svg: str, prefix: str) -> str:
    """Every ``id`` of ``svg`` and every reference to one (``url(#id)``, ``href="#id"``) prefixed with
    ``prefix-``: matplotlib numbers its ids per figure (``patch_1``, ``axes_1``, glyph and clip-path ids),
    and a page holding two figures would hold the same id twice (invalid HTML; a reference could resolve
    into the wrong figure)."""
    own = set(_ID.findall(svg))

    def scoped(name: str) -> str:
        return f"{prefix}-{name}" if name in own else name

    svg = _ID.sub(lambda m: f'id="{scoped(m.group(1))}"', svg)
    svg = _URL.sub(lambda m: f"url(#{scoped(m.group(1))})", svg)
    return _HREF.sub(lambda m: f'{m.group(1)}#{scoped(m.group(2))}"', svg)


def png_bytes(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(buffer, format="png", dpi=PNG_DPI, bbox_inches="tight")
    return buffer.getvalue()


def save_png(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png_bytes(fig))
    return path


def strip_ids(svg: str) -> str:
    """An SVG with its clip-path ids removed (for comparing two renderings)."""
    return re.sub(r'id="[^"]*"', "", svg)
