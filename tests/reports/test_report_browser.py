"""The HTML report in a real headless browser (Debian's ``chromium``; ``.ci/run`` installs it):
its DOM holds every section heading and no injected element."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from typing import Any

from reports.sections import SECTIONS

XSS_TEXT = "<script>alert(1)</script>"


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


def _dump_dom(url: str) -> str:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    assert browser, "chromium is needed (apt-get install -y chromium; .ci/run installs it)"
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_the_browser_dom_has_every_heading_and_no_injected_element(small_review: Any) -> None:
    dom = _Dom()
    dom.feed(_dump_dom(small_review.paths["html"].resolve().as_uri()))
    assert [h.strip() for h in dom.h2] == [heading for _, heading in SECTIONS]
    assert "script" not in dom.tags
    assert "svg" in dom.tags and "table" in dom.tags
    assert any(XSS_TEXT in text for text in dom.text), "the hostile name is shown as text"
