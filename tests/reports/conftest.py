"""A small review, run once per test session: two scenarios (one named ``<script>alert(1)</script>``,
with a tool of that name), three policies, every section's grid (a deployment-range grid of head
included), a few seeds."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from leaselab.cmd_report import render
from sim.review.review import ReviewOptions, run_review
from sim.sweep.config import load_config

ROOT = Path(__file__).resolve().parents[2]
XSS = "<script>alert(1)</script>"
CURVE_BUDGET = 100_000
"""The small review's causality time box (world requests per curve): a few points each, about 1 CPU s."""


def small_config(where: Path) -> Path:
    source = (ROOT / "scenarios" / "library" / "tool_outlives_lease.toml").read_text(encoding="utf-8")
    hostile = source.replace('"tool_outlives_lease"', json.dumps(XSS)).replace(
        '"update_page_metadata"', json.dumps(XSS)
    )
    (where / "hostile.toml").write_text(hostile, encoding="utf-8")
    config = where / "small.toml"
    config.write_text(
        """
name = "small-review"
seeds = 4
seeds_per_task = 4

[[policy]]
label = "adr-111"
preset = "adr-111"
[[policy]]
label = "head"
preset = "head"
[[policy]]
label = "head+idempotency_keys"
preset = "head"
flags = { idempotency_keys = true }

[[grid]]
name = "main"
scenarios = ["worker_crash_mid_write", "hostile.toml"]
intensities = [0.5, 2.0]

[[grid]]
name = "intensity"
scenarios = ["tool_outlives_lease"]
intensities = [0.0, 0.5, 1.0, 2.0, 4.0]

[[grid]]
name = "latency"
scenarios = ["tool_outlives_lease"]
latency_ratios = [0.25, 0.5, 1.0, 2.0, 3.0]

[[grid]]
name = "deployment"
scenarios = ["tool_outlives_lease", "default"]
fault_ranges = "deployment"
intensities = [2.0]
policies = ["head"]
""",
        encoding="utf-8",
    )
    return config


class Written:
    """A run of the small review and the paths of what it wrote."""

    def __init__(self, paths: dict[str, Path], frame: pd.DataFrame) -> None:
        self.paths = paths
        self.frame = frame


ReviewResult = Written


def review(where: Path, out: Path | None = None, figures_in_pool: bool = True) -> Written:
    """Run the small review; ``out`` defaults to ``where/out`` (the config is written to ``where``).
    Figures are drawn in the pool, as ``leaselab report`` draws them, unless ``figures_in_pool`` is off."""
    options = ReviewOptions(
        out=out or where / "out",
        workers=2,
        verify_scenarios=("single_run",),
        shrink_tests=40,
        command="test",
        causality_budget_requests=CURVE_BUDGET,
    )
    config = where / "small.toml"
    with ProcessPoolExecutor(max_workers=2) as pool:
        done = run_review(load_config(config if config.exists() else small_config(where)), options, pool)
        return Written(render(done, pool if figures_in_pool else None), done.frame)


@pytest.fixture(scope="session")
def run_small_review() -> Callable[[Path, Path | None, bool], ReviewResult]:
    """The small review as a function, to run it again."""
    return review


@pytest.fixture(scope="session")
def small_review(tmp_path_factory: pytest.TempPathFactory) -> ReviewResult:
    return review(tmp_path_factory.mktemp("review"))


@pytest.fixture(scope="session")
def report_json(small_review: ReviewResult) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(small_review.paths["json"].read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="session")
def rows(small_review: ReviewResult) -> pd.DataFrame:
    """The rows straight from the shards, independently of the report's own loading."""
    shards = sorted((small_review.paths["html"].parent / "shards").glob("*.parquet"))
    return pd.concat([pd.read_parquet(p) for p in shards], ignore_index=True)
