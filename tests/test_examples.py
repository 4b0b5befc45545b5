"""The examples a user copies first run as written and print what their golden ``.out`` files say.

Each ``examples/NN_name.py`` runs in a fresh interpreter from another directory (as a user would
run it), and its output is diffed against ``examples/NN_name.out``: one seed, one history, the same
text in any process. After an intended change, write the new output over the ``.out`` file.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.py"))


def test_there_are_three_or_four_examples_each_with_its_golden_output() -> None:
    assert 3 <= len(SCRIPTS) <= 4
    assert all(script.with_suffix(".out").is_file() for script in SCRIPTS)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_the_example_prints_its_golden_output(script: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    golden = script.with_suffix(".out").read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(golden.splitlines(True), done.stdout.splitlines(True), "golden", "now"))
    assert not diff, f"{script.name} printed something else:\n{diff}"
