"""The findings recorded as reproduced on the real PHP still reproduce; the others say why not."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.conform import replay
from tests.conformance.conftest import leftovers, need, server_pids

ENTRIES = replay.load()


def test_every_entry_says_reproduced_with_how_or_why_not() -> None:
    for finding, entry in ENTRIES.items():
        assert finding.startswith("F-")
        assert isinstance(entry["reproduced"], bool)
        if entry["reproduced"]:
            assert entry["engine"] and entry["how"] and entry["steps"]
        else:
            assert entry["why_not"]


@pytest.mark.slow
@pytest.mark.parametrize("finding", sorted(f for f, e in ENTRIES.items() if e["reproduced"]))
def test_a_reproduced_finding_still_reproduces_on_the_real_php(finding: str, private_tmp: Path) -> None:
    entry = ENTRIES[finding]
    src = need(entry["engine"])
    before = set(leftovers(private_tmp))
    assert replay.replay(finding, entry, src) == []
    assert set(leftovers(private_tmp)) <= before and not server_pids(private_tmp)
