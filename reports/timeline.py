"""A text timeline of one history: one line per event with a legend, TigerBeetle style.

Only records a reader needs are shown: segment starts and ends, guarded updates that
matched (and store failures), audit inserts, provider and tool calls, landings,
dispatches, decisions, faults, crashes and phases. Reads and renewals are folded away
unless ``verbose``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from checks import history as H
from checks.history import Op, OpType
from model.statements import RENEW_LEASE

LEGEND = (
    "legend: ▶ segment start  ■ segment end  ✎ row update  ✗ failed  ◆ audit event  "
    "☁ provider  ⚙ tool  ★ side effect landed  ✉ dispatch/deliver  ? decision  "
    "⚡ fault  ☠ crash  ↻ restart  ║ phase  = final row  · read (verbose)  "
    "▶■ reaper tick that found nothing (verbose)"
)

_QUIET_TRANSITIONS = (f"{RENEW_LEASE} ",)


def _row_brief(row: dict[str, object] | None) -> str:
    if not row:
        return ""
    parts = [str(row.get("status", ""))]
    if row.get("claimed_by"):
        parts.append(f"by {row['claimed_by']}")
    if row.get("pending_effect"):
        parts.append(f"fence={row['pending_effect']}")
    if row.get("requeue_count"):
        parts.append(f"requeues={row['requeue_count']}")
    if row.get("termination_reason"):
        parts.append(f"reason={row['termination_reason']}")
    if row.get("error_class"):
        parts.append(f"error={row['error_class']}")
    return " ".join(parts)


def describe(op: Op, verbose: bool = False) -> str | None:
    """One line of text for a record, or None to fold it away."""
    v, kind = op.value, op.op
    if kind == H.SEGMENT:
        if op.type is OpType.INVOKE:
            if v.get("entry") == "reap" and not verbose:
                return None
            return f"▶ {v.get('entry')} as {v.get('identity')}"
        if op.type is OpType.OK:
            outcome = v.get("outcome")
            if isinstance(outcome, dict):
                counts = {k: n for k, n in outcome.items() if k != "exit_code" and n}
                if not counts and not verbose:
                    return None
                return ("■ reaper " + ", ".join(f"{k} {n}" for k, n in counts.items())).rstrip()
            if outcome is None:
                return "■ nothing to do (no outcome)"
            if isinstance(outcome, bool):  # enqueue / cancel: what the call returned, as the spec words it
                return f"■ returned {'true' if outcome else 'false'}"
            return f"■ outcome {outcome}"
        return f"■ {op.type.value} {v.get('error', '') or 'crashed'}"
    if kind == H.IDLE:
        return f"▶■ reap as {v.get('identity')}: nothing stale" if verbose else None
    if kind == H.STORE:
        name = str(v.get("transition", ""))
        if op.type is OpType.INVOKE:
            return None
        if op.type is OpType.FAIL:
            return f"✗ {name} at {v.get('site')} threw {v.get('error')}"
        if not v.get("matched"):
            return f"✎ {name} at {v.get('site')} refused"
        if not verbose and name.startswith(_QUIET_TRANSITIONS):
            return None
        return f"✎ {name} at {v.get('site')} → {_row_brief(v.get('row'))}"
    if kind == H.EVENT:
        if op.type is OpType.INVOKE:
            return None
        label = f"{v.get('kind')}#{v.get('seq')}" + (f" {v.get('tool')}" if v.get("tool") else "")
        return f"◆ event {label}" if op.type is OpType.OK else f"✗ event {label} not stored"
    if kind == H.PROVIDER:
        if op.type is OpType.INVOKE:
            return f"☁ provider call round {v.get('round')}" if verbose else None
        if op.type is OpType.FAIL:
            return f"✗ provider failed {v.get('error')} ({v.get('failure_class')})"
        return f"☁ provider answered ({v.get('tokens')} tokens)" if verbose else None
    if kind == H.TOOL:
        if op.type is OpType.INVOKE:
            return f"⚙ {v.get('tool')} call {v.get('call')} ({v.get('true_effect')})"
        if op.type is OpType.INFO:
            return "⚙ tool call abandoned (caller crashed)"
        if op.type is OpType.FAIL:
            return f"✗ tool threw {v.get('error')}"
        return "⚙ tool returned (replayed)" if v.get("replayed") else None
    if kind == H.LANDING:
        return f"★ {v.get('tool')} call {v.get('call')} landed (execution {v.get('execution')})"
    if kind == H.DISPATCH:
        if op.type is OpType.INVOKE:
            return None
        return "✉ wake-up dispatched" if op.type is OpType.OK else "✗ wake-up dispatch threw"
    if kind == H.DELIVER:
        return "✉ wake-up delivered" + (" (duplicate)" if v.get("duplicate") else "")
    if kind == H.DECIDE:
        return f"? {v.get('decider')} read fence={v.get('pending_effect') or '-'} → {v.get('decision')}"
    if kind == H.FAULT:
        return f"⚡ {v.get('family')}/{v.get('kind')} on {v.get('target')}"
    if kind == H.CRASH:
        return f"☠ {v.get('process')} crashed"
    if kind == H.RESTART:
        return f"↻ {v.get('process')} started"
    if kind == H.PHASE:
        return f"║ {v.get('phase')} phase"
    if kind == H.FINAL:
        return f"= final {_row_brief(v.get('row'))}"
    if kind == H.READ:
        if op.type is OpType.FAIL:
            return f"✗ read {v.get('what')} at {v.get('site')} threw"
        return f"· read {v.get('what')} at {v.get('site')} → {v.get('result')}" if verbose else None
    return None


def render(history: Sequence[Op] | Iterable[Op], *, verbose: bool = False, runs: set[str] | None = None) -> list[str]:
    """The timeline lines (legend first) for a history, optionally only some runs."""
    lines = [LEGEND]
    for op in history:
        if runs is not None and op.run and op.run not in runs:
            continue
        text = describe(op, verbose)
        if text is None:
            continue
        lines.append(f"{op.time_s:10.2f}s  #{op.index:<5d} {op.process:<16.16s} {op.run or '-':<8s} {text}")
    return lines
