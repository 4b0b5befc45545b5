"""Replay a registered finding's minimal counterexample and read it as a swim-lane timeline.

    python examples/02_replay_a_finding.py

F-18: the reaper requeues a run on a snapshot read before a non-idempotent write's fence was stamped,
and the write runs twice. The file pins its history digest, so a replay that diverges is a bug.
"""

from pathlib import Path

import leaselab
import register
from register.findings import finding

entry = finding("F-18")
cx = leaselab.read_counterexample(entry.path)
replayed = cx.run()
print(f"{entry.id} {entry.slug}: {cx.invariant} under {cx.policy}")
print(f"replays to the pinned digest: {replayed.digest == cx.digest}")
explained = register.explain(cx.invariant, replayed.indexed(), replayed.verdicts[cx.invariant])
print(f"the register recognises it as: {explained.id if explained else 'nothing'}")
print(f"promised: {entry.adr}: {entry.promise}")
print(f"write-up: {Path(entry.path).with_suffix('.md').relative_to(Path(register.__file__).parent.parent)}")
print(f"timeline: {len(leaselab.timeline(replayed.history))} lines (print them to read the interleaving)")
