"""Simulate one run of the library's `default` scenario under the current design and judge it.

    python examples/01_simulate_and_judge.py

One seed, one history: the same digest in any process. Every invariant judges what physically
happened; a violation is explained by the register (a finding or a recorded non-guarantee) or is news.
"""

import leaselab
import register

result = leaselab.simulate("default", "head", seed=3)
print(f"scenario default under head, seed 3: {len(result.history):,} history records")
print(f"digest {result.digest}")
print(f"faults that took effect: {', '.join(f'{k} {v}' for k, v in result.faults_fired.items() if v) or 'none'}")
judged = sum(v.judged for v in result.verdicts.values())
print(f"{len(result.verdicts)} invariants judged {judged:,} cases")
for name in result.violations:
    entry = register.explain(name, result.indexed(), result.verdicts[name])
    print(f"violated: {name} -> {entry.id if entry else 'UNEXPLAINED'}")
if not result.violations:
    print("no invariant violated")
