"""Suite-wide pytest configuration: the Hypothesis settings profiles.

Choose one with the environment variable ``HYPOTHESIS_PROFILE`` (default ``dev``):

``dev``      50 examples, no deadline; failing examples are kept in ``.hypothesis/`` (git-ignored) and
             replayed
``ci``       100 examples, no deadline, derandomized, no example database: the same run every time
``nightly``  2000 examples, no deadline: the heavy search (``pytest -m nightly``)

The fixture ``refused`` runs a ``leaselab`` command in process and asserts the bad-input contract
(exit 2, one line under 200 characters naming the file, no traceback, nothing on stdout); the
hand-written cases (``tests/leaselab/test_cli_bad_input.py``) and the malformed-input property test
(``tests/properties/test_malformed_inputs.py``) share it.

It also puts the repository root on ``sys.path``: ``tests/model`` and ``tests/leaselab`` mirror the
packages without ``__init__.py`` and pytest puts ``tests/`` on the path, where they would be imported
as namespace packages shadowing ``model`` and ``leaselab``. A regular package anywhere on the path
wins over a namespace portion, so the root just has to be there (editable install or not).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# No profile has a deadline: a per-example deadline is a timed assertion, and on a shared machine a
# simulation that takes 200 ms under load fails a property that holds. Speed is the benchmarks' job.

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PROFILE_ENV = "HYPOTHESIS_PROFILE"
DEFAULT_PROFILE = "dev"

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("ci", max_examples=100, deadline=None, derandomize=True, database=None)
settings.register_profile("nightly", max_examples=2000, deadline=None)

PROFILES = ("dev", "ci", "nightly")


def pytest_configure(config: pytest.Config) -> None:
    name = os.environ.get(PROFILE_ENV, DEFAULT_PROFILE)
    if name not in PROFILES:
        raise pytest.UsageError(
            f"{PROFILE_ENV}={name!r} is not a Hypothesis profile of this suite; use one of: {', '.join(PROFILES)}"
        )
    settings.load_profile(name)


MAX_LINE_CHARS = 199


def assert_refused(result: Any, *, names: str) -> str:
    """The contract for bad input: exit 2, exactly one line on stderr, under 200 characters, starting
    ``leaselab: <names>`` (or ``leaselab: ...`` and at least the last 30 characters of ``names``, where
    a long path kept its end), no traceback, nothing on stdout. Returns the line."""
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == "", result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line: str = lines[0]
    assert len(line) <= MAX_LINE_CHARS, (len(line), line)
    if not line.startswith(f"leaselab: {names}"):  # a long path keeps its end: "leaselab: ...t/in.toml: "
        shown = line.removeprefix("leaselab: ...")
        assert shown != line and any(shown.startswith(names[i:]) for i in range(1, len(names) - 30)), line
    assert "Traceback" not in result.stderr
    return line


@pytest.fixture(scope="session")
def refused() -> Callable[..., str]:
    """``refused(*args, names=...)``: run ``leaselab *args`` and assert the bad-input contract
    (:func:`assert_refused`); returns the one line for the test's own checks."""
    from typer.testing import CliRunner

    from leaselab.cli import app

    runner = CliRunner()

    def run(*args: str, names: str) -> str:
        return assert_refused(runner.invoke(app, list(args)), names=names)

    return run
