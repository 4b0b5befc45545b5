"""reports.timeline.render: a legend, then one line per shown record; reads and renewals folded."""

from __future__ import annotations

from typing import Any

from checks import history as H
from checks.history import Op, OpType
from model.statements import CLAIM_QUEUED, NAMES, RENEW_LEASE
from reports.timeline import LEGEND, render
from sim.world.simulate import simulate

ROW = {
    "status": "running",
    "claimed_by": "worker:h1:101",
    "lease_expires": 900,
    "pending_effect": "",
    "requeue_count": 0,
}


def op(
    index: int, name: str, type_: OpType, value: dict[str, Any], *, process: str = "worker1#1", run: str = "run-001"
) -> Op:
    return Op(index, float(index), process, name, run, type_, value)


def read_ok(index: int) -> Op:
    return op(index, H.READ, OpType.OK, {"what": "FindRun", "site": "executor.cancellation_probe", "result": "running"})


def renewal(index: int) -> Op:
    value = {"transition": NAMES[RENEW_LEASE], "site": "executor.boundary", "identity": "worker:h1:101"}
    return op(index, H.STORE, OpType.OK, {**value, "matched": True, "changed": True, "row": ROW})


def claim(index: int) -> Op:
    value = {"transition": NAMES[CLAIM_QUEUED], "site": "run_queued.claim", "identity": "worker:h1:101"}
    return op(index, H.STORE, OpType.OK, {**value, "matched": True, "changed": True, "row": ROW})


def fault(index: int) -> Op:
    value = {"family": "crash", "kind": "after", "target": "worker1#1", "request": 7}
    return op(index, H.FAULT, OpType.INFO, value, process=H.NEMESIS)


def crash(index: int) -> Op:
    return op(
        index, H.CRASH, OpType.INFO, {"process": "worker1#1", "identity": "worker:h1:101"}, process=H.NEMESIS, run=""
    )


def restart(index: int) -> Op:
    return op(index, H.RESTART, OpType.INFO, {"process": "worker1#2"}, process=H.NEMESIS, run="")


def landing(index: int) -> Op:
    value = {"call": "1.0", "tool": "mcp_create_ticket", "effect": "non_idempotent_write", "execution": 3}
    return op(index, H.LANDING, OpType.OK, {**value, "identity": "worker:h1:101"}, process=H.WORLD)


def body(lines: list[str]) -> list[str]:
    assert lines[0] == LEGEND
    return lines[1:]


def test_the_legend_comes_first() -> None:
    assert render([claim(0)])[0] == LEGEND


def test_an_empty_history_renders_only_the_legend() -> None:
    assert render([]) == [LEGEND]


def test_the_legend_explains_every_symbol_the_timeline_uses() -> None:
    for symbol in ("▶", "■", "✎", "✗", "◆", "☁", "⚙", "★", "✉", "?", "⚡", "☠", "↻", "║"):
        assert symbol in LEGEND


def test_a_line_carries_time_index_process_and_run() -> None:
    (line,) = body(render([claim(12)]))
    assert line.split()[:4] == ["12.00s", "#12", "worker1#1", "run-001"]
    assert NAMES[CLAIM_QUEUED] in line and "running by worker:h1:101" in line


def test_a_record_without_a_run_shows_a_dash() -> None:
    (line,) = body(render([crash(3)]))
    assert line.split()[3] == "-"


def test_reads_are_folded_by_default() -> None:
    assert body(render([read_ok(0), claim(1), read_ok(2)])) == body(render([claim(1)]))


def test_renewals_are_folded_by_default() -> None:
    assert body(render([renewal(0)])) == []


def test_renewals_are_shown_when_verbose() -> None:
    (line,) = body(render([renewal(0)], verbose=True))
    assert NAMES[RENEW_LEASE] in line


def test_reads_are_shown_when_verbose() -> None:
    assert body(render([read_ok(0)], verbose=True))


def test_a_failed_read_is_always_shown() -> None:
    failed = op(0, H.READ, OpType.FAIL, {"what": "FindRun", "site": "run_queued.precheck", "error": "StoreError"})
    (line,) = body(render([failed]))
    assert "✗ read FindRun" in line


def test_a_fault_is_shown_with_its_family_kind_and_target() -> None:
    (line,) = body(render([fault(0)]))
    assert "⚡ crash/after on worker1#1" in line


def test_a_crash_and_a_restart_are_shown() -> None:
    crashed, restarted = body(render([crash(0), restart(1)]))
    assert "☠ worker1#1 crashed" in crashed
    assert "↻ worker1#2 started" in restarted


def test_a_landing_is_shown_with_its_tool_call_and_execution() -> None:
    (line,) = body(render([landing(0)]))
    assert "★ mcp_create_ticket call 1.0 landed (execution 3)" in line


def test_a_refused_update_is_shown_even_for_a_renewal() -> None:
    refused = op(
        0, H.STORE, OpType.OK, {"transition": NAMES[RENEW_LEASE], "site": "executor.boundary", "matched": False}
    )
    (line,) = body(render([refused]))
    assert "refused" in line


def test_store_invokes_are_never_shown() -> None:
    invoke = op(0, H.STORE, OpType.INVOKE, {"transition": NAMES[CLAIM_QUEUED], "site": "run_queued.claim"})
    assert body(render([invoke], verbose=True)) == []


def test_the_runs_filter_keeps_the_chosen_runs_and_records_without_a_run() -> None:
    other = op(1, H.LANDING, OpType.OK, {"tool": "t", "call": "1.0", "execution": 1}, run="run-002")
    lines = body(render([claim(0), other, crash(2)], runs={"run-001"}))
    assert [line.split()[1] for line in lines] == ["#0", "#2"]


def test_a_simulated_crash_mid_write_shows_the_fault_the_crash_and_the_landing() -> None:
    text = "\n".join(render(simulate("worker_crash_mid_write", "head", 0).history))
    assert "⚡ crash/after" in text
    assert "☠ " in text
    assert "★ mcp_create_ticket" in text
    assert "║ chaos phase" in text


def test_a_simulated_timeline_folds_some_records_unless_verbose() -> None:
    history = simulate("happy_path", "head", 0).history
    plain, verbose = render(history), render(history, verbose=True)
    assert len(plain) < len(verbose) < len(history) + 1


def test_a_reaper_tick_that_found_nothing_shows_only_when_verbose() -> None:
    idle = op(0, H.IDLE, OpType.OK, {"identity": "reaper:h1:7", "invoked_s": 59.6}, process="reaper#1", run="")
    assert render([idle]) == [LEGEND]
    shown = render([idle], verbose=True)
    assert len(shown) == 2 and "reap as reaper:h1:7: nothing stale" in shown[1] and "reaper#1" in shown[1]


def test_a_call_that_returned_a_boolean_reads_as_true_or_false_not_a_python_repr() -> None:
    lines = body(render([op(1, H.SEGMENT, OpType.OK, {"outcome": True}, process="user")]))
    assert lines[-1].endswith("■ returned true") and "True" not in lines[-1]
    lines = body(render([op(1, H.SEGMENT, OpType.OK, {"outcome": False}, process="user")]))
    assert lines[-1].endswith("■ returned false")
