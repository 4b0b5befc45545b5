"""The evidence phase tells its progress while it waits: jobs that finish out of submission order count
at once, so a slow first job does not freeze the display (it used to sit at the sweep's "ETA 0 s")."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest

from sim.review import review


def test_finished_jobs_are_counted_while_the_first_one_still_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    seen: list[tuple[str, int, int]] = []

    def shrink(job: Any) -> Any:
        if job == "slow":
            assert release.wait(10)
        return SimpleNamespace(counterexample=None)

    def tell(phase: str, done: int, total: int) -> None:
        seen.append((phase, done, total))
        if done >= 3:  # the three quick jobs are counted before the slow first one ends
            release.set()

    monkeypatch.setattr(review, "run_shrink", shrink)
    monkeypatch.setattr(review, "run_verify", lambda job: job)
    monkeypatch.setattr(review, "PROGRESS_POLL_S", 0.01)
    with ThreadPoolExecutor(max_workers=4) as pool:
        shrunk, _, verified, curves = review._run_jobs(pool, ["slow", "quick"], [], ["v1", "v2"], tell, 0)  # type: ignore[arg-type]
    assert release.is_set()  # told 3 done while the first job still ran (it waits for exactly that)
    assert len(shrunk) == 2 and verified == ["v1", "v2"] and curves == [None, None]
    assert seen[0] == ("evidence", 0, 4) and seen[-1] == ("evidence", 4, 4)
