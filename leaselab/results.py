"""The JSON and text forms of a simulation result, shared by ``run`` and ``replay``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from checks import Validity
from reports.wording import counts, rounded
from sim.world.simulate import SimulationResult


def result_document(result: SimulationResult, *, policy_name: str, flags: Mapping[str, bool]) -> dict[str, Any]:
    return {
        "scenario": result.scenario,
        "policy": policy_name,
        "flags": dict(flags),
        "seed": result.seed,
        "digest": result.digest,
        "verdicts": {
            name: {"valid": v.valid.json, "witness": list(v.witness), "explanation": v.explanation, "judged": v.judged}
            for name, v in result.verdicts.items()
        },
        "coverage": dict(result.coverage),
        "faults_fired": dict(result.faults_fired),
        "stats": dict(result.stats),
    }


_MARK = {Validity.VALID: "ok  ", Validity.INVALID: "FAIL", Validity.UNKNOWN: "??  "}


def verdict_lines(result: SimulationResult) -> list[str]:
    lines = [f"scenario {result.scenario}  seed {result.seed}  digest {result.digest}"]
    for name, verdict in result.verdicts.items():
        line = f"  {_MARK[verdict.valid]} {name}"
        if verdict.valid is not Validity.VALID:
            line += f": {rounded(verdict.explanation)}"
            if verdict.witness:
                line += f" (records {', '.join(map(str, verdict.witness[:8]))})"
        lines.append(line)
    fired = ", ".join(f"{k}={v}" for k, v in result.faults_fired.items() if v) or "none"
    lines.append(f"  faults fired: {fired}")
    lines.append(f"  final rows: {counts(result.stats.get('final_status') or {})}")
    return lines
