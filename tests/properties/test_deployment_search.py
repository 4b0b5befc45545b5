"""The search "every failure of head is explained" is checked at, at the scale a user searches: every
library scenario at deployment fault ranges, on its own transport and on the Sync transport, the seeds of
the recorded search (``register/entries/searched.json``), 1,000 swarm draws per scenario and seed (a fifth
on the slow one): 275,200 simulations on the 18 scenarios, each violation judged by the register (``python -m
benchmarks.triage_ranges --search``). The nightly suite runs it in 16 chunks (seed x transport); the
default suite only checks that the plan is that large."""

from __future__ import annotations

import pytest

from benchmarks.triage_ranges import SEARCH_DRAWS, SEARCH_SEEDS, TRANSPORTS, planned, triage
from reports.explained import LARGER_SEARCH
from scenarios.loader import library_names

MIN_SIMULATIONS = 200_000


def test_the_deployment_search_runs_at_least_200000_simulations() -> None:
    total = planned(len(SEARCH_SEEDS), SEARCH_DRAWS, library_names(), len(TRANSPORTS))
    assert total >= MIN_SIMULATIONS
    assert f"{total:,} simulations" in LARGER_SEARCH, "the report names the search's size"


@pytest.mark.nightly
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("seed", SEARCH_SEEDS)
def test_a_chunk_of_the_deployment_search_meets_only_registered_violations(seed: int, transport: str) -> None:
    found, simulations, _ = triage([seed], SEARCH_DRAWS, library_names(), ranges="deployment", transport=transport)
    assert simulations == planned(1, SEARCH_DRAWS, library_names(), 1)
    unexplained = [
        f"{r['invariant']} on {r['scenario']} draw {r['draw']}: {r['mechanism']}" for r in found if not r["explained"]
    ]
    assert not unexplained, "\n".join(unexplained)
