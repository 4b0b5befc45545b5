"""Keep the record numbers the findings' write-ups cite pointing at the records they describe.

    .venv/bin/python -m benchmarks.recite            # re-number every citation after histories moved
    .venv/bin/python -m benchmarks.recite --check    # only say which citations moved; exit 1 if any
    .venv/bin/python -m benchmarks.recite --pin      # pin the citations as written (after editing a write-up)

A write-up (``register/entries/F-NN-*.md``) tells its interleaving by the records of its counterexample's
history: "the reaper requeues the run (#143)", "(records 130 and 233)". A change that adds, folds or
removes records moves those numbers, and nothing else would notice. ``CITED`` pins, per citation, what the
cited record is (its signature: process, operation, type, run and what it did) and when it happened;
re-citing finds that record in the replayed history and rewrites the number.
A citation whose record cannot be found again is listed and left alone, and the exit code is 1: the
history changed in substance, and a person must re-read the interleaving. ``tests/properties/
test_finding_citations.py`` fails while any citation points elsewhere than its pin. Run it from the
repository root. Knows the write-ups, the counterexample format and the history's records.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from checks.history import Op
from sim.explore.counterexample import read

ROOT = Path(__file__).resolve().parent.parent
FINDINGS = ROOT / "register" / "entries"
CITED = ROOT / "tests" / "properties" / "data" / "cited_records.json"
CITATION = re.compile(r"(?<![\w#])#(\d+)\b|\(records (\d+) and (\d+)\)")
_WHAT = ("transition", "what", "kind", "tool", "family", "entry", "decision", "account")


def signature(op: Op) -> str:
    """What a record is, in words that survive renumbering: who, which operation, which run, doing what."""
    did = next((str(op.value[key]) for key in _WHAT if op.value.get(key)), "")
    return f"{op.process} {op.op}/{op.type.value} {op.run or '-'} {did}".rstrip()


def citations(text: str) -> list[int]:
    """Every record number a write-up cites, in order (``#n`` and "(records a and b)")."""
    found: list[int] = []
    for match in CITATION.finditer(text):
        found.extend(int(number) for number in match.groups() if number is not None)
    return found


def occurrence(history: Sequence[Op], index: int) -> tuple[str, float, int]:
    """(signature, time, k): record ``index`` is the k-th record of the history with that signature at
    that simulated time (the same statement at the same instant twice is told apart by order)."""
    op = history[index]
    mine, at = signature(op), round(op.time_s, 6)
    same = sum(1 for other in history[:index] if round(other.time_s, 6) == at and signature(other) == mine)
    return mine, at, same


def find(history: Sequence[Op], pinned: Sequence[str | float | int]) -> int | None:
    """The index of the pinned record in ``history``; None when no record is it any more (the history
    changed in substance: another time, another statement)."""
    wanted, at, k = str(pinned[0]), float(pinned[1]), int(pinned[2])
    for op in history:
        if round(op.time_s, 6) == at and signature(op) == wanted:
            if k == 0:
                return op.index
            k -= 1
    return None


def write_ups() -> list[Path]:
    return sorted(FINDINGS.glob("F-*.md"))


def history_of(write_up: Path) -> list[Op]:
    return read(write_up.with_suffix(".toml")).run().history


def pin() -> dict[str, dict[str, list[str | float | int]]]:
    """The citations of every write-up as written, each with its record's signature, time and order."""
    table: dict[str, dict[str, list[str | float | int]]] = {}
    for write_up in write_ups():
        history = history_of(write_up)
        cited = sorted(set(citations(write_up.read_text(encoding="utf-8"))))
        table[write_up.stem] = {str(n): list(occurrence(history, n)) for n in cited if n < len(history)}
    return table


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="only list the citations that moved")
    parser.add_argument("--pin", action="store_true", help="pin the citations as the write-ups are now")
    args = parser.parse_args(argv)
    if args.pin:
        CITED.write_text(json.dumps(pin(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"pinned the citations of {len(write_ups())} write-ups in {CITED.relative_to(ROOT)}")
        return 0
    table = json.loads(CITED.read_text(encoding="utf-8"))
    moved = lost = 0
    for write_up in write_ups():
        history = history_of(write_up)
        pins = table.get(write_up.stem, {})
        renumber: dict[int, int] = {}
        for number, pinned in pins.items():
            now = find(history, pinned)
            if now is None:
                print(f"LOST {write_up.name}: #{number} ({pinned[0]} at {pinned[1]} s) is no longer in its history")
                lost += 1
            elif now != int(number):
                renumber[int(number)] = now
        moved += len(renumber)
        for old, new in sorted(renumber.items()):
            print(f"{write_up.name}: #{old} -> #{new}")
        if renumber and not args.check:
            text = write_up.read_text(encoding="utf-8")
            text = CITATION.sub(partial(_renumbered, renumber=renumber), text)
            write_up.write_text(text, encoding="utf-8")
            # a moved record is the same record under a new number: its pin moves with it; a lost one
            # keeps its old number and pin, so the citations test fails until a person re-reads it
            table[write_up.stem] = {str(renumber.get(int(n), int(n))): pinned for n, pinned in pins.items()}
    if not args.check and moved:
        CITED.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{moved} citations moved, {lost} lost" + ("" if args.check else " (write-ups and pins rewritten)"))
    return 1 if lost or (args.check and moved) else 0


def _renumbered(match: re.Match[str], renumber: dict[int, int]) -> str:
    if match.group(1) is not None:
        return f"#{renumber.get(int(match.group(1)), int(match.group(1)))}"
    a, b = (renumber.get(int(g), int(g)) for g in match.groups()[1:])
    return f"(records {a} and {b})"


if __name__ == "__main__":
    sys.exit(main())
