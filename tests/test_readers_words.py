"""Every page of a built site speaks a reader's words: no value or key of the run file's vocabulary ("onDevice",
"startedAt", "taskParsing"), no raw Markdown and no negative zero in any page's visible text.

What is exempt, and why: text in ``code``, ``pre`` and ``samp`` (the site names a file's key there on purpose); a
dotted path (``task-capture.promptPassRate``, ``GenerationError.guardrailViolation``: a JSON path or an error's
name, quoted); and the runner's messages, the publisher's notes and a check's description (a failures table's
"Message" and "Note" columns, a run's operator note, a trial's list of checks, a model's response), which quote the file as it was written.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.configuration import Group
from fmbench.runfile import vocabulary as vocab
from fmbench.views.common import os_label, os_name
from fmbench.views.markdown_render import markdown_as_text

from sitebuild import fixture_site
from testdata import FIXTURES

CAMEL = re.compile(r"[a-z]+(?:[A-Z][a-z0-9]*)+")
WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
RAW_MARKDOWN = re.compile(r"\*\*\S[^*\n]*\*\*|\[[^\]\n]+\]\(https?://")
NEGATIVE_ZERO = re.compile(r"(?<![\w.])[-−]0(?:\.0+)?(?![\d.,])")
QUOTED_TAGS = {"code", "pre", "samp", "script", "style", "template"}
QUOTED_COLUMNS = {"message", "note"}
QUOTED_TERMS = {"Operator note"}
QUOTED_CLASSES = {"checks", "response"}


def _file_vocabulary() -> set[str]:
    """The run file's camelCase words: the vocabularies' names and values, and the keys of every fixture run file's
    top two levels (``startedAt``, ``environment.hardwareModel``)."""
    words: set[str] = set()
    for name, values in vocab.VOCABULARIES.items():
        words.update(w for w in (name, *values) if CAMEL.fullmatch(w))
    for path in FIXTURES.glob("*.json"):
        run = json.loads(path.read_text(encoding="utf-8"))
        for key, value in run.items():
            words.add(key)
            if isinstance(value, dict):
                words.update(value)
    return {w for w in words if CAMEL.fullmatch(w)}


class _VisibleText(HTMLParser):
    """A page's visible text, less what quotes the file (see the module's docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.quoting: list[str] = []  # the tags that opened a quote, innermost last
        self.columns: list[str | None] = []  # the header keys of the table being read
        self.cell = 0
        self.term = ""  # the text of the description list's last term

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.columns = []
        elif tag == "th" and not self.quoting:
            self.columns.append(a.get("data-key"))
        elif tag == "tr":
            self.cell = 0
        elif tag == "dt":
            self.term = ""
        elif tag == "dd" and self.term.strip() in QUOTED_TERMS:
            self.quoting.append(tag)
            return
        elif tag == "td":
            column = self.columns[self.cell] if self.cell < len(self.columns) else None
            self.cell += 1
            if column in QUOTED_COLUMNS:
                self.quoting.append(tag)
                return
        if tag in QUOTED_TAGS or QUOTED_CLASSES & set((a.get("class") or "").split()):
            self.quoting.append(tag)
        elif self.quoting and tag == self.quoting[-1]:
            self.quoting.append(tag)  # the same tag nested inside a quote

    def handle_endtag(self, tag: str) -> None:
        if self.quoting and self.quoting[-1] == tag:
            self.quoting.pop()

    def handle_data(self, data: str) -> None:
        if self.lasttag == "dt":
            self.term += data
        if not self.quoting:
            self.text.append(data)


def visible_text(html: str) -> str:
    parser = _VisibleText()
    parser.feed(html)
    return " ".join(parser.text)


def file_words(text: str, words: set[str]) -> list[str]:
    """The run file's words, raw Markdown and negative zeros in a page's visible text."""
    found = [m.group(0) for m in WORD.finditer(text) if m.group(0) in words]
    found += RAW_MARKDOWN.findall(text) + NEGATIVE_ZERO.findall(text)
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_site(tmp_path_factory.mktemp("words"))[1]


def test_no_page_shows_the_run_files_vocabulary_raw_markdown_or_a_negative_zero(site: Path) -> None:
    words = _file_vocabulary()
    assert {"onDevice", "privateCloudCompute", "startedAt", "sessionMode", "taskParsing", "hardwareModel"} <= words
    found: dict[str, set[str]] = {}
    pages = list(site.rglob("*.html"))
    assert len(pages) > 50
    for page in pages:
        hits = file_words(visible_text(page.read_text(encoding="utf-8")), words)
        if hits:
            found[str(page.relative_to(site))] = set(hits)
    assert found == {}


def test_the_scan_finds_each_kind_of_file_word_where_a_page_would_show_it() -> None:
    words = _file_vocabulary()
    page = (
        "<h1>Runs</h1><p>Route onDevice, earliest startedAt</p><p>**bold** note</p><td>-0.000 s</td>"
        "<code>startedAt</code><p>task-capture.promptPassRate</p>"
        '<table><tr><th data-key="message">Message</th></tr><tr><td>quota (isLimitReached = true)</td></tr></table>'
    )
    assert file_words(visible_text(page), words) == ["onDevice", "startedAt", "**bold**", "-0.000"]


def test_a_change_that_rounds_to_zero_is_shown_without_a_sign() -> None:
    assert [fc.format_change("seconds", v) for v in (-0.0001, 0.0001, -0.0, 0.0012)] == [
        "0.000 s", "0.000 s", "0.000 s", "+0.001 s",
    ]
    assert fc.format_change("rate", -0.0004) == "0.0 pp" and fc.format_change("bytes", -1.0) == "0 MiB"
    assert fc.signed(-0.04, "+.1f") == "0.0" and fc.signed(-0.06, "+.1f") == "-0.1"


def test_an_unknown_vocabulary_value_is_shown_in_words() -> None:
    assert vocab.label("category", "spatialReasoning") == "Spatial reasoning"
    assert vocab.label("category", "taskParsing") == "Task parsing"
    assert vocab.label("category", "summarization") == "Summarization"
    assert vocab.in_words("odd_value-1") == "odd_value-1"


def test_a_notes_markdown_bold_is_shown_as_its_words_and_anything_else_as_written() -> None:
    assert markdown_as_text("Same client, but with **on-device fallback enabled**.") == (
        "Same client, but with on-device fallback enabled."
    )
    for written in ("2**3 and 4**5", "window.__x = 1 and __y__", "`code` and [a](https://b)"):
        assert markdown_as_text(written) == written


def test_a_regressions_configuration_is_said_in_a_readers_words() -> None:
    group = Group("iPhone18,1", 27, "guardrails", "onDevice", "cold", "none", "disabled", "normal", "2026.11")
    assert group.label() == "OS 27 · On-device · Safety Guardrails · Cold session · suite revision 2026.11"
    pcc = Group("Mac17,2", None, "performance", "privateCloudCompute", "cold", "light", "onDevice", "offline", None)
    assert pcc.label() == (
        "OS generation not recorded · Private Cloud Compute · Synthetic Performance · Cold session · reasoning Light"
        " · falls back on-device · offline · suite revision unknown"
    )


def test_an_ipads_os_is_ipados_where_its_runner_says_ios() -> None:
    ipad = {"system_name": "iOS", "system_version": "27.0", "os_build": "24A5264n", "hardware_model": "iPad17,3"}
    iphone = {**ipad, "hardware_model": "iPhone18,1"}
    assert (os_label(ipad), os_label(iphone)) == ("iPadOS 27.0 (24A5264n)", "iOS 27.0 (24A5264n)")
    assert os_name({"system_name": "macOS", "hardware_model": "Mac17,2"}) == "macOS"


def test_an_ipads_pages_say_ipados_and_never_ios(site: Path) -> None:
    for path in ("devices/iPad17,3/index.html", "devices/index.html"):
        text = visible_text((site / path).read_text(encoding="utf-8"))
        assert "iPadOS 27" in text or "iPadOS" in text
    device = visible_text((site / "devices/iPad17,3/index.html").read_text(encoding="utf-8"))
    assert re.search(r"(?<!Pad)iOS \d", device) is None
