"""The HTML report in a real headless browser (Debian's ``chromium``): its DOM holds every section
heading and no injected element.

chromium is a system package, not a Python one, so ``make test`` cannot install it: on a machine
without it these tests are skipped with a one-line reason. Where ``LEASELAB_REQUIRE_BROWSER=1`` is set
(``.ci/run`` sets it and installs chromium) a missing browser fails them instead, so CI can never
pass by skipping them.
"""

from __future__ import annotations

import html as html_module
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from reports.sections import SECTIONS

pytestmark = pytest.mark.slow

XSS_TEXT = "<script>alert(1)</script>"
REQUIRE_ENV = "LEASELAB_REQUIRE_BROWSER"
BROWSER_NAMES = ("chromium", "chromium-browser")
INSTALL = "apt-get install -y chromium"


def browser_required(environ: Mapping[str, str]) -> bool:
    """Whether this run must have the browser: the variable set to anything but '', '0', 'false' or 'no'."""
    return environ.get(REQUIRE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def find_browser(environ: Mapping[str, str], which: Callable[[str], str | None] = shutil.which) -> str:
    """The browser's path; skips the calling test when it is missing and not required, fails it when required."""
    for name in BROWSER_NAMES:
        path = which(name)
        if path:
            return path
    if browser_required(environ):
        pytest.fail(f"{REQUIRE_ENV} is set but chromium is not on PATH ({INSTALL}; .ci/run installs it)")
    pytest.skip(f"chromium not on PATH ({INSTALL}); CI sets {REQUIRE_ENV}=1 and requires it")


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.h2: list[str] = []
        self.text: list[str] = []
        self._in_h2 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in_h2 = tag == "h2"
        if self._in_h2:
            self.h2.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2":
            self._in_h2 = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_h2:
            self.h2[-1] += data


@pytest.fixture(scope="session")
def browser() -> str:
    """The browser, found before the (slower) report is built, so a skip costs nothing."""
    return find_browser(os.environ)


def _dump_dom(browser: str, url: str, *extra: str) -> str:
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", *extra, "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_the_browser_dom_has_every_heading_and_no_injected_element(browser: str, small_review: Any) -> None:
    dom = _Dom()
    dom.feed(_dump_dom(browser, small_review.paths["html"].resolve().as_uri()))
    assert [h.strip() for h in dom.h2] == [heading for _, heading in SECTIONS]
    assert "script" not in dom.tags
    assert "svg" in dom.tags and "table" in dom.tags
    assert any(XSS_TEXT in text for text in dom.text), "the hostile name is shown as text"


MEASURE = """
<script>
window.addEventListener('load', () => {
  const figs = [...document.querySelectorAll('section#counterexamples .fig svg')].map((svg) => {
    const texts = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim());
    const boxes = texts.map((t) => ({s: t.textContent, b: t.getBoundingClientRect(),
      px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a}));
    const overlaps = [];
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const p = boxes[i].b, q = boxes[j].b;
      const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (w > 1 && h > 1) overlaps.push([boxes[i].s, boxes[j].s]);
    }
    return {texts: boxes.length, smallest_px: Math.min(...boxes.map((x) => x.px)), overlaps};
  });
  const out = document.createElement('pre');
  out.id = 'measured';
  out.textContent = JSON.stringify(figs);
  document.body.appendChild(out);
});
</script>
"""


def test_swim_lanes_read_at_1400_px_labels_at_least_11_px_and_none_overlapping(
    browser: str, small_review: Any, tmp_path: Path
) -> None:
    """Measured in chromium at a 1,400 px window on a copy of the page with a measuring script (the report
    itself holds no script, and its Content-Security-Policy would block one)."""
    html = small_review.paths["html"].read_text(encoding="utf-8")
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    page = tmp_path / "measure.html"
    page.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = _dump_dom(browser, page.as_uri(), "--window-size=1400,2000", f"--user-data-dir={tmp_path / 'profile'}")
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script did not run"
    figs = json.loads(html_module.unescape(found.group(1)))
    assert figs, "no swim lanes in the report"
    for fig in figs:
        assert fig["texts"] > 20
        assert fig["smallest_px"] >= 11, fig
        assert not fig["overlaps"], fig["overlaps"]


def _nowhere(name: str) -> str | None:
    return None


def test_a_missing_browser_skips_outside_ci() -> None:
    with pytest.raises(pytest.skip.Exception, match=f"chromium not on PATH .*{REQUIRE_ENV}=1"):
        find_browser({}, _nowhere)


@pytest.mark.parametrize("value", ["1", "true", "yes"])
def test_a_missing_browser_fails_where_ci_requires_it(value: str) -> None:
    with pytest.raises(pytest.fail.Exception, match=f"{REQUIRE_ENV} is set but chromium is not on PATH"):
        find_browser({REQUIRE_ENV: value}, _nowhere)


def test_a_browser_on_path_is_used_whatever_the_variable_says() -> None:
    assert find_browser({REQUIRE_ENV: "1"}, lambda name: f"/opt/{name}" if name == "chromium-browser" else None) == (
        "/opt/chromium-browser"
    )
    assert find_browser({REQUIRE_ENV: "0"}, lambda name: f"/usr/bin/{name}") == "/usr/bin/chromium"


def test_ci_requires_the_browser() -> None:
    """`.ci/run` exports the variable before it runs the suite, so CI never skips the browser tests."""
    script = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text(encoding="utf-8")
    assert f"export {REQUIRE_ENV}=1" in script
    assert script.index(f"export {REQUIRE_ENV}=1") < script.index("exec make test")
