"""Every count the README states comes from the code: each is compared with the catalogue it counts.

A count is found by the phrase around it, so rewording a sentence breaks this test rather than
letting a stale number stand; a count the README drops needs no entry here. Throughput figures
are not stated in the README (``leaselab bench`` measures them on the machine at hand).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from checks import INVARIANTS
from model.policy import FLAG_NAMES
from register.claims import CLAIMS, PRESET_ORDER
from register.findings import FINDINGS
from register.known_defects import KNOWN_DEFECTS
from scenarios.families import FAMILIES
from scenarios.loader import library_names
from sim.explore.code_mutants import CODE_MUTANTS
from sim.explore.counterexample import read
from sim.explore.mutants import EQUIVALENT
from sim.review.builtin import builtin_review

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
}  # fmt: skip


def stated(pattern: str) -> int:
    """The number (digits or a word) the README states in ``pattern``'s group 1."""
    found = re.search(pattern, " ".join(README.split()))
    assert found is not None, f"the README no longer says {pattern!r}: update this test with it"
    text = found.group(1)
    return int(text) if text.isdigit() else WORDS[text.lower()]


def max_faults_of_findings() -> int:
    return max(len(read(f.path).faults) for f in FINDINGS)


COUNTS = [
    (r"\((\w+) fault families\)", lambda: len(FAMILIES)),
    (r"each of the (\d+) library scenarios", lambda: len(library_names())),
    (r"(\d+) policies \(the presets", lambda: len(builtin_review().policy)),
    (r"the presets and (\w+) proposal flags", lambda: len(builtin_review().policy) - len(PRESET_ORDER)),
    (r"(\w+) historic defects of the spec", lambda: len(KNOWN_DEFECTS)),
    (r"(\d+) promises, each quoting its ADR", lambda: len(CLAIMS)),
    (r"\(`register/entries/`\): (\w+) violations of `head`", lambda: len(FINDINGS)),
    (r"one at a time, (\d+) mutants are killed", lambda: len(FLAG_NAMES) - len(EQUIVALENT)),
    (r"(\d+) code mutants replace functions", lambda: len(CODE_MUTANTS)),
    (r"minimal counterexample \(at most (\d+) faults\)", max_faults_of_findings),
]


@pytest.mark.parametrize(("pattern", "actual"), COUNTS, ids=[c[0] for c in COUNTS])
def test_a_count_the_readme_states_matches_the_catalogue(pattern: str, actual: object) -> None:
    assert callable(actual)
    assert stated(pattern) == actual()


def test_the_readme_states_no_throughput_figure() -> None:
    """Throughput depends on the machine; the README points at ``leaselab bench`` instead."""
    flat = " ".join(README.split())
    assert not re.search(r"simulations per second|\d+ min \d+ s", flat)


HEADLINE = (
    r'"head: (\d+) of (\d+) invariants held in all ([\d,]+) simulations; (\d+) failed, worst (\w+) ([\d.]+)% '
    r"\[[\d.]+%\u2013[\d.]+%\], mostly in (\w+) \((\d+)/(\d+)\)\.\""
)


def test_the_example_headline_is_one_make_report_wrote() -> None:
    """The README quotes head's headline from a `make report` run (100 seeds). What the code fixes about it
    is checked here: the invariant count, held + failed, the simulations per policy of the built-in review's
    grid `main`, the per-scenario denominator, and that 'What it found' names the same worst rate."""
    flat = " ".join(README.split())
    found = re.search(HEADLINE, flat)
    assert found is not None, "the README's example headline is not in the report's form"
    held, total, simulations, failed, worst, rate, scenario, _, per_scenario = found.groups()
    assert int(total) == len(INVARIANTS) and int(held) + int(failed) == len(INVARIANTS)
    main_head = [t for t in builtin_review().tasks() if t.grid == "main" and t.label == "head"]
    assert int(simulations.replace(",", "")) == sum(t.seed_count for t in main_head)
    assert scenario in library_names()
    assert int(per_scenario) == sum(t.seed_count for t in main_head if t.scenario == scenario)
    assert f"`{worst}` {rate}%" in flat, "'What it found' states a different worst rate of head"
