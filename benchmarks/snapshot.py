"""Behaviour snapshot: everything a simulation produced, for many (scenario, policy, seed) cases.

    .venv/bin/python benchmarks/snapshot.py write /tmp/before.json     # on the code before a change
    .venv/bin/python benchmarks/snapshot.py compare /tmp/before.json   # after it: exit 1 on any difference

The golden digests (tests/sim/world/test_golden_digests.py) pin histories; this pins the rest that speed
work must not move either: each invariant's verdict (validity, witness, explanation, judged
cases), coverage, statistics and the faults that fired. Every library scenario under four presets
and eight seeds, plus 48 seeds of ``default`` under head: 496 simulations. Knows only ``simulate``
and the library.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from scenarios.loader import library_names, load_scenario
from sim.world.simulate import simulate

POLICIES = ("adr-104", "adr-111", "adr-112", "head")
SEEDS = range(8)
DEFAULT_HEAD_SEEDS = range(8, 56)


def cases() -> list[tuple[str, str, int]]:
    """The fixed case list, in a fixed order."""
    listed = [(name, policy, seed) for name in library_names() for policy in POLICIES for seed in SEEDS]
    return listed + [("default", "head", seed) for seed in DEFAULT_HEAD_SEEDS]


def snapshot_of(name: str, policy: str, seed: int) -> dict[str, Any]:
    result = simulate(load_scenario(name), policy, seed)
    return {
        "digest": result.digest,
        "verdicts": {key: verdict.to_json() for key, verdict in result.verdicts.items()},
        "coverage": result.coverage,
        "stats": result.stats,
        "faults_fired": result.faults_fired,
        "fault_script": [repr(fault) for fault in result.fault_script],
    }


def take() -> dict[str, Any]:
    return {f"{name}/{policy}/{seed}": snapshot_of(name, policy, seed) for name, policy, seed in cases()}


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One line per case and top-level field that differs (and per verdict that differs)."""
    lines = []
    for case in sorted(set(before) | set(after)):
        old, new = before.get(case), after.get(case)
        if old is None or new is None:
            lines.append(f"{case}: only in {'after' if old is None else 'before'}")
            continue
        for field in sorted(set(old) | set(new)):
            if old.get(field) == new.get(field):
                continue
            if field == "verdicts":
                for name in sorted(set(old[field]) | set(new[field])):
                    if old[field].get(name) != new[field].get(name):
                        lines.append(f"{case}: verdict {name}: {old[field].get(name)} -> {new[field].get(name)}")
            else:
                lines.append(f"{case}: {field} differs")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("write", "compare"))
    parser.add_argument("path")
    args = parser.parse_args(argv)
    current = take()
    if args.mode == "write":
        with open(args.path, "w", encoding="utf-8") as out:
            json.dump(current, out, sort_keys=True)
        print(f"{len(current)} simulations written to {args.path}")
        return 0
    with open(args.path, encoding="utf-8") as source:
        before = json.load(source)
    # round-trip through JSON so that tuples and lists compare alike
    lines = differences(before, json.loads(json.dumps(current)))
    for line in lines[:50]:
        print(line)
    print(f"{len(current)} simulations compared: {len(lines)} differences")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
