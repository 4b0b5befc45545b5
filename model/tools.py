"""ToolEffectResolver and the approval / input rules of a tool call (spec section 6).

Pure functions of a registry snapshot and a policy. The resolver is what the runtime
believes; the world's ledger records what a tool really is. They differ after a deploy
(a stale name resolves to the strictest effect) or when no resolver is wired.
"""

from __future__ import annotations

from model.policy import Policy
from model.records import Registry, ToolCall, ToolSpec
from model.vocab import ToolEffect


def effect_for(registry: Registry, name: str, policy: Policy) -> ToolEffect:
    """`ToolEffectResolver::effectFor(name)` as the runtime sees it under ``policy``.

    No resolver wired (pre-ADR-111) ⇒ read_only for everything. Otherwise the declared
    effect (undeclared ⇒ read_only); an unknown name ⇒ non_idempotent_write, or
    read_only when ``unknown_tool_is_strictest`` is off.
    """
    if not policy.typed_effects:
        return ToolEffect.READ_ONLY
    spec = registry.get(name)
    if spec is None:
        return ToolEffect.NON_IDEMPOTENT_WRITE if policy.unknown_tool_is_strictest else ToolEffect.READ_ONLY
    return spec.declared_effect


def requires_approval(spec: ToolSpec | None, policy: Policy) -> bool:
    """`ToolApprovalRule`: marker, a remote tool whose server requires approval, or (ADR-134)
    a non-remote tool declaring a write. An unknown name is not gated (invoke refuses it)."""
    if spec is None:
        return False
    if spec.approval_marker:
        return True
    if spec.remote:
        return spec.server_requires_approval
    return policy.writes_require_approval and spec.declared_effect.is_write


def requires_input(spec: ToolSpec | None) -> bool:
    return spec is not None and spec.needs_input


def turn_declares_write(registry: Registry, calls: tuple[ToolCall, ...]) -> bool:
    """ADR-132 gate 3 (`turnDeclaresWrite`): an unresolvable name counts as a write."""
    for call in calls:
        spec = registry.get(call.name)
        if spec is None or spec.declared_effect.is_write:
            return True
    return False


def may_retry_after_fence(pending_effect: str) -> bool:
    """`AgentRuntime::mayRetryAfterFence`: unparseable (incl. '') ⇒ allowed; else unless non-idempotent."""
    try:
        effect = ToolEffect(pending_effect)
    except ValueError:
        return True
    return effect.is_safe_to_retry
