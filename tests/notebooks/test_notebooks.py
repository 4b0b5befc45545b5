"""Every notebook under notebooks/ executes top to bottom without an error and shows its pictures.

A code cell tagged ``swimlane``, ``curve`` or ``forest`` must display a figure (``image/png`` or
``image/svg+xml`` data: what Jupyter draws inline), and every notebook shows at least one swim lane
and one curve. A figure that prints as ``<Figure size ...>`` text, or shows nothing because a module
replaced the inline backend, fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
FIGURE_TAGS = ("swimlane", "curve", "forest")
IMAGE_TYPES = ("image/png", "image/svg+xml")


def test_there_is_at_least_one_notebook() -> None:
    assert NOTEBOOKS


def _images(cell: Any) -> list[str]:
    return [kind for o in cell.get("outputs", []) for kind in o.get("data", {}) if kind in IMAGE_TYPES]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_notebook_executes_and_shows_its_figures(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    outputs = [o for cell in code for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert outputs
    tagged = {tag: [c for c in code if tag in c.metadata.get("tags", [])] for tag in FIGURE_TAGS}
    assert tagged["swimlane"] and tagged["curve"], "every notebook shows a swim lane and a curve"
    for tag, cells in tagged.items():
        for cell in cells:
            assert _images(cell), f"a {tag} cell shows no image: {cell.source.splitlines()[-1]!r}"
    untagged = [c for c in code if _images(c) and not set(c.metadata.get("tags", [])) & set(FIGURE_TAGS)]
    assert not untagged, "a cell shows a figure without saying which (tag it)"
    texts = [str(o.get("data", {}).get("text/plain", "")) for o in outputs if not _images_of(o)]
    assert not [t for t in texts if t.startswith("<Figure size")], "a figure printed as text"


def _images_of(output: Any) -> bool:
    return any(kind in output.get("data", {}) for kind in IMAGE_TYPES)


def test_make_notebooks_executes_them_with_what_make_test_installs() -> None:
    """``make notebooks`` runs nbclient's ``jupyter-execute`` from the venv ``make test`` builds (nbclient
    is a dev dependency, so the command is there), on every notebook, into notebooks/out/."""
    import re
    import sys

    root = Path(__file__).resolve().parents[2]
    makefile = (root / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^notebooks: \$\(STAMP\)\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert target, "no notebooks target depending on the install stamp"
    recipe = target.group(1)
    assert "$(BIN)/jupyter-execute" in recipe and "notebooks/*.ipynb" in recipe and "out/" in recipe
    assert (Path(sys.executable).parent / "jupyter-execute").exists()
    assert "`make notebooks`" in (root / "README.md").read_text(encoding="utf-8")
