"""The recorded deployment-range search: its figures combine chunk by chunk, read back as written, and the
report's sentence and verdict follow them (a search with an unexplained case, or a stored open case, fails
the verdict)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from benchmarks.triage_ranges import SEARCH_DRAWS, SEARCH_SEEDS, TRANSPORTS, planned, summary
from register.searched import RECORD, SearchRecord, combined, read_record, write_record
from reports import explained
from reports.explained import LARGER_SEARCH, OPEN_CASES, SEARCH_HOLDS, SEARCHED, larger_search
from scenarios.loader import library_names


def chunk(
    seed: int, transport: str, unexplained: tuple[str, ...] = (), mechanisms: tuple[str, ...] = ("F-01",)
) -> SearchRecord:
    return SearchRecord((seed,), 1000, "deployment", (transport,), 14, 13_200, 100, mechanisms, unexplained, 30.0)


def test_chunks_combine_into_one_search() -> None:
    total = combined([chunk(5, "own"), chunk(5, "sync", mechanisms=("F-02", "F-01")), chunk(6, "own")])
    assert total.seeds == (5, 6) and total.transports == ("own", "sync")
    assert (total.simulations, total.violations, total.cpu_s) == (39_600, 300, 90.0)
    assert total.mechanisms == ("F-01", "F-02") and total.clean


def test_an_unexplained_case_in_any_chunk_makes_the_search_unclean() -> None:
    total = combined([chunk(5, "own"), chunk(6, "own", unexplained=("settles_by_owner on default",))])
    assert not total.clean and total.unexplained == ("settles_by_owner on default",)


def test_chunks_of_different_searches_do_not_combine() -> None:
    other = SearchRecord((7,), 500, "deployment", ("own",), 14, 6_600, 10, (), (), 1.0)
    with pytest.raises(ValueError, match="different searches"):
        combined([chunk(5, "own"), other])


def test_a_record_reads_back_as_written(tmp_path: Path) -> None:
    record = combined([chunk(5, "own"), chunk(6, "sync", unexplained=("x",))], note="n")
    assert read_record(write_record(record, tmp_path / "r.json")) == record


def test_a_run_summary_names_entries_met_and_where_the_unexplained_were() -> None:
    found = [
        {
            "scenario": "default",
            "transport": "own",
            "seed": 9,
            "draw": 3,
            "invariant": "a",
            "mechanism": "F-02",
            "explained": True,
        },
        {
            "scenario": "default",
            "transport": "own",
            "seed": 9,
            "draw": 4,
            "invariant": "a",
            "mechanism": "F-02",
            "explained": True,
        },
        {
            "scenario": "single_run",
            "transport": "own",
            "seed": 9,
            "draw": 7,
            "invariant": "b",
            "mechanism": "unexplained: s",
            "explained": False,
        },
    ]
    record = summary(found, 50, 2.0, seeds=[9], draws=10, ranges="deployment", transports=("own",), scenarios=2)
    assert record.mechanisms == ("F-02",) and record.violations == 3
    assert record.unexplained == ("b on single_run (own) seed 9 draw 7: unexplained: s",)


def test_the_sentence_says_the_scale_and_what_was_left() -> None:
    clean = combined([chunk(500, "own"), chunk(501, "sync")])
    line = larger_search(clean, [])
    assert "seeds 500-501" in line and "26,400 simulations" in line and "1 registered mechanisms met" in line
    assert "nothing unexplained" in line and "their own transport and the Sync transport" in line
    dirty = larger_search(combined([chunk(500, "own", unexplained=("x", "y"))]), ["a.toml", "b.toml"])
    assert "2 violations nothing explains" in dirty and "2 cases nothing explains yet" in dirty
    assert "a.toml, b.toml" in dirty
    assert "nothing unexplained" not in dirty


def test_the_recorded_search_is_the_nightly_one_and_at_least_200000_simulations() -> None:
    assert read_record(RECORD) == SEARCHED and SEARCHED.seeds == SEARCH_SEEDS
    assert SEARCHED.simulations == planned(len(SEARCH_SEEDS), SEARCH_DRAWS, library_names(), len(TRANSPORTS))
    assert SEARCHED.simulations >= 200_000 and SEARCHED.scenarios == len(library_names())
    assert f"{SEARCHED.simulations:,} simulations" in LARGER_SEARCH


def test_the_verdict_needs_a_clean_search_and_no_open_case(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (SEARCHED.clean and not OPEN_CASES) == SEARCH_HOLDS
    rows = pd.DataFrame({"policy": ["head"], "fault_ranges": ["library"], "transport": ["async"]})
    monkeypatch.setattr(explained, "SEARCH_HOLDS", True)
    assert explained.explained_by_ranges([], rows)["holds"]
    monkeypatch.setattr(explained, "SEARCH_HOLDS", False)
    assert not explained.explained_by_ranges([], rows)["holds"], "an unclean search or an open case fails it"


def test_combining_a_bad_record_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"seeds": [1]}), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.triage_ranges", "--combine", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and str(bad) in done.stderr and "draws" in done.stderr
    assert "Traceback" not in done.stderr
