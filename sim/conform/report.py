"""The conformance report: the JSON summary and the text with each divergence's minimal case."""

from __future__ import annotations

import json
from typing import Any

from sim.conform.checks import all_checks
from sim.conform.runner import CheckResult, Options


def document(results: list[CheckResult]) -> dict[str, Any]:
    engines: list[str] = []
    for r in results:
        if r.engine not in engines:
            engines.append(r.engine)
    return {
        "engines": engines,
        "unexplained": sum(r.unexplained for r in results),
        "checks": [r.as_json() for r in results],
    }


def text(results: list[CheckResult], opts: Options) -> str:
    calls = {c.name: c.call for c in all_checks()}
    lines = [f"{'engine':8} {'check':28} {'cases':>6} {'diverge':>8} {'unexpl':>7}"]
    for r in results:
        lines.append(f"{r.engine:8} {r.check:28} {r.cases:6} {r.divergences:8} {r.unexplained:7}")
    for r in results:
        for d in r.groups.values():
            status = "UNEXPLAINED" if d.reason is None else f"explained: {d.reason}"
            lines += [
                "",
                f"[{r.engine}] {r.check}: {d.cases} case(s) differ in {', '.join(d.keys)} -- {status}",
                f"  minimal case: {json.dumps(d.case, ensure_ascii=False)}",
                f"  PHP call:     {calls[r.check](d.case)}",
                f"  PHP did:      {json.dumps({k: d.php.get(k) for k in d.keys}, ensure_ascii=False)}",
                f"  model did:    {json.dumps({k: d.model.get(k) for k in d.keys}, ensure_ascii=False)}",
            ]
    total = sum(r.unexplained for r in results)
    lines += ["", f"{total} unexplained divergence(s)" if total else "every divergence is explained"]
    return "\n".join(lines)
