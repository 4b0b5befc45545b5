"""Compare two designs on paired seeds: how often does each violate its promises under the same faults?

    python examples/03_compare_two_designs.py

ADR-104's design against the current one (`head`) on `tool_outlives_lease`, 40 paired seeds each: the
same seed draws the same faults for both, so a difference is the design's, not the dice's.
"""

from collections import Counter

import leaselab
import register

SEEDS = range(40)
for policy in ("adr-104", "head"):
    violated: Counter[str] = Counter()
    unexplained: Counter[str] = Counter()
    for seed in SEEDS:
        result = leaselab.simulate("tool_outlives_lease", policy, seed=seed)
        violated.update(result.violations)
        unexplained.update(register.unexplained(result.indexed(), result.verdicts))
    print(f"{policy}: {len(SEEDS)} simulations")
    for name, count in sorted(violated.items()):
        news = (
            f" ({unexplained[name]} not explained by head's register: a defect a later ADR fixed)"
            if unexplained[name]
            else ""
        )
        print(f"  {name}: violated in {count} of {len(SEEDS)}{news}")
