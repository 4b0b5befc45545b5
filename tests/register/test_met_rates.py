"""register/met_rates.py: a sweep that no longer meets an entry its cells met before says so, on hand-built
rows and records: enough simulations to call it news, too few to say, a near miss either side of the
threshold, rows whose violations nobody examined, and a cell two grids share."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from checks.columns import INV, WHY
from register.findings import FINDINGS
from register.met_rates import (
    NEWS_BELOW,
    NO_LONGER_MET,
    NOT_ENOUGH,
    RECORD,
    Cell,
    CellRecord,
    MetRecord,
    compare,
    observe,
    read_record,
    recorded,
)
from register.nonguarantees import NON_GUARANTEES
from scenarios.loader import library_names

WRITE = "non_idempotent_at_most_once"
SEQ = "unique_event_sequence"
INVARIANTS = (WRITE, SEQ, "every_run_terminates")
DEFAULT = Cell("default", "adr-141", intensity=1.0)
HAPPY = Cell("happy_path", "adr-141", intensity=1.0)


def row(seed: int, cell: Cell = DEFAULT, grid: str = "main", policy: str = "head", **why: str | None) -> dict[str, Any]:
    """A sweep row of ``cell``: every invariant held but those named, each violated with its ``why`` (None:
    violated and not examined)."""
    out: dict[str, Any] = {**cell.document(), "preset": "head", "grid": grid, "policy": policy, "seed": seed}
    for name in INVARIANTS:
        out[INV + name] = name not in why
        out[WHY + name] = why.get(name)
    return out


def record(
    *cells: tuple[Cell, int, Mapping[str, int], Mapping[str, int]], grid: str = "adr-review grid main"
) -> MetRecord:
    return MetRecord("hand-built", tuple(CellRecord(c, grid, n, met, first) for c, n, met, first in cells))


F01_IN_10_PERCENT = record((DEFAULT, 100, {"F-01": 10, "NG-identity": 50}, {"F-01": 7, "NG-identity": 0}))


def sweep_rows(simulations: int, f01_at: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    """``simulations`` rows of DEFAULT meeting NG-identity every other seed, and F-01 at ``f01_at``."""
    rows = []
    for seed in range(simulations):
        why: dict[str, str | None] = {}
        if seed % 2 == 0:
            why[SEQ] = "NG-identity"
        if seed in f01_at:
            why[WRITE] = "F-01"
        rows.append(row(seed, **why))
    return rows


def test_an_entry_missing_from_enough_simulations_is_no_longer_met() -> None:
    comparison = compare(observe(sweep_rows(100), INVARIANTS), F01_IN_10_PERCENT)
    assert [s.entry for s in comparison.news] == ["F-01"] and not comparison.unsure
    gone = comparison.news[0]
    assert gone.verdict == NO_LONGER_MET and gone.simulations == 100
    assert math.isclose(gone.expected, 10.0) and math.isclose(gone.p_none, 0.9**100)
    assert gone.replay == "leaselab run default --policy head --seed 7"
    line = gone.line()
    assert line.startswith("no longer met: F-01 (met before in adr-review grid main: 10 of 100 simulations")
    assert "this sweep ran 100 there" in line
    assert comparison.met_again == (("NG-identity", "adr-review grid main"),)
    assert "No longer met where the register met it: F-01" in comparison.line()


def test_an_entry_missing_from_too_few_simulations_is_not_enough_to_say() -> None:
    comparison = compare(observe(sweep_rows(10), INVARIANTS), F01_IN_10_PERCENT)
    assert not comparison.news
    [unsure] = comparison.unsure
    assert unsure.entry == "F-01" and unsure.verdict == NOT_ENOUGH and math.isclose(unsure.p_none, 0.9**10)
    assert unsure.line().startswith("not enough simulations to say: F-01")
    assert "stopped being met: 1 entry met again, 1 too rare there to say" in comparison.line()


def test_the_threshold_is_the_probability_of_meeting_it_zero_times() -> None:
    """0.9**43 = 1.08% (too few), 0.9**44 = 0.97% (news): the near misses either side of 1%."""
    below = compare(observe(sweep_rows(43), INVARIANTS), F01_IN_10_PERCENT)
    at = compare(observe(sweep_rows(44), INVARIANTS), F01_IN_10_PERCENT)
    assert [s.entry for s in below.unsure] == ["F-01"] and not below.news
    assert [s.entry for s in at.news] == ["F-01"] and not at.unsure


def test_an_entry_met_once_is_met_again() -> None:
    comparison = compare(observe(sweep_rows(100, f01_at=(63,)), INVARIANTS), F01_IN_10_PERCENT)
    assert not comparison.stopped
    assert set(comparison.met_again) == {("F-01", "adr-review grid main"), ("NG-identity", "adr-review grid main")}
    assert comparison.line().startswith("Every entry the register records as met on these grids was met again")


def test_a_sweep_sharing_no_recorded_cell_says_nothing() -> None:
    rows = [row(seed, HAPPY) for seed in range(500)]
    comparison = compare(observe(rows, INVARIANTS), F01_IN_10_PERCENT)
    assert comparison.cells == 0 and comparison.line() == "" and not comparison.stopped


def test_an_other_policy_or_flag_is_an_other_cell() -> None:
    flagged = Cell("default", "adr-141", flags="idempotency_keys=true")
    comparison = compare(observe([row(s, flagged) for s in range(500)], INVARIANTS), F01_IN_10_PERCENT)
    assert comparison.cells == 0


def test_rows_whose_violations_nobody_examined_are_left_out() -> None:
    """A policy the sweep did not explain: its violating rows carry no answer, so what it met is unknown."""
    rows = [row(seed, policy="other", **{WRITE: None}) for seed in range(100)]
    assert observe(rows, INVARIANTS) == {}
    mixed = sweep_rows(100) + [row(seed, grid="intensity", **{WRITE: None}) for seed in range(100)]
    observed = observe(mixed, INVARIANTS)
    assert observed[DEFAULT].simulations == 100 and observed[DEFAULT].grids == {"main"}


def test_a_cell_two_grids_share_counts_each_seed_once() -> None:
    rows = sweep_rows(100, f01_at=(3,)) + [{**r, "grid": "intensity"} for r in sweep_rows(100, f01_at=(3,))]
    tally = observe(rows, INVARIANTS)[DEFAULT]
    assert tally.simulations == 100 and tally.met == {"F-01": 1, "NG-identity": 50}
    assert tally.first == {"F-01": 3, "NG-identity": 0} and tally.grids == {"main", "intensity"}


def test_an_unexplained_violation_meets_no_entry() -> None:
    tally = observe([row(0, **{WRITE: ""}), row(1, **{WRITE: "?"})], INVARIANTS)[DEFAULT]
    assert tally.simulations == 2 and tally.met == {}


def test_cells_of_one_grid_pool_their_evidence() -> None:
    """Too few simulations in each cell alone, enough in the two together: P(none) is the product."""
    two = record(
        (DEFAULT, 100, {"F-05": 10}, {"F-05": 1}),
        (HAPPY, 100, {"F-05": 10}, {"F-05": 4}),
    )
    rows = [row(s) for s in range(25)] + [row(s, HAPPY) for s in range(25)]
    comparison = compare(observe(rows, INVARIANTS), two)
    [gone] = comparison.news
    assert math.isclose(gone.p_none, 0.9**50) and gone.simulations == 50 and gone.scenarios == ("default", "happy_path")
    alone = compare(observe(rows[:25], INVARIANTS), two)
    assert [s.entry for s in alone.unsure] == ["F-05"]


def test_a_row_reads_the_head_alias_and_the_replay_names_every_override() -> None:
    cell = Cell.of_row(
        {
            "scenario": "default", "preset": "head", "flags": "operation_deadline=true", "intensity": 2.0,
            "latency_ratio": 1.5, "transport": "sync", "fault_ranges": "deployment", "collation": None,
        }
    )  # fmt: skip
    assert cell.preset == "adr-141" and cell.collation == "binary"
    assert cell.replay(9) == (
        "leaselab run default --policy head --flag operation_deadline=true --seed 9 --intensity 2 "
        "--latency-ratio 1.5 --transport sync --fault-ranges deployment"
    )


def test_a_record_reads_back_as_written() -> None:
    observed = observe(sweep_rows(20, f01_at=(5,)), INVARIANTS)
    made = recorded(observed, "hand-built", ["main"], prefix="adr-review grid ")
    again = MetRecord.from_json(made.to_json())
    assert again == made and again.cells[0].grid == "adr-review grid main"


@given(rate=st.integers(1, 100), simulations=st.integers(1, 2_000))
def test_the_verdict_is_news_exactly_when_none_is_unlikely(rate: int, simulations: int) -> None:
    rec = record((DEFAULT, 100, {"F-01": rate}, {"F-01": 0}))
    comparison = compare(observe([row(s) for s in range(simulations)], INVARIANTS), rec)
    [stopped] = comparison.stopped
    p_none = (1 - rate / 100) ** simulations
    assert math.isclose(stopped.p_none, p_none, rel_tol=1e-9, abs_tol=1e-300)
    assert (stopped.verdict == NO_LONGER_MET) == (p_none < NEWS_BELOW)
    assert math.isclose(stopped.expected, rate / 100 * simulations)


def test_the_stored_record_names_registered_entries_on_library_scenarios() -> None:
    ids = {f.id for f in FINDINGS} | {ng.id for ng in NON_GUARANTEES}
    stored = read_record(RECORD)
    assert stored.cells, "the record is empty"
    cells = [c.cell for c in stored.cells]
    assert len(set(cells)) == len(cells)
    for cell in stored.cells:
        assert cell.cell.scenario in library_names() and cell.cell.preset == "adr-141" and not cell.cell.flags
        assert set(cell.met) <= ids and set(cell.first) == set(cell.met), cell.cell
        assert all(0 < n <= cell.simulations for n in cell.met.values())
        assert all(0 <= seed < cell.simulations for seed in cell.first.values())


def test_the_record_is_the_adr_review_head_cells_each_once() -> None:
    """benchmarks/record_met.py sweeps the ADR review with head only: 150 tasks of 100 seeds, 15 cells of
    grid intensity the same as grid main's; the record holds every other cell once, under its first grid."""
    from benchmarks.record_met import head_only
    from sim.review.builtin import builtin_review
    from sim.sweep.rows import cell_scenario

    config = head_only(builtin_review())
    assert [p.label for p in config.policy] == ["head"] and config.size() == (150, 15_000)
    cells = set()
    for task in config.iter_tasks():
        scenario, _ = cell_scenario(task)
        cells.add(
            Cell(
                scenario.name, "adr-141", "", task.intensity, task.latency_ratio, scenario.world.transport,
                task.fault_ranges or "library", scenario.world.identity_collation,
            )
        )  # fmt: skip
    stored = read_record(RECORD)
    assert {c.cell for c in stored.cells} == cells and len(cells) == 135
    assert all(c.simulations == 100 for c in stored.cells)


def test_rows_in_any_order_give_the_same_tally() -> None:
    """Shards complete in any order: the first seed that met an entry is the smallest, not the first read."""
    rows = sweep_rows(30, f01_at=(4, 17))
    assert observe(list(reversed(rows)), INVARIANTS) == observe(rows, INVARIANTS)
    assert observe(list(reversed(rows)), INVARIANTS)[DEFAULT].first["F-01"] == 4


def test_a_shorter_grid_on_the_same_cell_adds_no_simulation() -> None:
    """Every grid's seeds start at 0: a grid of 40 seeds on a cell another grid ran 100 of adds none."""
    rows = sweep_rows(100, f01_at=(50,)) + [{**r, "grid": "short"} for r in sweep_rows(40)]
    tally = observe(rows, INVARIANTS)[DEFAULT]
    assert tally.simulations == 100 and tally.met["F-01"] == 1 and tally.grids == {"main", "short"}
