"""register/met.py: where each finding and non-guarantee was met, and what stopped reproducing."""

from __future__ import annotations

from register.findings import FINDINGS
from register.met import MET, Gone, gone, new_met
from register.nonguarantees import NON_GUARANTEES
from scenarios.loader import library_names


def test_every_recorded_entry_is_registered_and_every_scenario_a_library_one() -> None:
    ids = {f.id for f in FINDINGS} | {ng.id for ng in NON_GUARANTEES}
    for grid, per in MET.items():
        assert set(per) <= set(library_names()), grid
        for scenario, met in per.items():
            assert met <= ids, (grid, scenario, met - ids)


def test_an_entry_no_longer_met_is_news() -> None:
    recorded = sorted(MET["head-sweep"]["default"])
    lost = gone("head-sweep", "default", recorded[1:])
    assert lost == [Gone(recorded[0], "head-sweep", "default")]
    assert "no longer met on default" in lost[0].line() and recorded[0] in lost[0].line()


def test_the_same_entries_met_again_is_no_news() -> None:
    recorded = MET["head-sweep"]["default"]
    assert gone("head-sweep", "default", recorded) == []
    assert new_met("head-sweep", "default", recorded) == []


def test_an_entry_met_where_it_was_not_recorded_is_listed_to_record() -> None:
    assert new_met("head-sweep", "default", [*MET["head-sweep"]["default"], "F-99"]) == ["F-99"]


def test_an_unknown_grid_records_nothing() -> None:
    assert gone("no-such-grid", "default", []) == []
