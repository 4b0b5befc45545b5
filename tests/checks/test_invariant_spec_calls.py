"""invoked_tool_known_and_offered (checks/spec_calls.py): the tool server runs only a call spec 3.2's
`invoke` does not refuse, on hand-built histories with near misses."""

from __future__ import annotations

from invariant_histories import INVOKE, OK, WORKER, WORLD, History, judge

from checks import Validity
from checks.history import EVENT, PLAN, TOOL

NAME = "invoked_tool_known_and_offered"


def _plan(b: History, offered: list[str] | None = None, *, run: str = "r1") -> int:
    """The creator's plan: ``offered`` only when the run was offered a subset of the scenario's tools."""
    extra = {} if offered is None else {"offered": offered}
    return b.add(PLAN, OK, run=run, process=WORLD, kind="queued", stops=[], stop_kinds=[], **extra)


def _invoke(b: History, tool: str, *, true_effect: str = "read_only", call: str = "1.0", run: str = "r1") -> int:
    """The tool server's own record of a call it executes (``true_effect``: the process's loaded code)."""
    index = b.add(TOOL, INVOKE, run=run, call=call, tool=tool, effect=true_effect, true_effect=true_effect,
                  identity=WORKER, key="", remote=False)  # fmt: skip
    b.add(TOOL, OK, run=run, execution=1, landed=False, replayed=False)
    return index


def _segment(b: History) -> None:
    b.enqueue()
    b.segment("run_queued")
    b.claim()


def test_calls_of_offered_known_tools_hold() -> None:
    b = History()
    _plan(b, ["search_pages", "send_email"])
    _segment(b)
    _invoke(b, "search_pages")
    _invoke(b, "send_email", true_effect="non_idempotent_write", call="1.1")
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID and verdict.explanation.startswith("2 ")


def test_a_plan_without_a_subset_offers_every_tool() -> None:
    b = History()
    _plan(b)
    _segment(b)
    _invoke(b, "search_pages")
    assert judge(NAME, b).valid is Validity.VALID


def test_a_call_of_a_tool_the_run_was_not_offered_is_a_violation() -> None:
    b = History()
    _plan(b, ["search_pages"])
    _segment(b)
    _invoke(b, "search_pages")
    ran = _invoke(b, "send_email", true_effect="non_idempotent_write", call="1.1")
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (ran,)
    assert "not offered" in verdict.explanation


def test_a_call_of_a_tool_a_deploy_renamed_away_is_a_violation() -> None:
    """The loop.py:74 mutant: the name is still offered, the process's loaded code lacks it."""
    b = History()
    _plan(b)
    _segment(b)
    ran = _invoke(b, "search_pages", true_effect="unknown")
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.INVALID and verdict.witness == (ran,)
    assert "lacks" in verdict.explanation


def test_near_miss_an_offered_subset_of_another_run_does_not_apply() -> None:
    b = History()
    _plan(b, ["search_pages"], run="r2")
    _plan(b)
    _segment(b)
    _invoke(b, "send_email", true_effect="non_idempotent_write")
    assert judge(NAME, b).valid is Validity.VALID


def test_near_miss_a_refused_call_is_only_a_tool_step() -> None:
    """Head's refusal: an error tool step of an unknown, not-offered name, and no tool-server record."""
    b = History()
    _plan(b, ["search_pages"])
    _segment(b)
    b.add(EVENT, INVOKE, seq=3, kind="tool", round=1, tool="send_email", call="1.0", execution=0,
          effect="non_idempotent_write", true_effect="unknown", identity=WORKER)  # fmt: skip
    verdict = judge(NAME, b)
    assert verdict.valid is Validity.VALID and verdict.explanation.startswith("0 ")


def test_near_miss_the_runtimes_effect_label_is_never_read() -> None:
    """The runtime resolved the unknown name as a write; only the world's true effect counts."""
    b = History()
    _plan(b)
    _segment(b)
    b.add(TOOL, INVOKE, call="1.0", tool="search_pages", effect="non_idempotent_write", true_effect="read_only",
          identity=WORKER, key="", remote=False)  # fmt: skip
    assert judge(NAME, b).valid is Validity.VALID
