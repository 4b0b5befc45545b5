"""Hypothesis strategies for the conformance cases: run-row pre-states and call arguments.

The values cluster where a guard can flip: lease_expires at now-1, now, now+1 and at the
lease a same-second renewal would write; identities equal, empty, or near-identical
(case, trailing space, accent); every status; fences set, unset and unparseable; payloads
present or not. Every case is a plain JSON-able dict, so it can be printed and replayed.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from model.constants import LEASE_S
from model.vocab import RunStatus, TerminationReason, ToolEffect

NOW = 1_750_000_000
UID = 7
UUID = "00000000-0000-4000-8000-000000000007"

IDENTITIES = (
    "",
    "worker:host-a:101",
    "worker:host-a:102",
    "Worker:host-a:101",
    "worker:host-a:101 ",
    "wörker:host-a:101",
    "resume:host-b:7",
    "interactive:host-b:8",
    "worker:" + "h" * 49 + ":1234567",
)
"""Identities, including ones MariaDB's utf8mb4_unicode_ci treats as equal to the second."""

EFFECTS = ("", *(e.value for e in ToolEffect), "bogus_effect")
STATUSES = tuple(s.value for s in RunStatus)
REASONS = tuple(r.value for r in TerminationReason)

identity = st.sampled_from(IDENTITIES)
status = st.sampled_from(STATUSES)


def around(now: int) -> st.SearchStrategy[int]:
    """Timestamps that sit on the guards' edges, and some anywhere."""
    return st.one_of(
        st.sampled_from((0, now - 1, now, now + 1, now + LEASE_S, now + LEASE_S - 1, now + LEASE_S + 1, 1)),
        st.integers(min_value=0, max_value=now + 2 * LEASE_S),
    )


def run_row(
    uid: int = UID, uuid: str = UUID, now: int = NOW, statuses: st.SearchStrategy[str] = status
) -> st.SearchStrategy[dict[str, Any]]:
    """A ``tx_nrllm_agentrun`` row as stored (payload columns as plaintext or None)."""
    return st.fixed_dictionaries(
        {
            "uid": st.just(uid),
            "uuid": st.just(uuid),
            "status": statuses,
            "claimed_by": identity,
            "lease_expires": around(now),
            "requeue_count": st.integers(min_value=0, max_value=5),
            "pending_effect": st.sampled_from(EFFECTS),
            "queued_request": st.sampled_from((None, '{"request":1}')),
            "suspended_state": st.sampled_from((None, '{"state":1}')),
            "termination_reason": st.sampled_from(REASONS),
            "error_class": st.sampled_from(("", "RuntimeException")),
            "iterations": st.integers(min_value=0, max_value=20),
            "total_tokens": st.integers(min_value=0, max_value=5000),
            "started_at": st.sampled_from((0, now - 100, now)),
            "finished_at": st.sampled_from((0, now - 50)),
            "tstamp": st.sampled_from((0, now - 1, now)),
            "crdate": st.just(now - 1000),
        }
    )


def clock(now: int = NOW) -> st.SearchStrategy[int]:
    return st.sampled_from((now, now + 1, now - 1, now + 7))
