"""ToolEffectResolver (`model.tools.effect_for`) and what the runtime does with its answer (spec 3.3, 3.4, 6).

Peer: ToolEffectResolverTest, ToolEffectCoverageTest, AgentRuntimeWiringTest. Each test
checks the resolver and the effect the runtime acted on while driving a run.
"""

from __future__ import annotations

from model.failures import StoreError
from model.policy import HEAD
from model.records import Registry, ToolSpec
from model.requests import InsertEvent, InsertRun, InvokeTool
from model.tools import effect_for
from model.transitions import MarkPendingEffect
from model.vocab import Outcome, RunStatus, StepKind, ToolEffect

SHIPPED_READERS = ("search_pages", "get_page", "list_content_elements", "read_file_metadata")
SHIPPED_IDEMPOTENT = ("update_page_metadata", "set_file_alternative_text", "move_content_element")
SHIPPED_NON_IDEMPOTENT = (
    "create_content_element_draft",
    "create_translation_draft",
    "create_page_draft",
    "attach_file_to_content_element",
)
SHIPPED = Registry(
    tuple(ToolSpec(n) for n in SHIPPED_READERS)
    + tuple(ToolSpec(n, ToolEffect.IDEMPOTENT_WRITE) for n in SHIPPED_IDEMPOTENT)
    + tuple(ToolSpec(n, ToolEffect.NON_IDEMPOTENT_WRITE) for n in SHIPPED_NON_IDEMPOTENT)
)


def _tool_step_effects(kit):
    return [r.effect for r in kit.d.of(InsertEvent) if r.event.step.kind is StepKind.TOOL]


def test_uses_an_explicit_declaration(kit):
    """Peer: ToolEffectResolverTest::usesAnExplicitDeclaration — and the tool step is audited with it."""
    registry = Registry((ToolSpec("t", ToolEffect.IDEMPOTENT_WRITE, remote=True, server_requires_approval=False),))
    assert effect_for(registry, "t", HEAD) is ToolEffect.IDEMPOTENT_WRITE

    kit.interactive(kit.turn("t"), offered=("t",), registry=registry)

    assert [r.effect for r in kit.d.of(InvokeTool)] == ["idempotent_write"]
    assert _tool_step_effects(kit) == ["idempotent_write"]


def test_defaults_an_undeclared_tool_to_read_only(kit):
    """Peer: ToolEffectResolverTest::defaultsAnUndeclaredToolToReadOnly."""
    assert effect_for(kit.registry, "search", HEAD) is ToolEffect.READ_ONLY

    kit.interactive(kit.turn("search"))

    assert _tool_step_effects(kit) == ["read_only"]
    assert kit.updates(MarkPendingEffect) == []


def test_resolves_by_name_through_the_registry(kit):
    """Peer: ToolEffectResolverTest::resolvesByNameThroughTheRegistry — the segment's own registry
    decides: the same name resolves differently after a deploy swapped the registry."""
    before = Registry((ToolSpec("t", remote=True, server_requires_approval=False),))
    after = Registry((ToolSpec("t", ToolEffect.NON_IDEMPOTENT_WRITE, remote=True, server_requires_approval=False),))

    kit.interactive(kit.turn("t"), uuid="a", offered=("t",), registry=before)
    kit.interactive(kit.turn("t"), uuid="b", offered=("t",), registry=after)

    assert [r.effect for r in kit.d.of(InvokeTool)] == ["read_only", "non_idempotent_write"]


def test_fails_closed_for_an_unknown_name(kit):
    """Peer: ToolEffectResolverTest::failsClosedForAnUnknownName — on a leased segment the unknown name
    is stamped non_idempotent_write (the hook fires before invoke refuses it), audited as a write,
    and nothing executes (spec 3.4 note)."""
    assert effect_for(kit.registry, "no_such_tool", HEAD) is ToolEffect.NON_IDEMPOTENT_WRITE
    kit.enqueue(kit.turn("no_such_tool"))

    assert kit.run_queued() is Outcome.COMPLETED

    assert [t.effect for t in kit.updates(MarkPendingEffect)] == ["non_idempotent_write", ""]
    assert _tool_step_effects(kit) == ["non_idempotent_write"]
    assert kit.tool_events()[0].step.is_error
    assert kit.d.of(InvokeTool) == []


def test_only_tools_listed_as_writers_resolve_to_a_write_effect():
    """Peer: ToolEffectCoverageTest::onlyToolsListedAsWritersResolveToAWriteEffect — the exact
    shipped writer set of spec 6, split by retry safety."""
    writers = {t.name for t in SHIPPED.tools if effect_for(SHIPPED, t.name, HEAD).is_write}
    unsafe = {t.name for t in SHIPPED.tools if not effect_for(SHIPPED, t.name, HEAD).is_safe_to_retry}

    assert writers == set(SHIPPED_IDEMPOTENT) | set(SHIPPED_NON_IDEMPOTENT)
    assert unsafe == set(SHIPPED_NON_IDEMPOTENT)


def test_an_unknown_tool_name_is_refused_outright_on_an_unleased_segment(kit):
    """Peer: ToolEffectCoverageTest::anUnknownToolNameIsTreatedAsTheStrictestEffect — at run level
    (spec 3.4 note): on an unpersisted, unleased segment the strictest effect makes the pre-tool
    hook refuse the call (WriteWithoutDurableExecution) ⇒ FAILED."""
    kit.d.fail(kit.req(InsertRun), StoreError())

    assert kit.interactive(kit.turn("no_such_tool")) is Outcome.FAILED
    assert kit.d.of(InvokeTool) == []


def test_an_unknown_name_resolves_read_only_when_the_strictest_rule_is_off(kit):
    """Policy flag unknown_tool_is_strictest (ADR-111): off ⇒ read_only, so nothing is fenced."""
    policy = HEAD.with_flags(unknown_tool_is_strictest=False)
    assert effect_for(kit.registry, "no_such_tool", policy) is ToolEffect.READ_ONLY

    kit.interactive(kit.turn("no_such_tool"), policy=policy)

    assert kit.updates(MarkPendingEffect) == []


def test_the_autowired_runtime_can_classify_a_tools_effect(kit):
    """Peer: AgentRuntimeWiringTest::theAutowiredRuntimeCanClassifyAToolsEffect — HEAD wires a
    resolver, so a write is fenced and its failed audit fails the run."""
    kit.d.fail(kit.event(StepKind.TOOL), StoreError())

    assert kit.interactive(kit.turn("mcp_write")) is Outcome.FAILED

    assert [t.effect for t in kit.updates(MarkPendingEffect)] == ["non_idempotent_write", ""]


def test_a_runtime_without_a_resolver_treats_every_tool_as_read_only(kit):
    """Spec 6: constructed without a resolver (typed_effects off) every tool is read_only — fence
    and write audit become no-ops: the write runs unfenced and its failed audit is ignored."""
    policy = HEAD.with_flags(typed_effects=False)
    kit.d.fail(kit.event(StepKind.TOOL), StoreError())

    assert kit.interactive(kit.turn("mcp_write"), policy=policy) is Outcome.COMPLETED

    assert kit.updates(MarkPendingEffect) == []
    assert len(kit.d.landings) == 1


def test_an_unresolvable_pending_call_makes_the_turn_count_as_a_write(kit):
    """Spec 6, ADR-132 gate 3: after a deploy removed a tool of the pending turn, the turn counts as
    a write, so an approval that cannot be recorded releases the run instead of resuming it."""
    kit.interactive(kit.turn("confirm", "lookup"))
    deployed = Registry(tuple(t for t in kit.registry.tools if t.name != "lookup"))
    kit.d.fail(kit.event(StepKind.APPROVAL), StoreError())

    assert kit.approve(registry=deployed) is Outcome.AWAITING_APPROVAL

    assert kit.d.landings == []
    assert kit.row().status is RunStatus.WAITING_FOR_APPROVAL
