"""The conformance checks: each runs one statement or decider as real PHP and on the model.

A check has a Hypothesis strategy of cases, a PHP side (one harness request, or a few)
and a model side; both return an *observation*: a flat dict (return value, affected rows,
every compared column of the rows after). A divergence is the set of keys whose values
differ. Model-side engine properties come from :class:`ModelEnv`.

This module is one piece: the check table is one list of parallel entries (strategy, PHP
side, model side, call text), read side by side; splitting it would scatter each pair.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from model.constants import LEASE_S
from model.failures import (
    AuditPersistenceFailed,
    CircuitOpenError,
    DispatchError,
    FallbackChainExhaustedError,
    GenericRuntimeError,
    NetworkError,
    ProviderAuthenticationError,
    ProviderConfigurationError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
    ProviderResponseError,
    StoreError,
    UnsupportedFeatureError,
    WriteWithoutDurableExecution,
    classify,
)
from model.hooks import Segment, lease_confirmed, record_step
from model.policy import HEAD, Policy
from model.reaper import reap
from model.records import EventRow, Registry, RunRequest, RunRow, Step, SuspendedState, ToolSpec
from model.recovery import recover
from model.requests import Dispatch, InsertEvent, UpdateResult
from model.segment import Context, Handle
from model.statements import (
    CANCEL,
    CLAIM_FOR_RESUME,
    CLAIM_QUEUED,
    DEAD_LETTER_STALE,
    ENQUEUE_RUN,
    FIND_STALE_RUNNING,
    FINISH_RUN,
    MARK_PENDING_EFFECT,
    MAX_EVENT_SEQUENCE,
    NAMES,
    RECORD_EVENT,
    RENEW_LEASE,
    REQUEUE,
    REQUEUE_STALE,
    START_RUN,
    SUSPEND_RUN,
)
from model.tools import effect_for
from model.transitions import (
    Cancel,
    ClaimForResume,
    ClaimQueued,
    DeadLetterStale,
    FinishRun,
    MarkPendingEffect,
    RenewLease,
    Requeue,
    RequeueStale,
    Suspend,
    Transition,
    enqueue_run,
    find_stale_running,
    start_run,
)
from model.vocab import RunStatus, StepKind, TerminationReason, ToolEffect
from sim.conform import cases as C
from sim.conform.php_process import PhpProcess
from sim.world.store import Database
from sim.world.sync_driver import SyncDriver

REQUEST = RunRequest(script=(), offered=())
STATE = SuspendedState(request=REQUEST, round_no=1, pending=(), turn_digest="d")
FIELDS = (
    "status",
    "claimed_by",
    "lease_expires",
    "requeue_count",
    "pending_effect",
    "queued_request",
    "suspended_state",
    "termination_reason",
    "error_class",
    "iterations",
    "total_tokens",
    "started_at",
    "finished_at",
    "tstamp",
    "crdate",
)
INT_FIELDS = {
    "lease_expires",
    "requeue_count",
    "iterations",
    "total_tokens",
    "started_at",
    "finished_at",
    "tstamp",
    "crdate",
}


@dataclass(frozen=True)
class ModelEnv:
    """The model side's settings: the policy and the simulated store's engine properties.

    ``collation``: how the store compares identities (``sim.world.store.COLLATIONS``).
    ``affected``: what the driver's affected-rows count means on this engine: ``changed``
    (MySQL/MariaDB without CLIENT_FOUND_ROWS, production) or ``matched`` (SQLite, PostgreSQL).
    """

    policy: Policy = HEAD
    collation: str = "binary"
    affected: str = "changed"

    def database(self) -> Database:
        return Database(identity_collation=self.collation)

    def affected_of(self, result: UpdateResult) -> int:
        return int(result.changed if self.affected == "changed" else result.matched)


ENGINE_PROPERTIES: dict[str, dict[str, str]] = {
    "sqlite": {"collation": "binary", "affected": "matched"},
    "mariadb": {"collation": "unicode_ci", "affected": "changed"},
    "postgres": {"collation": "binary", "affected": "matched"},
}


# ---- rows ----------------------------------------------------------------------------------


def model_row(d: dict[str, Any]) -> RunRow:
    return RunRow(
        uid=d["uid"],
        uuid=d["uuid"],
        status=RunStatus(d["status"]),
        claimed_by=d["claimed_by"],
        lease_expires=d["lease_expires"],
        requeue_count=d["requeue_count"],
        pending_effect=d["pending_effect"],
        queued_request=REQUEST if d["queued_request"] else None,
        suspended_state=STATE if d["suspended_state"] else None,
        termination_reason=TerminationReason(d["termination_reason"]),
        error_class=d["error_class"],
        iterations=d["iterations"],
        total_tokens=d["total_tokens"],
        started_at=d["started_at"],
        finished_at=d["finished_at"],
        tstamp=d["tstamp"],
        crdate=d["crdate"],
    )


def model_view(row: RunRow | None, prefix: str = "row") -> dict[str, Any]:
    if row is None:
        return {prefix: None}
    out: dict[str, Any] = {}
    for name in FIELDS:
        value = getattr(row, name)
        if name in ("queued_request", "suspended_state"):
            value = value is not None
        elif name in ("status", "termination_reason"):
            value = str(value.value)
        out[f"{prefix}.{name}"] = value
    return out


def php_view(row: dict[str, Any] | None, prefix: str = "row") -> dict[str, Any]:
    if row is None:
        return {prefix: None}
    out: dict[str, Any] = {}
    for name in FIELDS:
        value = row.get(name)
        if name in ("queued_request", "suspended_state"):
            value = value not in (None, "")
        elif name in INT_FIELDS:
            value = int(value or 0)
        out[f"{prefix}.{name}"] = value
    return out


def php_setup_row(d: dict[str, Any]) -> dict[str, Any]:
    return dict(d)


def _one(rows: list[dict[str, Any]], uid: int) -> dict[str, Any] | None:
    for r in rows:
        if int(r["uid"]) == uid:
            return r
    return None


def _ident(value: str | None) -> str:
    return "null" if value is None else json.dumps(value, ensure_ascii=False)


# ---- the check type ------------------------------------------------------------------------


@dataclass
class Check:
    name: str
    strategy: st.SearchStrategy[dict[str, Any]]
    php: Callable[[PhpProcess, dict[str, Any]], dict[str, Any]]
    model: Callable[[dict[str, Any], ModelEnv], dict[str, Any]]
    call: Callable[[dict[str, Any]], str]
    flags: tuple[str, ...] = field(default=())
    """Historic-defect flags of the model that change this check's statement or decision."""


def diff(php: dict[str, Any], model: dict[str, Any]) -> tuple[str, ...]:
    return tuple(sorted(k for k in set(php) | set(model) if php.get(k, "<absent>") != model.get(k, "<absent>")))


# ---- guarded statements ----------------------------------------------------------------------


def _statement_case(**args: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"row": C.run_row(), "clock": C.clock(), **args})


def _php_statement(
    target: str, method: str, args: Callable[[dict[str, Any]], list[Any]]
) -> Callable[[PhpProcess, dict[str, Any]], dict[str, Any]]:
    def run(php: PhpProcess, case: dict[str, Any]) -> dict[str, Any]:
        a = php.ask(
            {
                "op": "call",
                "setup": {"runs": [php_setup_row(case["row"])]},
                "target": target,
                "method": method,
                "args": args(case),
                "clock": case["clock"],
            }
        )
        if a["error"]:
            return {"error": a["error"].split(":")[0]}
        return {"ret": a["ret"], "affected": a["affected"], **php_view(_one(a["runs"], C.UID))}

    return run


def _model_statement(
    make: Callable[[dict[str, Any], Policy], Transition], ret: Callable[[UpdateResult, Policy], bool]
) -> Callable[[dict[str, Any], ModelEnv], dict[str, Any]]:
    def run(case: dict[str, Any], env: ModelEnv) -> dict[str, Any]:
        db = env.database()
        db.put(model_row(case["row"]))
        result, after = db.update(C.UUID, make(case, env.policy))
        return {"ret": ret(result, env.policy), "affected": env.affected_of(result), **model_view(after)}

    return run


def _matched(result: UpdateResult, _policy: Policy) -> bool:
    return bool(result.matched)


def _confirmed(result: UpdateResult, policy: Policy) -> bool:
    return lease_confirmed(result, policy)


def _statement_checks() -> list[Check]:
    lease = LEASE_S
    return [
        Check(
            NAMES[CLAIM_QUEUED],
            _statement_case(worker=C.identity),
            _php_statement("repo", "claimQueued", lambda c: [C.UID, c["worker"], c["clock"] + lease]),
            _model_statement(lambda c, p: ClaimQueued(c["worker"], c["clock"]), _matched),
            lambda c: (
                f"$repository->claimQueued({C.UID}, {_ident(c['worker'])}, {c['clock'] + lease}) at time() = {c['clock']}"  # noqa: E501
            ),
        ),
        Check(
            NAMES[RENEW_LEASE],
            _statement_case(me=C.identity),
            _php_statement("repo", "renewLease", lambda c: [C.UID, c["me"], c["clock"] + lease]),
            _model_statement(lambda c, p: RenewLease(c["me"], c["clock"]), _confirmed),
            lambda c: (
                f"$repository->renewLease({C.UID}, {_ident(c['me'])}, {c['clock'] + lease}) at time() = {c['clock']}"
            ),
            ("kb6_renew_trusts_changed_rows",),
        ),
        Check(
            NAMES[MARK_PENDING_EFFECT],
            _statement_case(me=C.identity, effect=st.sampled_from(C.EFFECTS[:4])),
            _php_statement("repo", "markPendingEffect", lambda c: [C.UID, c["me"], c["effect"], c["clock"] + lease]),
            _model_statement(lambda c, p: MarkPendingEffect(c["me"], c["effect"], c["clock"]), _confirmed),
            lambda c: (
                f"$repository->markPendingEffect({C.UID}, {_ident(c['me'])}, {_ident(c['effect'])}, {c['clock'] + lease}) at time() = {c['clock']}"  # noqa: E501
            ),
            ("kb6_renew_trusts_changed_rows",),
        ),
        Check(
            NAMES[FINISH_RUN],
            _statement_case(
                to=st.sampled_from(("completed", "failed", "cancelled")),
                reason=st.sampled_from(C.REASONS),
                error_class=st.sampled_from(("", "RuntimeException")),
                iterations=st.integers(0, 20),
                total_tokens=st.integers(0, 5000),
                owned_by=st.one_of(st.none(), C.identity),
            ),
            _php_statement(
                "repo",
                "finishRun",
                lambda c: [
                    C.UID,
                    c["to"],
                    c["iterations"],
                    False,
                    0,
                    0,
                    c["total_tokens"],
                    0.0,
                    c["error_class"],
                    c["reason"],
                    c["owned_by"],
                ],
            ),
            _model_statement(
                lambda c, p: FinishRun(
                    RunStatus(c["to"]),
                    TerminationReason(c["reason"]),
                    c["error_class"],
                    c["iterations"],
                    c["total_tokens"],
                    c["owned_by"],
                    c["clock"],
                    terminal_guard=not p.kb1_finish_unguarded,
                ),
                _matched,
            ),
            lambda c: (
                f"$repository->finishRun({C.UID}, {_ident(c['to'])}, {c['iterations']}, false, 0, 0, {c['total_tokens']}, 0.0, "  # noqa: E501
                f"{_ident(c['error_class'])}, {_ident(c['reason'])}, {_ident(c['owned_by'])}) at time() = {c['clock']}"
            ),
            ("kb1_finish_unguarded",),
        ),
        Check(
            NAMES[CANCEL],
            _statement_case(),
            _php_statement("persister", "cancel", lambda c: [C.UUID]),
            _model_statement(lambda c, p: Cancel(c["clock"]), _matched),
            lambda c: f"$persister->cancel('{C.UUID}') at time() = {c['clock']}",
        ),
        Check(
            NAMES[SUSPEND_RUN],
            _statement_case(for_input=st.booleans()),
            _php_statement("repo", "suspendRun", lambda c: [C.UID, '{"state":2}']),
            _model_statement(
                lambda c, p: Suspend(STATE, False, c["clock"], status_guard=not p.kb3_suspend_unguarded), _matched
            ),
            lambda c: f"$repository->suspendRun({C.UID}, '{{\"state\":2}}') at time() = {c['clock']}",
            ("kb3_suspend_unguarded",),
        ),
        Check(
            f"{SUSPEND_RUN} suspendRunForInput",
            _statement_case(),
            _php_statement("repo", "suspendRunForInput", lambda c: [C.UID, '{"state":2}']),
            _model_statement(
                lambda c, p: Suspend(STATE, True, c["clock"], status_guard=not p.kb3_suspend_unguarded), _matched
            ),
            lambda c: f"$repository->suspendRunForInput({C.UID}, '{{\"state\":2}}') at time() = {c['clock']}",
            ("kb3_suspend_unguarded",),
        ),
        Check(
            NAMES[CLAIM_FOR_RESUME],
            _statement_case(identity=C.identity),
            _php_statement("repo", "claimForResume", lambda c: [C.UID, c["identity"], c["clock"] + lease]),
            _model_statement(
                lambda c, p: ClaimForResume(c["identity"], False, c["clock"], leased=not p.kb10_unleased_segments),
                _matched,
            ),
            lambda c: (
                f"$repository->claimForResume({C.UID}, {_ident(c['identity'])}, {c['clock'] + lease}) at time() = {c['clock']}"  # noqa: E501
            ),
            ("kb10_unleased_segments",),
        ),
        Check(
            f"{CLAIM_FOR_RESUME} claimForResumeFromInput",
            _statement_case(identity=C.identity),
            _php_statement("repo", "claimForResumeFromInput", lambda c: [C.UID, c["identity"], c["clock"] + lease]),
            _model_statement(
                lambda c, p: ClaimForResume(c["identity"], True, c["clock"], leased=not p.kb10_unleased_segments),
                _matched,
            ),
            lambda c: (
                f"$repository->claimForResumeFromInput({C.UID}, {_ident(c['identity'])}, {c['clock'] + lease}) at time() = {c['clock']}"  # noqa: E501
            ),
            ("kb10_unleased_segments",),
        ),
        Check(
            NAMES[REQUEUE],
            _statement_case(me=C.identity),
            _php_statement("repo", "requeue", lambda c: [C.UID, c["me"]]),
            _model_statement(
                lambda c, p: Requeue(c["me"], c["clock"], clear_fence=not p.kb9_fence_survives_requeue), _matched
            ),
            lambda c: f"$repository->requeue({C.UID}, {_ident(c['me'])}) at time() = {c['clock']}",
            ("kb9_fence_survives_requeue",),
        ),
        Check(
            NAMES[REQUEUE_STALE],
            _statement_case(now=C.around(C.NOW)),
            _php_statement("repo", "requeueStale", lambda c: [C.UID, c["now"]]),
            _model_statement(
                lambda c, p: RequeueStale(c["now"], clear_fence=not p.kb9_fence_survives_requeue), _matched
            ),
            lambda c: f"$repository->requeueStale({C.UID}, {c['now']}) at time() = {c['clock']}",
            ("kb9_fence_survives_requeue",),
        ),
        Check(
            NAMES[DEAD_LETTER_STALE],
            _statement_case(now=C.around(C.NOW), reason=st.sampled_from(("not_retryable", "retries_exhausted"))),
            _php_statement("repo", "deadLetterStale", lambda c: [C.UID, c["now"], c["reason"]]),
            _model_statement(
                lambda c, p: DeadLetterStale(TerminationReason(c["reason"]), c["now"], c["clock"]), _matched
            ),
            lambda c: (
                f"$repository->deadLetterStale({C.UID}, {c['now']}, {_ident(c['reason'])}) at time() = {c['clock']}"
            ),
        ),
    ]


# ---- inserts and reads -------------------------------------------------------------------------


def _t1_php(php: PhpProcess, case: dict[str, Any]) -> dict[str, Any]:
    a = php.ask(
        {
            "op": "call",
            "setup": {},
            "target": "repo",
            "method": "startRun",
            "args": [C.UUID, 0, "", 0, case["identity"], case["lease"]],
            "clock": case["clock"],
        }
    )
    row = a["runs"][0] if a["runs"] else None
    return {
        "affected": a["affected"],
        "uid_is_row": row is not None and int(row["uid"]) == int(a["ret"]),
        **php_view(row),
    }


def _t1_model(case: dict[str, Any], env: ModelEnv) -> dict[str, Any]:
    db = env.database()
    row = db.insert(start_run(0, C.UUID, case["identity"], case["lease"], case["clock"]))
    return {"affected": 1, "uid_is_row": True, **model_view(row)}


def _t2_php(php: PhpProcess, case: dict[str, Any]) -> dict[str, Any]:
    a = php.ask(
        {
            "op": "call",
            "setup": {},
            "target": "repo",
            "method": "enqueueRun",
            "args": [C.UUID, 0, "", 0, case["request"]],
            "clock": case["clock"],
        }
    )
    row = a["runs"][0] if a["runs"] else None
    return {"affected": a["affected"], **php_view(row)}


def _t2_model(case: dict[str, Any], env: ModelEnv) -> dict[str, Any]:
    db = env.database()
    row = db.insert(enqueue_run(0, C.UUID, REQUEST, case["clock"]))
    return {"affected": 1, **model_view(row)}


KINDS = tuple(k.value for k in StepKind)


def _t6_php(php: PhpProcess, case: dict[str, Any]) -> dict[str, Any]:
    a = php.ask(
        {
            "op": "call",
            "setup": {"runs": [case["row"]] if case["with_row"] else []},
            "target": "repo",
            "method": "recordEvent",
            "args": [C.UID, case["sequence"], case["kind"], case["round"], 1.5, "{}"],
            "clock": case["clock"],
        }
    )
    ev = a["events"]
    return {
        "affected": a["affected"],
        "events": [(int(e["run"]), int(e["sequence"]), e["kind"], int(e["round"]), int(e["crdate"])) for e in ev],
        **php_view(_one(a["runs"], C.UID)),
    }


def _t6_model(case: dict[str, Any], env: ModelEnv) -> dict[str, Any]:
    db = env.database()
    if case["with_row"]:
        db.put(model_row(case["row"]))
    db.insert_event(
        C.UUID, EventRow(C.UID, case["sequence"], Step(StepKind(case["kind"]), case["round"]), case["clock"])
    )
    events = [(C.UID, e.sequence, e.step.kind.value, e.step.round_no, e.crdate) for e in db.events[C.UUID]]
    return {"affected": 1, "events": events, **model_view(db.find(C.UUID))}


RUNNING_OFTEN = st.one_of(st.just("running"), C.status)
"""Half the rows RUNNING: the only status the reaper's SELECT takes, so its decisions (requeue, the
dead-letters, a failed re-dispatch) are reached in every few cases, not one in a hundred."""


def _stale_rows() -> st.SearchStrategy[list[dict[str, Any]]]:
    def rows(n: int) -> st.SearchStrategy[list[dict[str, Any]]]:
        return st.tuples(
            *(
                C.run_row(uid=100 + i, uuid=f"00000000-0000-4000-8000-{100 + i:012d}", statuses=RUNNING_OFTEN)
                for i in range(n)
            )
        ).map(list)

    return st.integers(1, 5).flatmap(rows)


def _t12_php(php: PhpProcess, case: dict[str, Any]) -> dict[str, Any]:
    a = php.ask(
        {
            "op": "call",
            "setup": {"runs": case["rows"]},
            "target": "repo",
            "method": "findStaleRunning",
            "args": [case["now"], case["limit"]],
            "clock": case["now"],
            "dump": False,
        }
    )
    return {"selected": [r["$run"] for r in a["ret"]]}


def _t12_model(case: dict[str, Any], env: ModelEnv) -> dict[str, Any]:
    rows = [model_row(r) for r in case["rows"]]
    return {"selected": [r.uuid for r in find_stale_running(rows, case["now"], case["limit"])]}


def _events() -> st.SearchStrategy[list[list[int]]]:
    return st.lists(st.tuples(st.sampled_from((C.UID, C.UID, 99)), st.integers(0, 6)).map(list), max_size=6)


def _t15_php(php: PhpProcess, case: dict[str, Any]) -> dict[str, Any]:
    a = php.ask(
        {
            "op": "call",
            "setup": {
                "runs": [case["row"]],
                "events": [{"run": r, "sequence": s, "kind": "llm", "crdate": 1} for r, s in case["events"]],
            },
            "target": "persister",
            "method": "resumeHandle",
            "args": [{"$run": C.UUID}],
            "dump": False,
        }
    )
    handle = a["ret"]
    return {"position": handle["$handle"][2] if isinstance(handle, dict) else None}


def _t15_model(case: dict[str, Any], env: ModelEnv) -> dict[str, Any]:
    db = env.database()
    db.put(model_row(case["row"]))
    for run, seq in case["events"]:
        uuid = C.UUID if run == C.UID else "other"
        db.insert_event(uuid, EventRow(run, seq, Step(StepKind.LLM, 0), 1))
    if env.policy.kb2_resume_position_by_count:
        return {"position": db.count_events(C.UUID)}
    return {"position": db.max_sequence(C.UUID) + 1}


def _insert_read_checks() -> list[Check]:
    return [
        Check(
            NAMES[START_RUN],
            st.fixed_dictionaries({"identity": C.identity, "lease": C.around(C.NOW), "clock": C.clock()}),
            _t1_php,
            _t1_model,
            lambda c: (
                f"$repository->startRun('{C.UUID}', 0, '', 0, {_ident(c['identity'])}, {c['lease']}) at time() = {c['clock']}"  # noqa: E501
            ),
        ),
        Check(
            NAMES[ENQUEUE_RUN],
            st.fixed_dictionaries(
                {"request": st.sampled_from(('{"request":1}', '{"r":"x"}', "")), "clock": C.around(C.NOW)}
            ),
            _t2_php,
            _t2_model,
            lambda c: f"$repository->enqueueRun('{C.UUID}', 0, '', 0, {_ident(c['request'])}) at time() = {c['clock']}",
        ),
        Check(
            NAMES[RECORD_EVENT],
            st.fixed_dictionaries(
                {
                    "row": C.run_row(),
                    "with_row": st.booleans(),
                    "sequence": st.integers(0, 9),
                    "kind": st.sampled_from(KINDS),
                    "round": st.integers(0, 6),
                    "clock": C.clock(),
                }
            ),
            _t6_php,
            _t6_model,
            lambda c: (
                f"$repository->recordEvent({C.UID}, {c['sequence']}, '{c['kind']}', {c['round']}, 1.5, '{{}}') at time() = {c['clock']}"  # noqa: E501
            ),
        ),
        Check(
            NAMES[FIND_STALE_RUNNING],
            st.fixed_dictionaries({"rows": _stale_rows(), "now": C.around(C.NOW), "limit": st.integers(1, 5)}),
            _t12_php,
            _t12_model,
            lambda c: f"$repository->findStaleRunning({c['now']}, {c['limit']})",
        ),
        Check(
            NAMES[MAX_EVENT_SEQUENCE],
            st.fixed_dictionaries({"row": C.run_row(), "events": _events()}),
            _t15_php,
            _t15_model,
            lambda c: f"$persister->resumeHandle($repository->findByUuid('{C.UUID}'))  (maxEventSequence + 1)",
            ("kb2_resume_position_by_count",),
        ),
    ]


# ---- deciders --------------------------------------------------------------------------------

ERROR_KINDS = (
    "circuit_open",
    "connection",
    "network",
    "configuration",
    "response",
    "auth",
    "rate_limit",
    "unsupported",
    "provider",
    "audit",
    "unfenced",
    "runtime",
)
CODES = (0, 200, 301, 399, 400, 401, 402, 403, 404, 428, 429, 430, 499, 500, 501, 503, 599, 600, 1745712001)


def error_tree(depth: int = 2) -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.fixed_dictionaries({"cls": st.sampled_from(ERROR_KINDS), "code": st.sampled_from(CODES)})
    if depth == 0:
        return leaf
    chain = st.fixed_dictionaries({"cls": st.just("fallback"), "attempts": st.lists(error_tree(depth - 1), max_size=3)})
    return st.one_of(leaf, chain)


def model_error(t: dict[str, Any]) -> BaseException:
    code = int(t.get("code", 0))
    kind = t["cls"]
    if kind == "fallback":
        return FallbackChainExhaustedError([model_error(a) for a in t["attempts"]])
    simple: dict[str, Callable[[], BaseException]] = {
        "circuit_open": CircuitOpenError,
        "connection": ProviderConnectionError,
        "network": NetworkError,
        "configuration": ProviderConfigurationError,
        "unsupported": UnsupportedFeatureError,
        "provider": ProviderError,
        "audit": AuditPersistenceFailed,
        "unfenced": WriteWithoutDurableExecution,
        "runtime": GenericRuntimeError,
    }
    if kind in simple:
        return simple[kind]()
    coded: dict[str, Callable[[int], BaseException]] = {
        "response": ProviderResponseError,
        "auth": ProviderAuthenticationError,
        "rate_limit": ProviderRateLimitError,
    }
    return coded[kind](code)


def _classifier_check() -> Check:
    return Check(
        "classifier",
        st.fixed_dictionaries({"error": error_tree()}),
        lambda php, c: {"class": php.ask({"op": "classify", "error": c["error"]})["ret"]},
        lambda c, env: {
            "class": classify(
                model_error(c["error"]), fallback_chain_is_unknown=env.policy.kb13_fallback_chain_unknown
            ).value
        },
        lambda c: f"FailureClassifier::classify({json.dumps(c['error'])})",
        ("kb13_fallback_chain_unknown",),
    )


TOOL_NAMES = (
    "create_page_draft",
    "update_page_metadata",
    "search_pages",
    "Create_Page_Draft",
    "create_page_draft ",
    "mcp:fs.write",
    "x",
)


def _resolver_case() -> st.SearchStrategy[dict[str, Any]]:
    tool = st.tuples(st.sampled_from(TOOL_NAMES), st.sampled_from((None, *(e.value for e in ToolEffect))))
    tools = st.lists(tool, max_size=5, unique_by=lambda t: t[0]).map(
        lambda ts: [{"name": n, "effect": e} for n, e in ts]
    )
    return st.fixed_dictionaries({"tools": tools, "name": st.sampled_from((*TOOL_NAMES, "", "unknown_tool"))})


def _resolver_model(case: dict[str, Any], env: ModelEnv) -> dict[str, Any]:
    registry = Registry(
        tuple(ToolSpec(t["name"], None if t["effect"] is None else ToolEffect(t["effect"])) for t in case["tools"])
    )
    return {"effect": effect_for(registry, case["name"], env.policy).value}


def _resolver_check() -> Check:
    return Check(
        "resolver",
        _resolver_case(),
        lambda php, c: {"effect": php.ask({"op": "resolve", "tools": c["tools"], "name": c["name"]})["ret"]},
        _resolver_model,
        lambda c: (
            f"(new ToolEffectResolver(new ToolRegistry({json.dumps(c['tools'])})))->effectFor({_ident(c['name'])})"
        ),
    )


def _record_step_php(php: PhpProcess, case: dict[str, Any]) -> dict[str, Any]:
    step = {"kind": case["kind"], "round": case["round"], "durationMs": 2.0}
    a = php.ask(
        {
            "op": "call",
            "setup": {"runs": [case["row"]]},
            "target": "persister",
            "method": "recordStep",
            "args": [{"$handle": [C.UID, C.UUID, case["sequence"]]}, {"$step": step}],
            "clock": case["clock"],
            "fail": "insert" if case["fail"] else None,
        }
    )
    return {
        "ret": a["ret"],
        "threw": a["error"] is not None,
        "sequence_after": a["handle_sequence"],
        "events": [
            (int(e["run"]), int(e["sequence"]), e["kind"], int(e["round"]), int(e["crdate"])) for e in a["events"]
        ],
    }


def _record_step_model(case: dict[str, Any], env: ModelEnv) -> dict[str, Any]:
    driver = SyncDriver(db=env.database(), now=case["clock"])
    driver.db.put(model_row(case["row"]))
    if case["fail"]:
        driver.fail(lambda r: isinstance(r, InsertEvent), StoreError("injected"))
    handle = Handle(C.UUID, case["sequence"])
    seg = Segment(Context(env.policy, Registry(), "worker:x:1"), handle, None, False)
    threw = False
    try:
        ret = driver.run(record_step(seg, Step(StepKind(case["kind"]), case["round"]), ToolEffect.READ_ONLY))
    except Exception:
        ret, threw = None, True
    events = [
        (C.UID, e.sequence, e.step.kind.value, e.step.round_no, e.crdate) for e in driver.db.events.get(C.UUID, [])
    ]
    return {"ret": ret, "threw": threw, "sequence_after": handle.sequence, "events": events}


def _record_step_check() -> Check:
    kinds = ("request", "llm", "tool", "assembled", "context", "dropped")
    return Check(
        "recordStep",
        st.fixed_dictionaries(
            {
                "row": C.run_row(),
                "sequence": st.integers(0, 9),
                "kind": st.sampled_from(kinds),
                "round": st.integers(0, 6),
                "fail": st.booleans(),
                "clock": C.clock(),
            }
        ),
        _record_step_php,
        _record_step_model,
        lambda c: (
            f"$persister->recordStep(handle(uid {C.UID}, sequence {c['sequence']}), new RunStep('{c['kind']}', {c['round']}, 2.0))"  # noqa: E501
            + (" with the INSERT failing" if c["fail"] else "")
            + f" at time() = {c['clock']}"
        ),
    )


LIMITS = ("50", "1", "2", "2.7", "0", "-1", "abc", " 3", "1e1", "")


def _reap_case() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "rows": _stale_rows(),
            "clock": C.around(C.NOW),
            "limit": st.sampled_from(LIMITS),
            "bus": st.sampled_from(("ok", "throw", "throw", "none")),
        }
    )


def _rows_view(rows: list[dict[str, Any]] | list[RunRow], php: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in rows:
        if php:
            assert isinstance(r, dict)
            out.update(php_view(r, prefix=f"row{int(r['uid'])}"))
        else:
            assert isinstance(r, RunRow)
            out.update(model_view(r, prefix=f"row{r.uid}"))
    return out


def _reap_php(php: PhpProcess, case: dict[str, Any]) -> dict[str, Any]:
    a = php.ask(
        {
            "op": "reap",
            "setup": {"runs": case["rows"]},
            "limit": case["limit"],
            "bus": case["bus"],
            "clock": case["clock"],
        }
    )
    return {
        "exit": a["exit"],
        "counts": a["counts"],
        "sent": [s["uuid"] for s in a["sent"]],
        **_rows_view(a["runs"], True),
    }


def _reap_model(case: dict[str, Any], env: ModelEnv) -> dict[str, Any]:
    driver = SyncDriver(db=env.database(), now=case["clock"])
    for r in case["rows"]:
        driver.db.put(model_row(r))
    if case["bus"] == "throw":
        driver.fail(lambda r: isinstance(r, Dispatch), DispatchError("refused"), times=100)
    ctx = Context(env.policy, Registry(), "reaper:x:1")
    report = driver.run(reap(ctx, case["limit"], has_bus=case["bus"] != "none"))
    counts = [report.requeued, report.dead_lettered, report.skipped] if report.exit_code == 0 else None
    sent = [d.uuid for d in driver.dispatched]
    return {
        "exit": report.exit_code,
        "counts": counts,
        "sent": sent,
        **_rows_view(list(driver.db.rows.values()), False),
    }


def _reaper_check() -> Check:
    return Check(
        "reaper",
        _reap_case(),
        _reap_php,
        _reap_model,
        lambda c: (
            f"nrllm:agent:reap --limit={_ident(c['limit'])} (bus: {c['bus']}) at time() = {c['clock']} over {len(c['rows'])} row(s)"  # noqa: E501
        ),
        ("kb8_reaper_dispatch_failure_only_logged", "kb9_fence_survives_requeue"),
    )


def _recover_case() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "row": C.run_row(),
            "worker": C.identity,
            "error": error_tree(1),
            "bus": st.sampled_from(("ok", "throw", "throw", "none")),
            "clock": C.clock(),
        }
    )


def _recover_php(php: PhpProcess, case: dict[str, Any]) -> dict[str, Any]:
    a = php.ask(
        {
            "op": "recover",
            "setup": {"runs": [case["row"]]},
            "handle": [C.UID, C.UUID, 0],
            "worker": case["worker"],
            "error": case["error"],
            "bus": case["bus"],
            "clock": case["clock"],
        }
    )
    return {
        "outcome": a["ret"],
        "sent": [(s["uuid"], s["delay"]) for s in a["sent"]],
        **php_view(_one(a["runs"], C.UID)),
    }


def _recover_model(case: dict[str, Any], env: ModelEnv) -> dict[str, Any]:
    driver = SyncDriver(db=env.database(), now=case["clock"])
    driver.db.put(model_row(case["row"]))
    if case["bus"] != "ok":
        driver.fail(lambda r: isinstance(r, Dispatch), DispatchError("refused"), times=100)
    seg = Segment(Context(env.policy, Registry(), case["worker"]), Handle(C.UUID, 0), case["worker"], True)
    outcome = driver.run(recover(seg, model_error(case["error"])))
    sent = [(d.uuid, d.delay_ms) for d in driver.dispatched]
    return {"outcome": outcome.value, "sent": sent, **model_view(driver.db.find(C.UUID))}


def _recovery_check() -> Check:
    return Check(
        "recovery",
        _recover_case(),
        _recover_php,
        _recover_model,
        lambda c: (
            f"$recovery->recover(handle(uid {C.UID}), '{C.UUID}', {_ident(c['worker'])}, {json.dumps(c['error'])}, []) "
            f"(bus: {c['bus']}) at time() = {c['clock']}"
        ),
        ("kb7_worker_settles_unguarded", "kb9_fence_survives_requeue", "kb13_fallback_chain_unknown"),
    )


def all_checks() -> list[Check]:
    return [
        *_insert_read_checks()[:2],
        *_statement_checks(),
        *_insert_read_checks()[2:],
        _classifier_check(),
        _resolver_check(),
        _record_step_check(),
        _reaper_check(),
        _recovery_check(),
    ]


def check_names() -> list[str]:
    return [c.name for c in all_checks()]
