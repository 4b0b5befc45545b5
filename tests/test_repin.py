"""``benchmarks.repin`` re-pins a stored case only while it still shows what it was stored for: a
counterexample its violation, a fixed false alarm (``HOLDS``) its invariant holding."""

from __future__ import annotations

from benchmarks.repin import HOLDS, ROOT, repin_counterexample, stored_counterexamples

FIXED_FALSE_ALARM = ROOT / "tests/sim/world/data/sync-live-run-at-horizon.toml"
A_FINDING = ROOT / "register/entries/F-01-completed-write-rerun.toml"


def test_every_case_kept_as_holding_is_a_stored_case() -> None:
    stored = {str(path.relative_to(ROOT)) for path in stored_counterexamples()}
    assert set(HOLDS) <= stored


def test_a_fixed_false_alarm_shows_its_invariant_holding_and_keeps_its_digest() -> None:
    old, new, shows = repin_counterexample(FIXED_FALSE_ALARM, write=False)
    assert shows and old == new


def test_a_finding_shows_its_violation() -> None:
    old, new, shows = repin_counterexample(A_FINDING, write=False)
    assert shows and old == new
