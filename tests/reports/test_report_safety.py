"""A scenario and a tool named ``<script>alert(1)</script>`` render as text; every figure exists."""

from __future__ import annotations

import re
from typing import Any

from PIL import Image

XSS = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def test_a_hostile_name_is_text_in_the_html(small_review: Any) -> None:
    html = small_review.paths["html"].read_text(encoding="utf-8")
    assert XSS not in html
    assert "<script" not in html.lower()
    assert ESCAPED in html
    assert html.count(ESCAPED) >= 3, "the name shows in tables, the timeline and the swim-lane figure"


def test_a_hostile_name_is_text_in_the_markdown(small_review: Any) -> None:
    markdown = small_review.paths["markdown"].read_text(encoding="utf-8")
    outside_code = re.sub(r"```.*?```", "", markdown, flags=re.S)
    assert XSS not in outside_code
    assert ESCAPED in outside_code


def test_every_figure_exists_and_is_not_blank(small_review: Any) -> None:
    out = small_review.paths["html"].parent
    pngs = sorted((out / "figures").glob("*.png"))
    names = {p.stem.rsplit("-", 1)[0] if p.stem[-1].isdigit() else p.stem for p in pngs}
    assert {"decision", "proposal", "curve-intensity", "curve-latency", "fault-heatmap", "counterexample"} <= names
    for png in pngs:
        with Image.open(png) as image:
            assert image.width > 300 and image.height > 100
            low, high = image.convert("L").getextrema()
            assert high - low > 100, f"{png.name} is blank"
    html = small_review.paths["html"].read_text(encoding="utf-8")
    assert html.count("<svg") == len(pngs)
    markdown = small_review.paths["markdown"].read_text(encoding="utf-8")
    assert all(f"figures/{p.name}" in markdown for p in pngs)
