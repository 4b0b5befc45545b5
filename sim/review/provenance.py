"""Where a review's numbers came from: the commit, package versions and configuration.

The report's provenance section is built here, and so is the guard that keeps the shards of an
interrupted ``leaselab report`` only when the same code and configuration made them (a shard's
name says which cell it holds, not which code computed it). Knows git, the sweep directory's
version list and the configuration; nothing of the evidence.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.sweep.config import SweepConfig
from sim.sweep.directory import versions
from sim.sweep.ledger import LEDGER
from sim.sweep.toml_out import dumps as toml_dumps

if TYPE_CHECKING:
    from sim.review.review import ReviewOptions

STAMP = "review-stamp.json"


def fresh_shards(shard_dir: Path, config: SweepConfig) -> str:
    """Keep the shards of an interrupted run only when they came from the same code and configuration;
    return what was deleted and why ('' when nothing was), for the command to say before it recomputes.

    Shard names identify a cell, not the code that computed it: after a change of commit (or with
    uncommitted changes) old shards could silently stand for new code, so they are deleted first. That
    costs the minutes they took, so it is said, with the reason, instead of passing as a slow resume.
    """
    commit = git_commit()
    stamp = json.dumps(
        {"commit": commit, "config": config.fingerprint(), "versions": versions(VERSIONED)}, sort_keys=True
    )
    path = shard_dir / STAMP
    reusable = reusable_commit(commit)
    earlier = path.read_text(encoding="utf-8") if path.exists() else ""
    if earlier and reusable and earlier == stamp:
        return ""
    old = sorted(shard_dir.glob("*.parquet")) if shard_dir.exists() else []
    for shard in old:
        shard.unlink()
    if shard_dir.exists():
        (shard_dir / LEDGER).unlink(missing_ok=True)
    shard_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(stamp, encoding="utf-8")
    return f"{shard_dir}: {len(old):,} shards of an earlier run deleted, {_why(earlier, stamp)}" if old else ""


def reusable_commit(commit: str) -> bool:
    """Whether shards computed at ``commit`` may be reused: not with uncommitted changes, nor outside git."""
    return not commit.endswith("+dirty") and commit != "unknown"


def _why(earlier: str, now: str) -> str:
    """Why the shards of ``earlier``'s stamp cannot stand for ``now``'s, in a few words."""
    try:
        was = json.loads(earlier) if earlier else {}
    except ValueError:
        was = {}
    made = json.loads(now)
    if not reusable_commit(made["commit"]):
        return "as the code has uncommitted changes: shards are reused only at the same clean commit"
    if was.get("commit") != made["commit"]:
        return f"computed by commit {str(was.get('commit', 'unknown'))[:12]}, now {made['commit'][:12]}"
    if was.get("config") != made["config"]:
        return "computed for another configuration or --seeds"
    return "computed under other package versions"


VERSIONED = ("leaselab", "simpy", "pandas", "numpy", "pyarrow", "matplotlib", "jinja2", "pydantic", "hypothesis")
"""The packages whose versions the report records (a sweep directory records fewer)."""


def git_commit(where: Path | None = None) -> str:
    """The checkout's commit ('+dirty' when it has uncommitted changes), or 'unknown' outside git."""
    cwd = where or Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def config_toml(config: SweepConfig) -> str:
    """The effective configuration as TOML (after ``--seeds``), as the report records it."""
    return toml_dumps(config.model_dump(mode="json"), drop_empty=True)


def provenance(
    config: SweepConfig,
    options: ReviewOptions,
    simulations: int,
    wall_s: float,
    examined: int,
    curves: Sequence[Mapping[str, Any] | None] = (),
    phases_s: dict[str, float] | None = None,
) -> dict[str, Any]:
    """``phases_s``: wall seconds of the review's phases so far ('sweep': simulating and reading the
    shards; 'evidence': shrinking, recognising, verifying); the report adds its own when it is drawn."""
    measured = [c for c in curves if c is not None]
    return {
        "name": config.name,
        "versions": versions(VERSIONED),
        "commit": git_commit(),
        "config_toml": config_toml(config),
        "seeds": config.seeds,
        "simulations": simulations,
        "wall_s": wall_s,
        "phases_s": dict(phases_s or {}),
        "cores": os.cpu_count() or 1,
        "workers": options.workers,
        "command": options.command,
        "examined": examined,
        "extra": {
            "exhaustive bound": str(options.verify_bound),
            "shrink budget": f"{options.shrink_tests} simulations",
            "causality curves": (
                f"{len(measured)} curves, {sum(c['simulations'] for c in measured):,} simulations "
                f"({_draws_per_point(measured)} per point), time box "
                f"{options.causality_budget_requests:,} world requests per curve"
                if options.causality_budget_requests
                else "off"
            ),
        },
    }


def _draws_per_point(curves: Sequence[Mapping[str, Any]]) -> str:
    """The fewest and most fresh continuations a point of these curves drew ('16-93'; a point stops once
    its interval is narrow enough, ``sim.explore.causality``)."""
    drawn = sorted({int(p["draws"]) for c in curves for p in c["points"]})
    if not drawn:
        return "0"
    return str(drawn[0]) if drawn[0] == drawn[-1] else f"{drawn[0]}-{drawn[-1]}"
