"""Statistics of the report: Wilson interval, rule of three, Newcombe's paired difference."""

from __future__ import annotations

import math

import pytest

from reports.stats import paired_difference, percent, rule_of_three, wilson


def test_wilson_matches_the_closed_form_at_five_of_ten() -> None:
    z = 1.959963984540054
    centre = (0.5 + z * z / 20) / (1 + z * z / 10)
    half = z / (1 + z * z / 10) * math.sqrt(0.25 / 10 + z * z / 400)
    assert wilson(5, 10) == pytest.approx((centre - half, centre + half))
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)


def test_wilson_is_one_sided_at_zero_and_at_all() -> None:
    lower, upper = wilson(0, 10)
    assert lower == 0.0 and upper == pytest.approx(0.2775, abs=1e-4)
    lower, upper = wilson(10, 10)
    assert upper == 1.0 and lower == pytest.approx(0.7225, abs=1e-4)


def test_wilson_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson(11, 10)


def test_rule_of_three_is_three_over_n() -> None:
    assert rule_of_three(300) == pytest.approx(0.01)
    assert rule_of_three(2) == 1.0


@pytest.mark.parametrize(
    ("both", "only_a", "only_b", "n"), [(14, 5, 0, 41), (0, 0, 0, 50), (3, 7, 2, 40), (0, 30, 0, 30)]
)
def test_paired_difference_contains_its_estimate_and_stays_in_range(
    both: int, only_a: int, only_b: int, n: int
) -> None:
    d = paired_difference(both, only_a, only_b, n)
    assert d.difference == pytest.approx((only_a - only_b) / n)
    assert -1.0 <= d.lower <= d.difference <= d.upper <= 1.0


def test_paired_difference_is_antisymmetric() -> None:
    ab = paired_difference(3, 7, 2, 40)
    ba = paired_difference(3, 2, 7, 40)
    assert (ab.lower, ab.upper) == pytest.approx((-ba.upper, -ba.lower))


def test_no_discordant_pair_gives_an_interval_around_zero_not_a_point() -> None:
    d = paired_difference(10, 0, 0, 100)
    assert d.lower < 0 < d.upper and not d.significant


def test_many_discordant_pairs_one_way_are_significant() -> None:
    assert paired_difference(0, 0, 30, 100).upper < 0


def test_pairing_narrows_the_interval_when_outcomes_agree() -> None:
    """Positively correlated pairs (many concordant) give a narrower interval than the unpaired
    Newcombe interval of the same marginal rates (phi = 0 by construction: no concordant 'both')."""
    paired = paired_difference(20, 5, 0, 100)
    width = paired.upper - paired.lower
    l1, u1 = wilson(25, 100)
    l2, u2 = wilson(20, 100)
    unpaired = math.sqrt((0.25 - l1) ** 2 + (u2 - 0.2) ** 2) + math.sqrt((u1 - 0.25) ** 2 + (0.2 - l2) ** 2)
    assert width < unpaired


def test_percent_is_short() -> None:
    assert [percent(0), percent(1), percent(0.0035), percent(0.125)] == ["0%", "100%", "0.35%", "12.5%"]


def test_the_ratio_interval_counts_simulations_not_runs() -> None:
    from reports.stats import ratio_interval

    # every simulation completes the same share: no spread between simulations, no width
    assert ratio_interval([3, 6, 9], [4, 8, 12]) == (0.75, 0.75)
    # the same runs in fewer, more different simulations: wider than Wilson over runs would say
    lower, upper = ratio_interval([0, 10, 0, 10], [10, 10, 10, 10])
    assert lower < 0.5 < upper and upper - lower > 0.5
    many = ratio_interval([0, 10] * 50, [10, 10] * 50)
    assert upper - lower > many[1] - many[0] > 0  # narrows with more simulations
    assert all(math.isnan(v) for v in ratio_interval([1], [2]))  # one simulation says nothing
    assert ratio_interval([0, 0], [5, 5]) == (0.0, 0.0)
