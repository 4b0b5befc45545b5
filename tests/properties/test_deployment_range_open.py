"""The deployment-range violations the register leaves open (register/entries/README.md, "Under the
fault ranges of real deployments"): each stored counterexample still replays to the same history and
violation, and nothing in the register explains it. When one stops reproducing (the simulator's epoch
or quiet phase changed) or gets explained (a finding registered), the README's open list must change."""

from __future__ import annotations

from checks.fused import index_of
from register.explain import explain
from register.findings import FINDINGS_DIR
from sim.explore.counterexample import read

OPEN = sorted((FINDINGS_DIR / "open").glob("*.toml"))


def test_the_open_list_is_the_one_the_readme_names() -> None:
    """Each stored open case is named in the README's open list; with none stored, the README says so."""
    readme = (FINDINGS_DIR / "README.md").read_text(encoding="utf-8")
    for path in OPEN:
        assert f"open/{path.name}" in readme
    assert bool(OPEN) != ("No case is open" in readme)


def test_every_open_counterexample_replays_and_stays_unexplained() -> None:
    for path in OPEN:
        cx = read(path)
        assert cx.policy == "head" and not cx.flags
        result = cx.run()
        assert result.digest == cx.digest
        assert cx.invariant in result.violations
        assert explain(cx.invariant, index_of(result.history), result.verdicts[cx.invariant]) is None, path.name
