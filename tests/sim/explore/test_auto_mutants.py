"""sim/explore/auto_mutants.py, auto_judge.py and auto_worker.py: automatic mutants of the runtime
made with cosmic-ray's operators, the equivalent ones dropped, each judged in its own process."""

from __future__ import annotations

import pytest

from sim.explore.auto_judge import SweepKill, draws_of, judge_all, sign_test, sweep_kill
from sim.explore.auto_mutants import LEFT_OUT, MutationSite, equivalence, module_files, mutate, normal_form, sample

ORIGINAL = '''"""Doc."""
from __future__ import annotations


def f(x: int | None) -> bool:
    """Whether x is set."""
    return x is not None
'''


def test_a_change_to_an_annotation_only_is_equivalent() -> None:
    mutated = ORIGINAL.replace("int | None", "int + None")
    assert equivalence(ORIGINAL, mutated) is not None


def test_a_changed_docstring_is_equivalent() -> None:
    assert normal_form(ORIGINAL) == normal_form(ORIGINAL.replace("Whether x is set.", "Other."))


def test_a_changed_comparison_is_not_equivalent() -> None:
    assert equivalence(ORIGINAL, ORIGINAL.replace("is not None", "is None")) is None


def test_annotations_count_when_they_are_evaluated() -> None:
    evaluated = ORIGINAL.replace("from __future__ import annotations\n", "")
    assert equivalence(evaluated, evaluated.replace("int | None", "int + None")) is None


def test_a_mutant_that_does_not_compile_raises() -> None:
    with pytest.raises(SyntaxError):
        equivalence(ORIGINAL, ORIGINAL.replace("return x is not None", "return x is not"))


def test_the_left_out_modules_are_not_mutated() -> None:
    assert not set(module_files()) & set(LEFT_OUT)
    assert "hooks.py" in module_files()


@pytest.mark.slow
def test_a_sample_is_a_function_of_its_seed() -> None:
    first, dropped, sites = sample(4, 3)
    again, _, _ = sample(4, 3)
    other, _, _ = sample(4, 4)
    assert [m.name for m in first] == [m.name for m in again]
    assert [m.name for m in first] != [m.name for m in other]
    assert len(first) == 4 and sites > 1000
    for mutant in first:
        assert mutant.site.module not in LEFT_OUT
        assert mutant.diff.startswith(f"--- a/model/{mutant.site.module}")
        original = (mutant.source, mutate(mutant.site))
        assert original[1] is not None and original[1].source == mutant.source
    assert all(d.kind in ("equivalent", "crashing") and d.reason for d in dropped)


def test_a_site_cosmic_ray_cannot_mutate_gives_none() -> None:
    assert mutate(MutationSite("hooks.py", "core/ReplaceBreakWithContinue", 999, 1)) is None


# ---- the kill criteria --------------------------------------------------------------------------


def draws(*rows: tuple[str, int, bool, list[str], list[str]]) -> dict[tuple[str, int], object]:
    return dict(draws_of({"draws": [list(r) for r in rows]}))


def test_sign_test() -> None:
    assert sign_test(0, 0) == 1.0
    assert sign_test(3, 0) == pytest.approx(1 / 8)
    assert sign_test(1, 1) == pytest.approx(3 / 4)


def test_an_unexplained_violation_under_faults_kills() -> None:
    mutant = draws_of({"draws": [["default", 4, True, ["a"], ["a"]]]})
    assert sweep_kill(mutant, {}, 40) == SweepKill("a", "unexplained", "default", 4)


def test_an_unexplained_violation_the_baseline_has_on_the_same_draw_does_not_kill() -> None:
    row = ["default", 4, True, ["a"], ["a"]]
    assert sweep_kill(draws_of({"draws": [row]}), draws_of({"draws": [row]}), 40) is None


def test_a_violation_with_no_fault_fired_does_not_kill() -> None:
    assert sweep_kill(draws_of({"draws": [["default", 4, False, ["a"], ["a"]]]}), {}, 40) is None


def test_an_invariant_violated_significantly_more_often_than_on_paired_draws_kills() -> None:
    many = draws_of({"draws": [["default", n, True, ["b"], []] for n in range(1, 21)]})
    assert sweep_kill(many, {}, 40) == SweepKill("b", "paired", "default", 1)
    few = draws_of({"draws": [["default", n, True, ["b"], []] for n in range(1, 4)]})
    assert sweep_kill(few, {}, 40) is None
    baseline = draws_of({"draws": [["default", n, True, ["b"], []] for n in range(21, 41)]})
    assert sweep_kill(many, baseline, 40) is None


# ---- one mutant in its own process --------------------------------------------------------------


@pytest.mark.slow
def test_a_mutant_is_judged_in_its_own_process() -> None:
    """The mutant flips the cancellation probe's status test (the boundary that finds its run
    cancelled persists fail-closed and stops): the runtime's tests see it; the report keeps its diff."""
    site = next(
        s
        for s in __import__("sim.explore.auto_mutants", fromlist=["sites"]).sites()
        if s.module == "hooks.py" and s.operator.endswith("ReplaceComparisonOperator_Is_IsNot") and s.line == 120
    )
    mutant = mutate(site)
    assert mutant is not None and "is not _CANCELLED" in mutant.source
    report = judge_all(
        [mutant], simulations=2, scenarios=("cancel_mid_run",), tests=("tests/model/runtime/test_runtime_cancel.py",)
    )
    assert report.baseline_unexplained == []
    assert len(report.judged) + len(report.dropped) == 1
    if report.judged:
        (judged,) = report.judged
        assert judged.tests_failed is not None and "test_runtime_cancel" in judged.tests_failed
        assert judged.document()["file"] == "model/hooks.py" and judged.document()["line"] == 120
