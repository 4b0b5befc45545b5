"""Code mutants: deliberately wrong versions of the reference runtime's own functions.

A flag mutant flips a :class:`model.policy.Policy` field, so it can only break what a flag
switches. A code mutant replaces a function of the model itself for the duration of a search:
a classifier that files 5xx answers as client errors, a resolver that files non-idempotent
tools as idempotent, a ``recordStep`` that throws instead of returning false, and one that
returns true without persisting. Each is a bug the real runtime could ship; the invariants
must catch each from the world's ground truth (the fault plan's failure class, the tool's
definition, the events actually stored), since the runtime's own labels carry the bug.

Patching is in-process (module attributes are swapped and restored), so a search of a code
mutant must run its simulations in this process. May import the model and nothing of the world.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import model.entrypoints
import model.executor
import model.hooks
import model.loop
import model.reaper
import model.recovery
import model.resume
import model.settle
from model.constants import LEASE_S, MAX_REQUEUES
from model.failures import RunCancellationRequested, RunEnqueueFailed, RunLeaseLost, StoreError, classify
from model.records import EventRow, Registry, RunRow, Step
from model.requests import FindRun, InsertEvent, ReadClock, Update
from model.segment import Gen
from model.tools import effect_for
from model.transitions import RenewLease, replace_row
from model.vocab import FailureClass, Outcome, RunStatus, TerminationReason, ToolEffect


@dataclass(frozen=True)
class Patch:
    """Replace ``module.attribute`` with ``value`` while the mutant is applied."""

    module: Any
    attribute: str
    value: Any


@dataclass(frozen=True)
class CodeMutant:
    name: str
    meaning: str
    patches: tuple[Patch, ...]
    targets: tuple[tuple[str, tuple[str, ...]], ...]
    """(scenario, fault families) to search, most specific first."""


def _classify_5xx_as_client_error(error: BaseException, *, fallback_chain_is_unknown: bool = False) -> FailureClass:
    found = classify(error, fallback_chain_is_unknown=fallback_chain_is_unknown)
    return FailureClass.CLIENT_ERROR if found is FailureClass.SERVER_ERROR else found


def _resolve_non_idempotent_as_idempotent(registry: Registry, name: str, policy: Any) -> ToolEffect:
    found = effect_for(registry, name, policy)
    return ToolEffect.IDEMPOTENT_WRITE if found is ToolEffect.NON_IDEMPOTENT_WRITE else found


def _record_step_throws(
    seg: model.hooks.Segment, step: Step, effect: ToolEffect, site: str = "executor.record"
) -> Gen[bool]:
    """recordStep without its catch: a store error escapes (the spec says it never throws)."""
    handle = seg.handle
    if handle is None:
        return False
    now = yield ReadClock()
    yield InsertEvent(handle.uuid, EventRow(0, handle.sequence, step, now), effect.value, site)
    handle.sequence += 1
    return True


def _record_step_lies(
    seg: model.hooks.Segment, step: Step, effect: ToolEffect, site: str = "executor.record"
) -> Gen[bool]:
    """recordStep that reports success when the insert failed: nothing persisted, true returned."""
    handle = seg.handle
    if handle is None:
        return False
    now = yield ReadClock()
    try:
        yield InsertEvent(handle.uuid, EventRow(0, handle.sequence, step, now), effect.value, site)
    except StoreError:
        return True
    handle.sequence += 1
    return True


def _renew_never_clears(seg: model.hooks.Segment, effect: ToolEffect) -> Gen[None]:
    """renew-or-clear that always renews (T4): a write step's boundary leaves its fence standing."""
    owner = seg.lease_owner
    if owner is None:
        return
    now = yield ReadClock()
    try:
        result = yield Update(seg.uuid, RenewLease(owner, now), "executor.boundary")
    except StoreError:
        raise RunLeaseLost("renewal failed") from None
    if not model.hooks.lease_confirmed(result, seg.policy):
        raise RunLeaseLost("lease lost at the step boundary")


def _record_step_patches(fake: Callable[..., Any]) -> tuple[Patch, ...]:
    return (Patch(model.hooks, "record_step", fake), Patch(model.resume, "record_step", fake))


CODE_MUTANTS: tuple[CodeMutant, ...] = (
    CodeMutant(
        "classifier_5xx_client_error",
        "FailureClassifier files a 5xx answer as clientError (not retryable) in the recovery",
        (Patch(model.recovery, "classify", _classify_5xx_as_client_error),),
        (("default", ("provider",)), ("same_second_renewals", ("provider",))),
    ),
    CodeMutant(
        "resolver_non_idempotent_as_idempotent",
        "ToolEffectResolver resolves a non_idempotent_write tool as idempotent_write",
        (Patch(model.hooks, "effect_for", _resolve_non_idempotent_as_idempotent),),
        (("tool_outlives_lease", ("slow",)), ("worker_crash_mid_write", ("crash",)), ("default", ("slow", "crash"))),
    ),
    CodeMutant(
        "record_step_throws",
        "recordStep lets the store error through instead of returning false",
        _record_step_patches(_record_step_throws),
        (("audit_blip_read_only", ("audit",)), ("default", ("audit",))),
    ),
    CodeMutant(
        "record_step_lies",
        "recordStep returns true without persisting when the insert failed",
        _record_step_patches(_record_step_lies),
        (("audit_failure_after_write", ("audit",)), ("default", ("audit",))),
    ),
)
CODE_MUTANTS = (
    *CODE_MUTANTS,
    CodeMutant(
        "fence_never_cleared",
        "the boundary after a write step renews (T4) instead of clearing the fence (T5 '')",
        (Patch(model.hooks, "_renew_or_clear", _renew_never_clears),),
        (("happy_path", ("cancel", "crash")), ("default", ("crash", "slow"))),
    ),
    CodeMutant(
        "requeue_budget_off_by_one",
        "both deciders compare the requeue count against MAX_REQUEUES + 1 (a fourth requeue is allowed)",
        (
            Patch(model.recovery, "MAX_REQUEUES", MAX_REQUEUES + 1),
            Patch(model.reaper, "MAX_REQUEUES", MAX_REQUEUES + 1),
        ),
        (("default", ("provider",)), ("tool_outlives_lease", ("slow", "provider")), ("default", ("slow", "provider"))),
    ),
)


# ---- mutants of what the runtime tells: each breaks one row of the outcome table ---------

_EXECUTE = model.executor.execute
_RECOVER = model.recovery.recover
_ENQUEUE = model.entrypoints.enqueue
_CANCEL = model.entrypoints.cancel
_SETTLE_DEAD_LETTERED = model.settle.settle_dead_lettered
_SETTLE_FAILED = model.settle.settle_failed


def _execute_settles_after_lost_lease(seg: Any, request: Any, seed: Any = None) -> Gen[Outcome]:
    """A segment that lost its lease settles the run FAILED anyway (unguarded), instead of stopping."""
    outcome = yield from _EXECUTE(seg, request, seed)
    if outcome is Outcome.LEASE_LOST and seg.handle is not None:
        yield from _SETTLE_FAILED(seg.policy, seg.uuid, "RunLeaseLostException", owned_by=None, site="executor.lost")
        return Outcome.FAILED
    return outcome


@dataclasses.dataclass(frozen=True, slots=True)
class _LongRenewal(RenewLease):
    """A T4 that renews the lease for two leases."""

    def apply(self, row: RunRow) -> RunRow | None:
        renewed = RenewLease.apply(self, row)
        return None if renewed is None else replace_row(renewed, lease_expires=self.now + 2 * LEASE_S)


def _on_record_skips_cancelled_step(seg: Any, step: Step) -> Gen[None]:
    """The boundary that finds its run cancelled stops at once, without persisting its step."""
    if seg.handle is not None:
        try:
            row = yield FindRun(seg.uuid, "executor.cancellation_probe")
        except StoreError:
            row = None
        if row is not None and row.status is RunStatus.CANCELLED:
            raise RunCancellationRequested("cancelled")
    yield from _ON_RECORD(seg, step)


_ON_RECORD = model.hooks.on_record


def _recover_claims_requeued(seg: Any, error: BaseException) -> Gen[Outcome]:
    """Recovery whose refused requeue (LEASE_LOST) is reported to the caller as REQUEUED."""
    outcome = yield from _RECOVER(seg, error)
    return Outcome.REQUEUED if outcome is Outcome.LEASE_LOST else outcome


def _dead_letter_always_counted(row: RunRow, reason: TerminationReason, now: int) -> Gen[bool]:
    """The reaper counts a dead-letter whether or not its statement matched."""
    yield from _REAPER_DEAD_LETTER(row, reason, now)
    return True


_REAPER_DEAD_LETTER = model.reaper._dead_letter


def _enqueue_hides_failure(ctx: Any, uuid: str, request: Any, *, has_bus: bool = True) -> Gen[str]:
    """enqueue that returns the run's uuid even when it could not store or wake the run."""
    try:
        return (yield from _ENQUEUE(ctx, uuid, request, has_bus=has_bus))
    except RunEnqueueFailed:
        return uuid


def _cancel_always_true(ctx: Any, uuid: str) -> Gen[bool]:
    """cancel that reports success whatever its statement did."""
    yield from _CANCEL(ctx, uuid)
    return True


def _settle_failed_blames_provider(policy: Any, uuid: str, error_class: str, *, owned_by: Any, site: str) -> Gen[bool]:
    return (yield from _SETTLE_FAILED(policy, uuid, "ProviderException", owned_by=owned_by, site=site))


def _dead_letter_blames_provider(policy: Any, uuid: str, reason: Any, error_class: str, **kw: Any) -> Gen[bool]:
    return (yield from _SETTLE_DEAD_LETTERED(policy, uuid, reason, "ProviderException", **kw))


CODE_MUTANTS = (
    *CODE_MUTANTS,
    CodeMutant(
        "lost_lease_settles",
        "a segment that lost its lease settles the run FAILED (unguarded) instead of stopping (ADR-104)",
        (
            Patch(model.entrypoints, "execute", _execute_settles_after_lost_lease),
            Patch(model.resume, "execute", _execute_settles_after_lost_lease),
        ),
        (("tool_outlives_lease", ("slow",)), ("default", ("store", "slow"))),
    ),
    CodeMutant(
        "renewal_overshoots_lease",
        "the heartbeat (T4) renews the lease for two leases instead of one",
        (Patch(model.hooks, "RenewLease", _LongRenewal),),
        (("happy_path", ("crash",)), ("default", ("crash",))),
    ),
    CodeMutant(
        "cancel_probe_skips_step",
        "the boundary that finds its run cancelled stops without persisting its step (ADR-103)",
        (Patch(model.loop, "on_record", _on_record_skips_cancelled_step),),
        (("cancel_mid_run", ()), ("default", ("cancel",))),
    ),
    CodeMutant(
        "recovery_claims_requeued",
        "recovery reports REQUEUED to its caller when its owner requeue (T11) was refused",
        (Patch(model.executor, "recover", _recover_claims_requeued),),
        (("single_run", ("provider", "store")), ("default", ("provider", "cancel", "store"))),
    ),
    CodeMutant(
        "reaper_counts_refused_dead_letter",
        "the reaper counts (and prints) a dead-letter whose statement matched nothing or threw",
        (Patch(model.reaper, "_dead_letter", _dead_letter_always_counted),),
        (("abandoned_interactive", ("store", "crash")), ("default", ("store", "crash"))),
    ),
    CodeMutant(
        "enqueue_hides_failure",
        "enqueue returns the run's uuid when it could not store the row or dispatch its wake-up",
        (Patch(model.entrypoints, "enqueue", _enqueue_hides_failure),),
        (("single_run", ("dispatch", "store")), ("default", ("dispatch", "store"))),
    ),
    CodeMutant(
        "cancel_always_true",
        "cancel reports success whether or not its T8 matched",
        (Patch(model.entrypoints, "cancel", _cancel_always_true),),
        (("duplicate_wakeup", ("cancel", "duplicate")), ("default", ("cancel",))),
    ),
    CodeMutant(
        "failed_settle_blames_provider",
        "every FAILED settle of a segment records ProviderException as its error class",
        (
            Patch(model.executor, "settle_failed", _settle_failed_blames_provider),
            Patch(model.recovery, "settle_dead_lettered", _dead_letter_blames_provider),
        ),
        (("audit_failure_after_write", ()), ("default", ("audit",))),
    ),
)
CODE_MUTANT_NAMES: tuple[str, ...] = tuple(m.name for m in CODE_MUTANTS)


def code_mutant(name: str) -> CodeMutant:
    for mutant in CODE_MUTANTS:
        if mutant.name == name:
            return mutant
    raise KeyError(name)


@contextmanager
def applied(mutant: CodeMutant) -> Iterator[None]:
    """The model with ``mutant``'s patches in place; restored on exit, whatever happens."""
    with ExitStack() as stack:
        for patch in mutant.patches:
            original = getattr(patch.module, patch.attribute)
            stack.callback(setattr, patch.module, patch.attribute, original)
            setattr(patch.module, patch.attribute, patch.value)
        yield


__all__ = ["CODE_MUTANTS", "CODE_MUTANT_NAMES", "CodeMutant", "Patch", "applied", "code_mutant"]
