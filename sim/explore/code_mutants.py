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

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import model.hooks
import model.reaper
import model.recovery
import model.resume
from model.constants import MAX_REQUEUES
from model.failures import RunLeaseLost, StoreError, classify
from model.records import EventRow, Registry, Step
from model.requests import InsertEvent, ReadClock, Update
from model.segment import Gen
from model.tools import effect_for
from model.transitions import RenewLease
from model.vocab import FailureClass, ToolEffect


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
