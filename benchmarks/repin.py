"""Re-pin history digests after a change that must move every history (a new record, a new field, the epoch).

    .venv/bin/python -m benchmarks.repin             # rewrite the digest of every stored counterexample
                                                     # and the GOLDEN table of tests/sim/world/test_golden_digests.py
    .venv/bin/python -m benchmarks.repin --check     # only say what would change; exit 1 if anything would

A stored counterexample is every git-tracked ``*.toml`` with a ``digest`` line (the findings, the open
cases, the test data). Each is replayed; its ``digest = "..."`` line is rewritten in place (nothing else
in the file changes) only when the replay still violates the invariant the file names. One that no
longer does is listed and left alone, and the exit code is 1: its mechanism moved, and a person must
re-derive it (a digest that merely follows a history is no evidence of anything). Run it from the
repository root, after the change, in the commit that says why histories changed; then
``python -m benchmarks.recite``, which re-numbers the records the findings' write-ups cite. Knows the
counterexample format and ``benchmarks/golden.py``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from benchmarks.golden import table
from sim.explore.counterexample import read

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_TEST = ROOT / "tests" / "sim" / "world" / "test_golden_digests.py"
_DIGEST_LINE = re.compile(r'^digest = "([0-9a-f]*)"$', re.MULTILINE)
HOLDS: dict[str, str] = {
    "tests/sim/world/data/sync-live-run-at-horizon.toml": "a former false alarm kept as a regression: the world "
    "now grants a live run grace at the horizon, so every_run_terminates must hold",
}
"""Stored cases whose invariant must now HOLD (a false alarm that was fixed), with the reason: they are
re-pinned while it holds, and listed when it is violated again."""
_GOLDEN_TABLE = re.compile(r"GOLDEN = \{\n(?:    \"[^\"]+\": \"[0-9a-f]+\",\n)*\}")


def stored_counterexamples() -> list[Path]:
    """Every git-tracked TOML file with a digest line, in path order."""
    listed = subprocess.run(
        ["git", "grep", "-l", "^digest = ", "--", "*.toml"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    return [ROOT / name for name in sorted(listed)]


def repin_counterexample(path: Path, *, write: bool) -> tuple[str, str, bool]:
    """(old digest, new digest, still shows what it was stored for); rewrites the line when asked and it does.

    A case shows what it was stored for when it still violates its invariant, or, for one of
    :data:`HOLDS`, when the invariant still holds."""
    cx = read(path)
    result = cx.run()
    violated = cx.invariant in result.violations
    violates = not violated if str(path.relative_to(ROOT)) in HOLDS else violated
    if write and violates and result.digest != cx.digest:
        text = path.read_text(encoding="utf-8")
        path.write_text(_DIGEST_LINE.sub(f'digest = "{result.digest}"', text, count=1), encoding="utf-8")
    return cx.digest, result.digest, violates


def golden_source(values: dict[str, str]) -> str:
    rows = "".join(f'    "{name}": "{value}",\n' for name, value in sorted(values.items()))
    return "GOLDEN = {\n" + rows + "}"


def repin_golden(*, write: bool) -> list[str]:
    """The names whose golden digest changes; rewrites the table in the test when asked."""
    source = GOLDEN_TEST.read_text(encoding="utf-8")
    found = _GOLDEN_TABLE.search(source)
    if found is None:
        raise SystemExit(f"{GOLDEN_TEST}: no GOLDEN table found")
    old = dict(re.findall(r'"([^"]+)": "([0-9a-f]+)"', found.group(0)))
    new = table()
    changed = sorted(name for name in set(old) | set(new) if old.get(name) != new.get(name))
    if write and changed:
        GOLDEN_TEST.write_text(source.replace(found.group(0), golden_source(new)), encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a digest would change")
    args = parser.parse_args(argv)
    write = not args.check
    moved = lost = 0
    for path in stored_counterexamples():
        old, new, violates = repin_counterexample(path, write=write)
        name = str(path.relative_to(ROOT))
        if not violates:
            lost += 1
            what = "VIOLATES again the invariant it holds" if name in HOLDS else "NO LONGER VIOLATES its invariant"
            print(f"{what}, left alone: {name}")
        elif old != new:
            moved += 1
            print(f"{'re-pinned' if write else 'would re-pin'} {name}: {old} -> {new}")
    changed = repin_golden(write=write)
    for name in changed:
        print(f"{'re-pinned' if write else 'would re-pin'} golden digest of {name}")
    print(f"{moved} counterexample digests and {len(changed)} golden digests {'re-pinned' if write else 'differ'}")
    return 1 if lost or (args.check and (moved or changed)) else 0


if __name__ == "__main__":
    sys.exit(main())
