"""The report's figures leave matplotlib's backend and global settings alone (a notebook keeps its inline
backend) and still render headless: SVG and PNG through matplotlib's own canvases."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_importing_and_drawing_selects_no_backend_and_changes_no_setting() -> None:
    code = textwrap.dedent(
        """
        import sys
        import matplotlib
        before = dict(matplotlib.rcParams)
        import leaselab
        from reports import document, figures, swimlane
        result = leaselab.simulate("single_run", "head", seed=0)
        fig = swimlane.figure(result.history, title="t")
        svg = figures.to_svg(fig)
        png = fig._repr_png_()
        assert svg.startswith("<svg") and png.startswith(b"\\x89PNG")
        assert "matplotlib.pyplot" not in sys.modules, "pyplot imported"
        assert matplotlib.rcParams["backend"] == "svg", matplotlib.rcParams["backend"]
        changed = {k for k, v in matplotlib.rcParams.items() if before.get(k) != v}
        assert not changed, changed
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"MPLBACKEND": "svg", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
