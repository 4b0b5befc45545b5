"""The verdict table: per scenario and preset, each invariant's violations / simulations (Markdown)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from reports.frames import unknown_counts, violation_counts


def _cell(violations: int, simulations: int, unknown: int) -> str:
    text = f"**{violations}/{simulations}**" if violations else f"0/{simulations}"
    return text + (f" ({unknown}?)" if unknown else "")


def verdict_markdown(frame: pd.DataFrame, *, policies: Sequence[str], title: str = "Verdicts") -> str:
    """One summary table (scenario x preset: simulations with any violation) and one table per scenario
    (invariant x preset: violating simulations / simulations, '(n?)' = verdict unknown)."""
    if frame.empty:
        return f"# {title}\n\nNo simulations.\n"
    counts = violation_counts(frame)
    unknown = unknown_counts(frame)
    invariants = [c for c in counts.columns if c != "simulations"]
    scenarios = list(dict.fromkeys(frame["scenario"]))
    any_violation = frame.assign(violating=(frame[[f"inv.{n}" for n in invariants]] == "false").any(axis=1).astype(int))
    summary = any_violation.groupby(["scenario", "policy"], sort=False)["violating"].agg(["sum", "count"])
    lines = [f"# {title}", ""]
    lines.append("Simulations with at least one violated invariant, per scenario and preset.")
    lines.append("")
    lines.append("| scenario | " + " | ".join(policies) + " |")
    lines.append("|---|" + "---|" * len(policies))
    for scenario in scenarios:
        cells = []
        for policy in policies:
            if (scenario, policy) in summary.index:
                violating, total = summary.loc[(scenario, policy)]
                cells.append(_cell(int(violating), int(total), 0))
            else:
                cells.append("-")
        lines.append(f"| {scenario} | " + " | ".join(cells) + " |")
    for scenario in scenarios:
        lines += ["", f"## {scenario}", ""]
        lines.append("| invariant | " + " | ".join(policies) + " |")
        lines.append("|---|" + "---|" * len(policies))
        for name in invariants:
            cells = []
            for policy in policies:
                key = (scenario, policy)
                if key not in counts.index:
                    cells.append("-")
                    continue
                cells.append(
                    _cell(int(counts.loc[key, name]), int(counts.loc[key, "simulations"]), int(unknown.loc[key, name]))
                )
            lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)
