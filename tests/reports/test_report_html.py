"""The report's HTML is valid where validators complain first: every ``id`` unique (many inline SVG
figures share matplotlib's per-figure ids unless scoped), every in-page reference resolving to an id
of the page, and a print stylesheet; and the smaller wording of a first reading."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reports.canvas import scoped_ids

ID = re.compile(r'\bid="([^"]+)"')


@pytest.mark.slow
def test_every_id_of_the_page_is_unique(small_review: Any) -> None:
    html = small_review.paths["html"].read_text(encoding="utf-8")
    ids = ID.findall(html)
    assert html.count("<svg") >= 10 and len(ids) > 1000
    assert len(ids) == len(set(ids))


def test_every_reference_inside_a_figure_resolves_to_an_id_of_the_page(small_review: Any) -> None:
    html = small_review.paths["html"].read_text(encoding="utf-8")
    ids = set(ID.findall(html))
    referenced = re.findall(r"url\(#([^)]+)\)", html) + re.findall(r'xlink:href="#([^"]+)"', html)
    assert referenced and set(referenced) <= ids


def test_scoping_renames_ids_and_their_references_only() -> None:
    svg = '<svg><defs><clipPath id="p1"/></defs><g id="axes_1" clip-path="url(#p1)"><use xlink:href="#p1"/>'
    svg += '<a href="#elsewhere"/></g></svg>'
    scoped = scoped_ids(svg, "curve-x")
    assert 'id="curve-x-p1"' in scoped and 'id="curve-x-axes_1"' in scoped
    assert "url(#curve-x-p1)" in scoped and 'xlink:href="#curve-x-p1"' in scoped
    assert 'href="#elsewhere"' in scoped  # not an id of this figure: left alone


def test_the_page_has_a_print_stylesheet(small_review: Any) -> None:
    html = small_review.paths["html"].read_text(encoding="utf-8")
    style = html[html.index("<style>") : html.index("</style>")]
    assert "@media print" in style and "nav { display: none; }" in style


def test_counterexample_headings_say_their_role_once_and_count_faults_in_words(small_review: Any) -> None:
    html = small_review.paths["html"].read_text(encoding="utf-8")
    markdown = small_review.paths["markdown"].read_text(encoding="utf-8")
    assert not re.search(r"under (\S+) <span class=\"small\">\(\1\)</span>", html)
    assert not re.search(r"under (\S+) \(\1\)$", markdown, re.MULTILINE)
    assert "fault(s)" not in markdown and "fault(s)" not in html


def test_a_newly_violated_invariant_whose_interval_spans_zero_says_not_significant() -> None:
    from reports.document import _environment

    c = {
        "before": "head",
        "after": "head+k",
        "about": "k on",
        "pairs": 1200,
        "made_hold": [],
        "broke": ["noisy", "real"],
        "significant": ["real"],
        "rows": [],
    }
    html = _environment().get_template("comparison.html.j2").render(c=c)
    markdown = _environment(markdown=True).get_template("comparison.md.j2").render(c=c)
    assert '<code>noisy</code> <span class="small">(not significant at 95%)</span>' in html
    assert "<code>real</code> <span" not in html
    assert "`noisy` (not significant at 95%)" in markdown and "`real` (not" not in markdown
    assert "1,200 paired simulations" in html
