"""Suite-wide pytest configuration: the Hypothesis settings profiles.

Choose one with the environment variable ``HYPOTHESIS_PROFILE`` (default ``dev``):

``dev``      50 examples; failing examples are kept in ``.hypothesis/`` (git-ignored) and replayed
``ci``       100 examples, no deadline, derandomized, no example database: the same run every time
``nightly``  2000 examples, no deadline: the heavy search (``pytest -m nightly``)

It also puts the repository root on ``sys.path``: ``tests/model`` and ``tests/leaselab`` mirror the
packages without ``__init__.py`` and pytest puts ``tests/`` on the path, where they would be imported
as namespace packages shadowing ``model`` and ``leaselab``. A regular package anywhere on the path
wins over a namespace portion, so the root just has to be there (editable install or not).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PROFILE_ENV = "HYPOTHESIS_PROFILE"
DEFAULT_PROFILE = "dev"

settings.register_profile("dev", max_examples=50)
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
