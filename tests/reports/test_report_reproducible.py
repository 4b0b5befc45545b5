"""The same command on the same commit gives the same numbers and files; only times differ."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow


def _without_times(doc: dict[str, Any]) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    doc["provenance"].pop("wall_s")
    doc["provenance"].pop("phases_s")
    for row in doc["verification"]:
        row.pop("elapsed_s")
    for cx in doc["counterexamples"]:
        cx["causality"].pop("cpu_s")
    return doc


def test_a_second_run_in_a_fresh_directory_gives_the_same_report(
    small_review: Any,
    report_json: dict[str, Any],
    tmp_path: Path,
    run_small_review: Callable[[Path, Path | None, bool], Any],
) -> None:
    """The second run draws its figures in the coordinator, the first in the pool: the same bytes."""
    again = run_small_review(small_review.paths["html"].parent.parent, tmp_path / "again", False)
    second = json.loads(again.paths["json"].read_text(encoding="utf-8"))
    assert _without_times(second) == _without_times(report_json)
    first_dir, second_dir = small_review.paths["html"].parent, again.paths["html"].parent
    files = sorted(p.relative_to(first_dir) for p in (first_dir / "counterexamples").glob("*.toml"))
    assert files
    assert files == sorted(p.relative_to(second_dir) for p in (second_dir / "counterexamples").glob("*.toml"))
    for name in files:
        assert (first_dir / name).read_bytes() == (second_dir / name).read_bytes()
    for name in sorted((first_dir / "figures").glob("*.png")):
        assert name.read_bytes() == (second_dir / "figures" / name.name).read_bytes(), name.name


def test_times_are_the_only_difference_the_check_ignores(report_json: dict[str, Any]) -> None:
    assert report_json["provenance"]["wall_s"] > 0
    with pytest.raises(KeyError):
        _without_times({"provenance": {}, "verification": [], "counterexamples": []})
