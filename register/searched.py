"""The recorded deployment-range search: at which scale "every failure of head is explained" was checked.

The report's grid is a few thousand simulations; a user who searches longer meets rarer mechanisms. The
search ``python -m benchmarks.triage_ranges --search`` (every library scenario at deployment ranges on
both transports) is run in chunks, each chunk writes its summary (``--record``), and the chunks are
combined (``--combine``) into ``entries/searched.json``: the seeds, the simulations, the violations, the
register entries whose recognisers explained them (the mechanisms met) and how many nothing explained.
The report quotes it and its verdict needs it clean; the nightly suite re-runs the same seeds.

Pure data and its reading: no simulation here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from register.findings import FINDINGS_DIR

RECORD = FINDINGS_DIR / "searched.json"


@dataclass(frozen=True)
class SearchRecord:
    """One search's figures (or several chunks' combined)."""

    seeds: tuple[int, ...]
    draws: int
    ranges: str
    transports: tuple[str, ...]
    scenarios: int
    simulations: int
    violations: int
    mechanisms: tuple[str, ...]
    """The register entries that explained at least one violation, sorted."""
    unexplained: tuple[str, ...] = ()
    """Where each unexplained violation was met (scenario, transport, seed, draw, invariant, shape)."""
    cpu_s: float = 0.0
    note: str = field(default="", compare=False)

    @property
    def clean(self) -> bool:
        return not self.unexplained

    def seed_span(self) -> str:
        """'500-507', or the seeds listed when they are not one run of consecutive numbers."""
        seeds = sorted(self.seeds)
        if seeds and seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 1:
            return f"{seeds[0]}-{seeds[-1]}"
        return ", ".join(str(s) for s in seeds)

    def to_json(self) -> dict[str, Any]:
        return {
            "seeds": list(self.seeds),
            "draws": self.draws,
            "ranges": self.ranges,
            "transports": list(self.transports),
            "scenarios": self.scenarios,
            "simulations": self.simulations,
            "violations": self.violations,
            "mechanisms": list(self.mechanisms),
            "unexplained": list(self.unexplained),
            "cpu_s": round(self.cpu_s, 1),
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SearchRecord:
        return cls(
            seeds=tuple(int(s) for s in data["seeds"]),
            draws=int(data["draws"]),
            ranges=str(data["ranges"]),
            transports=tuple(str(t) for t in data["transports"]),
            scenarios=int(data["scenarios"]),
            simulations=int(data["simulations"]),
            violations=int(data["violations"]),
            mechanisms=tuple(str(m) for m in data["mechanisms"]),
            unexplained=tuple(str(u) for u in data.get("unexplained", ())),
            cpu_s=float(data.get("cpu_s", 0.0)),
            note=str(data.get("note", "")),
        )


def combined(chunks: Sequence[SearchRecord], note: str = "") -> SearchRecord:
    """Several chunks of one search (same draws, ranges and scenarios) as one record."""
    if not chunks:
        raise ValueError("no chunk to combine")
    first = chunks[0]
    if any((c.draws, c.ranges, c.scenarios) != (first.draws, first.ranges, first.scenarios) for c in chunks):
        raise ValueError("chunks of different searches (draws, ranges or scenarios differ)")
    return SearchRecord(
        seeds=tuple(sorted({s for c in chunks for s in c.seeds})),
        draws=first.draws,
        ranges=first.ranges,
        transports=tuple(sorted({t for c in chunks for t in c.transports})),
        scenarios=first.scenarios,
        simulations=sum(c.simulations for c in chunks),
        violations=sum(c.violations for c in chunks),
        mechanisms=tuple(sorted({m for c in chunks for m in c.mechanisms})),
        unexplained=tuple(u for c in chunks for u in c.unexplained),
        cpu_s=sum(c.cpu_s for c in chunks),
        note=note,
    )


def read_record(path: Path = RECORD) -> SearchRecord:
    return SearchRecord.from_json(json.loads(path.read_text(encoding="utf-8")))


def write_record(record: SearchRecord, path: Path) -> Path:
    path.write_text(json.dumps(record.to_json(), indent=2) + "\n", encoding="utf-8")
    return path


def read_chunks(paths: Iterable[Path]) -> list[SearchRecord]:
    return [read_record(p) for p in paths]


__all__ = ["RECORD", "SearchRecord", "combined", "read_chunks", "read_record", "write_record"]
