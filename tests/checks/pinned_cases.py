"""The histories whose verdicts are pinned (``data/pinned_verdicts.json``), and the writer of that table.

Every invariant's verdict (validity, witness, judged cases) and every coverage property, over library
histories with their faults doubled and over random hand-built histories drawn from a fixed seed: a
change of what an invariant means shows as a difference here, and is pinned again on purpose with

    .venv/bin/python tests/checks/pinned_cases.py

(the test that compares, ``test_pinned_verdicts.py``, says so when it fails). The random histories
are built by :func:`build_step`, which the Hypothesis tests of the index share.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

if __name__ == "__main__":  # run as a script: this tree's packages, not an installed copy of another
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from invariant_histories import FAIL, INFO, OK, History

from checks import judge
from checks.history import Op
from model.statements import (
    CANCEL,
    CLAIM_FOR_RESUME,
    CLAIM_QUEUED,
    DEAD_LETTER_STALE,
    ENQUEUE_RUN,
    FINISH_RUN,
    MARK_PENDING_EFFECT,
    NAMES,
    RENEW_LEASE,
    REQUEUE,
    REQUEUE_STALE,
    START_RUN,
    SUSPEND_RUN,
)
from scenarios.intensity import scale_faults
from scenarios.loader import load_scenario
from sim.world.simulate import simulate

PINNED = Path(__file__).resolve().parent / "data" / "pinned_verdicts.json"
LIBRARY_CASES = (
    ("default", "head"),
    ("default", "adr-104"),
    ("cancel_mid_run", "head"),
    ("reaper_races_heartbeat", "head"),
    ("abandoned_interactive", "head"),
    ("same_second_renewals", "adr-104"),
    ("approval_write_on_resume", "adr-111"),
    ("tool_outlives_lease", "adr-111"),
    ("audit_failure_after_write", "head"),
    ("worker_crash_mid_write", "head"),
)
LIBRARY_SEEDS = (0, 1)
BUILT_HISTORIES = 300
BUILT_SEED = 19

T = TypeVar("T")


class Draw(Protocol):
    """Where a built history's choices come from: Hypothesis (which shrinks) or a seeded random."""

    def pick(self, choices: Sequence[T]) -> T: ...

    def integer(self, low: int, high: int) -> int: ...

    def boolean(self) -> bool: ...


class SeededDraw:
    """A :class:`Draw` from one ``random.Random``: the same histories in any process."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick(self, choices: Sequence[T]) -> T:
        return choices[self.rng.randrange(len(choices))]

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def boolean(self) -> bool:
        return self.rng.random() < 0.5


_WORKERS = ("w1", "w2")
_RUNS = ("r1", "r2")
_TRANSITIONS = tuple(
    NAMES[number]
    for number in (
        START_RUN, CLAIM_QUEUED, RENEW_LEASE, MARK_PENDING_EFFECT, FINISH_RUN, CANCEL, SUSPEND_RUN, CLAIM_FOR_RESUME,
        REQUEUE, REQUEUE_STALE, DEAD_LETTER_STALE, ENQUEUE_RUN,
    )
)  # fmt: skip
_STATUSES = ("running", "completed", "failed", "cancelled", "queued", "waiting_for_approval")
_REASONS = ("", "completed", "max_iterations", "provider_failed", "not_retryable", "retries_exhausted",
            "policy_denied", "budget_exhausted")  # fmt: skip
_ERRORS = ("", "ProviderException", "TransportException", "DBALException", "AuditPersistenceFailedException")
_OUTCOMES = ("completed", "failed", "cancelled", "requeued", "lease_lost", "awaiting_approval", "suspend_failed",
             "guardrail_blocked", None)  # fmt: skip
_ENTRIES = ("run_queued", "run_interactive", "approve", "enqueue", "cancel", "reap")
_EFFECTS = ("read_only", "idempotent_write", "non_idempotent_write", "unknown", "")


def build_step(b: History, draw: Draw) -> None:
    """One random record or small act, on a random run by a random process."""
    run, worker = draw.pick(_RUNS), draw.pick(_WORKERS)
    kind = draw.integer(0, 13)
    if kind == 0:
        b.segment(draw.pick(_ENTRIES), run=run, process=worker)
    elif kind == 1:
        b.segment_done(draw.pick((OK, OK, FAIL, INFO)), outcome=draw.pick(_OUTCOMES), run=run, process=worker)
    elif kind in (2, 3):
        changes = {
            "status": draw.pick(_STATUSES),
            "termination_reason": draw.pick(_REASONS),
            "error_class": draw.pick(_ERRORS),
            "claimed_by": draw.pick(("", *_WORKERS)),
            "pending_effect": draw.pick(_EFFECTS),
            "lease_expires": draw.integer(0, 2000),
        }
        transition, matched = draw.pick(_TRANSITIONS), draw.boolean()
        b.store(transition, run=run, identity=worker, matched=matched, clock_s=draw.integer(0, 1200), **changes)
    elif kind == 4:
        b.store_fail(draw.pick(_TRANSITIONS), run=run, identity=worker)
    elif kind == 5:
        b.provider(run=run, process=worker, round_no=draw.integer(1, 3))
    elif kind == 6:
        b.provider_fail(draw.pick(("connection", "invalidRequest", None)), run=run, process=worker)
    elif kind == 7:
        b.tool(draw.pick(("c1", "c2")), draw.pick(_EFFECTS), run=run, identity=worker)
    elif kind == 8:
        b.tool_done(draw.pick((OK, FAIL, INFO)), run=run, process=worker)
    elif kind == 9:
        b.event(draw.pick((OK, FAIL)), kind=draw.pick(("tool", "approval", "step")), true_effect=draw.pick(_EFFECTS),
                run=run, identity=worker)  # fmt: skip
    elif kind == 10:
        b.probe(draw.pick(("running", "cancelled")), run=run, process=worker)
    elif kind == 11:
        b.dispatch(draw.pick((OK, FAIL)), run=run, process=worker)
    elif kind == 12:
        account = draw.pick(("requeued", "dead_lettered", "skipped"))
        b.account(account, draw.pick(("", "not_retryable", "retries_exhausted")), run=run, process=worker)
    else:
        b.find(run=run, process=worker)


def build_history(draw: Draw) -> list[Op]:
    """A random hand-built history of up to 40 steps on two runs and two workers."""
    b = History()
    b.phase(lease_s=draw.pick((900, 30)), deadline_s=draw.pick((0, 60)))
    if draw.boolean():
        b.plan({2: "budget_exhausted"}, run="r1")
    for _ in range(draw.integer(0, 40)):
        build_step(b, draw)
    if draw.boolean():
        b.final(run="r1")
    return b.ops


def cases() -> list[tuple[str, list[Op]]]:
    """Every pinned history, named."""
    found = []
    for name, policy in LIBRARY_CASES:
        scenario = scale_faults(load_scenario(name), 2.0)
        for seed in LIBRARY_SEEDS:
            found.append((f"{name}/{policy}/{seed}", simulate(scenario, policy, seed, judge=False).history))
    draw = SeededDraw(BUILT_SEED)
    found += [(f"built/{i}", build_history(draw)) for i in range(BUILT_HISTORIES)]
    return found


def table(history: list[Op]) -> dict[str, Any]:
    """What is pinned of one history: per invariant [validity, witness, judged], and the coverage reached."""
    judged = judge(history)
    return {
        "verdicts": {
            name: [verdict.valid.value, list(verdict.witness), verdict.judged]
            for name, verdict in judged.verdicts.items()
        },
        "coverage": sorted(name for name, reached in judged.coverage.items() if reached),
    }


def write() -> None:
    pinned = {name: table(history) for name, history in cases()}
    lines = [f"{json.dumps(name)}: {json.dumps(entry, sort_keys=True)}" for name, entry in sorted(pinned.items())]
    PINNED.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")  # one history a line: diffs read
    print(f"pinned {len(pinned)} histories to {PINNED}", file=sys.stderr)


if __name__ == "__main__":
    write()
