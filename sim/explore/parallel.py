"""The parallel swarm: one search spread over N processes, shrinking after, in the coordinator.

Worker ``i`` runs the swarm's search (:func:`sim.explore.swarm.search`) on its own seed stream,
derived from the search's seed (worker 0 keeps the seed itself, so one worker is the serial
search). The coordinator merges what the workers found and shrinks it, exactly as the serial
explorer does.

Order and determinism. The draws of all workers are numbered as if dealt round-robin: the k-th
draw of worker i is simulation ``(k - 1) * N + i + 1`` of the search. With ``--simulations M``
worker i runs its share of those M numbers, nobody stops early, and candidates are ranked by
that number, so the report is a function of (seed, M, N) alone. With a wall-clock budget only,
"first violation wins": with ``stop_at_first`` the first worker to find a wanted violation tells
the others to stop (a shared event), and which worker that is depends on timing.

It knows the swarm's search and the process pool, never the CLI.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import signal
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from sim.explore.base import Budget, Clock, ExploreReport, Progress, Target
from sim.explore.discovery import Discovery
from sim.explore.guided import guided_search
from sim.explore.swarm import Candidate, finish, search

SEARCHES = {"swarm": search, "guided": guided_search}
"""The searches a worker can run: the same signature, candidates and simulations out."""

_STOP: Any = None
"""The shared stop event, installed in each worker process by :func:`_install`."""


def worker_seed(seed: int, worker: int) -> int:
    """The seed of worker ``worker``'s stream: ``seed`` itself for worker 0, else a hash of both."""
    if worker == 0:
        return seed
    digest = hashlib.blake2b(f"leaselab-swarm/{seed}/{worker}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def share(simulations: int | None, workers: int, worker: int) -> int | None:
    """How many of ``simulations`` (dealt round-robin) fall to ``worker``."""
    if simulations is None:
        return None
    return simulations // workers + (1 if worker < simulations % workers else 0)


@dataclass(frozen=True)
class WorkerResult:
    worker: int
    simulations: int
    candidates: list[Candidate]
    discovery: Discovery
    cpu_s: float = 0.0
    """CPU seconds the worker's search took: with the wall time, whether it had a core to itself."""


def _install(event: Any) -> None:
    global _STOP
    _STOP = event
    # Ctrl-C is the coordinator's to handle: it sets the event, and the workers stop at their next draw
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stopped() -> bool:
    return _STOP is not None and bool(_STOP.is_set())


def _work(target: Target, budget: Budget, workers: int, worker: int, stop_early: bool, kind: str) -> WorkerResult:
    seed = worker_seed(budget.seed, worker)
    mine = replace(budget, seed=seed, simulations=share(budget.simulations, workers, worker))
    started = time.process_time()
    found = Discovery()
    searcher = SEARCHES[kind]
    candidates, simulations = searcher(target, mine, Clock(), None, _stopped, found)
    if (
        stop_early
        and budget.stop_at_first
        and _STOP is not None
        and any(budget.stops_at(c.mechanism) for c in candidates)
    ):
        _STOP.set()
    return WorkerResult(worker, simulations, candidates, found, time.process_time() - started)


def _renumber(workers: int, worker: int) -> Callable[[int], int]:
    """A worker's simulation numbers in the round-robin order of the whole search."""

    def number(n: int) -> int:
        return (n - 1) * workers + worker + 1

    return number


def global_number(candidate: Candidate, workers: int, worker: int) -> int:
    """The candidate's simulation number in the round-robin order of the whole search."""
    return (candidate.simulations_until_found - 1) * workers + worker + 1


class ParallelSwarmExplorer:
    """The swarm (or, with ``kind="guided"``, the guided) explorer over ``workers`` processes (see the
    module docstring)."""

    def __init__(self, workers: int, kind: str = "swarm") -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        if kind not in SEARCHES:
            raise ValueError(f"kind must be one of {sorted(SEARCHES)}, not {kind!r}")
        self.workers = workers
        self.name = kind

    def explore(self, target: Target, budget: Budget, progress: Progress | None = None) -> ExploreReport:
        report = ExploreReport(self.name, target)
        clock = Clock()
        deterministic = budget.simulations is not None
        # fork where there is one: workers start at once with the parent's imports and caches
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        context = multiprocessing.get_context(method)
        event = context.Event()
        with ProcessPoolExecutor(
            max_workers=self.workers, mp_context=context, initializer=_install, initargs=(event,)
        ) as pool:
            futures = [
                pool.submit(_work, target, budget, self.workers, worker, not deterministic, self.name)
                for worker in range(self.workers)
            ]
            try:
                results = [future.result() for future in futures]
            except KeyboardInterrupt:
                # Ctrl-C: tell the workers to stop (a terminal's Ctrl-C reached them too) and keep what they found
                event.set()
                results = [future.result() for future in futures]
                results[0].discovery.interrupted = True
        report.simulations = sum(r.simulations for r in results)
        ranked = sorted(
            (
                (global_number(c, self.workers, r.worker), c.found_after_s, r.worker, c)
                for r in results
                for c in r.candidates
            ),
            key=lambda row: (row[0], row[2]) if deterministic else (row[1], row[2]),
        )
        candidates = _first_per_mechanism([replace(c, simulations_until_found=number) for number, _, _, c in ranked])
        found = Discovery()
        for r in results:
            found.merge(r.discovery, _renumber(self.workers, r.worker))
        report.extra["search_s"] = round(clock.elapsed(), 3)
        report.extra["workers"] = self.workers
        report.extra["worker_cpu_s"] = [round(r.cpu_s, 3) for r in results]
        report.extra["branched"] = found.branched
        if progress is not None:
            progress(report.simulations, len(candidates))
        finish(report, candidates, budget, found)
        report.elapsed_s = clock.elapsed()
        return report


def _first_per_mechanism(candidates: list[Candidate]) -> list[Candidate]:
    """What the serial search keeps: the first candidate of each mechanism (workers each applied that
    rule to their own stream)."""
    kept: list[Candidate] = []
    seen: set[str] = set()
    for candidate in candidates:
        if candidate.mechanism in seen:
            continue
        seen.add(candidate.mechanism)
        kept.append(candidate)
    return kept
