"""The JSON and text forms of a simulation result, shared by ``run`` and ``replay``.

Each violation is labelled with what the register says of it (:func:`register.explain.explain`):
``known: F-06`` (a registered finding), ``non-guarantee: NG-identity`` (a behaviour the spec records
as not promised) or ``UNREGISTERED`` (news: no entry explains it), so a newcomer's first ``leaselab
run default`` does not read as "head is broken" when every violation it shows is on record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from checks import Validity
from reports.wording import counts, rounded
from sim.world.simulate import SimulationResult

UNREGISTERED = "UNREGISTERED"


def explained_by(result: SimulationResult) -> dict[str, str]:
    """Violated invariant -> the id of the finding or non-guarantee that explains it ('' when none does)."""
    from register.explain import explain

    if not result.violations:
        return {}
    index = result.indexed()
    out = {}
    for name in result.violations:
        entry = explain(name, index, result.verdicts[name])
        out[name] = "" if entry is None else entry.id
    return out


COST_LABEL = "a cost, not a violation: no register entry applies"
"""What a cost instance (``explore --target cost:NAME``) is labelled: a count the report keeps, which no
finding or non-guarantee explains and none need, so ``UNREGISTERED`` (news) would mislead."""


def label(entry_id: str, name: str = "") -> str:
    """``known: F-06``, ``non-guarantee: NG-identity`` or ``UNREGISTERED``; for a cost ``name``
    (``cost:NAME``), :data:`COST_LABEL`."""
    if name.startswith("cost:"):
        return COST_LABEL
    if not entry_id:
        return UNREGISTERED
    return f"non-guarantee: {entry_id}" if entry_id.startswith("NG-") else f"known: {entry_id}"


def headline(policy: str, result: SimulationResult, why: Mapping[str, str], *, known_ok: bool) -> str:
    """The first line of ``run``'s output: how many invariants failed, how many of them the register
    explains, and the exit code that follows (the README's contract: any violation exits 1, unless
    ``--known-ok`` and every violation is known)."""
    total = len(result.verdicts)
    if not why:
        idle = sum(1 for v in result.verdicts.values() if v.valid is Validity.VALID and not v.judged)
        if idle:  # an invariant with no case to judge held vacuously: it showed nothing
            return (
                f"{policy}: no invariant violated; {total - idle} of {total} held, {idle} had no case to judge; exit 0"
            )
        return f"{policy}: every invariant held ({total} of {total}); exit 0"
    known = sorted({entry for entry in why.values() if entry})
    news = sum(1 for entry in why.values() if not entry)
    failed = f"{policy}: {len(why)} of {total} invariants violated"
    if not news:
        told = f"all on record ({', '.join(known)})"
        code = (
            "exit 0 (--known-ok)" if known_ok else "exit 1 as for any violation (--known-ok: 0 when all are on record)"
        )
        return f"{failed}, {told}; {code}"
    on_record = f", {len(why) - news} on record ({', '.join(known)})" if known else ""
    return f"{failed}: {news} {UNREGISTERED}{on_record}; exit 1"


def exit_code(why: Mapping[str, str], *, known_ok: bool) -> int:
    """1 on a violation; with ``known_ok``, only on one that the register does not explain."""
    if not why:
        return 0
    return 1 if not known_ok or any(not entry for entry in why.values()) else 0


def result_document(
    result: SimulationResult,
    *,
    policy_name: str,
    flags: Mapping[str, bool],
    why: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON form; each verdict carries ``explained_by`` (the finding or non-guarantee id, '' when
    none explains a violation, null when the invariant was not violated) when ``why`` is given."""
    explained = why or {}
    return {
        "scenario": result.scenario,
        "policy": policy_name,
        "flags": dict(flags),
        "seed": result.seed,
        "digest": result.digest,
        "verdicts": {
            name: {
                "valid": v.valid.json,
                "witness": list(v.witness),
                "explanation": v.explanation,
                "judged": v.judged,
                "explained_by": explained.get(name),
            }
            for name, v in result.verdicts.items()
        },
        "coverage": dict(result.coverage),
        "faults_fired": dict(result.faults_fired),
        "stats": dict(result.stats),
    }


_MARK = {Validity.VALID: "ok  ", Validity.INVALID: "FAIL", Validity.UNKNOWN: "??  "}
IDLE_MARK = "--  "
"""A verdict that held over no case: not "ok", since it showed nothing."""


def verdict_lines(result: SimulationResult, why: Mapping[str, str] | None = None) -> list[str]:
    """One line per invariant; a violation says what the register knows of it (``why``) in brackets, and
    one that held over no case is marked ``--`` and says so, not ``ok``."""
    lines = [f"scenario {result.scenario}  seed {result.seed}  digest {result.digest}"]
    for name, verdict in result.verdicts.items():
        if verdict.valid is Validity.VALID and not verdict.judged:
            lines.append(f"  {IDLE_MARK} {name}: no case to judge in this history")
            continue
        mark = "COST" if name.startswith("cost:") and verdict.valid is Validity.INVALID else _MARK[verdict.valid]
        line = f"  {mark} {name}"
        if why is not None and name in why:
            line += f" [{label(why[name], name)}]"
        if verdict.valid is not Validity.VALID:
            line += f": {rounded(verdict.explanation)}"
            if verdict.witness:
                line += f" (records {', '.join(map(str, verdict.witness[:8]))})"
        lines.append(line)
    fired = ", ".join(f"{k}={v:,}" for k, v in result.faults_fired.items() if v) or "none"
    lines.append(f"  faults fired: {fired}")
    lines.append(f"  final rows: {counts(result.stats.get('final_status') or {})}")
    return lines
