"""The hostile run's payloads, where each text field shows, and checks of HTML for active content.

Shared by test_injection.py (HTML as bytes) and test_injection_browser.py (Chromium).
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from html.parser import HTMLParser
from types import ModuleType

from markupsafe import escape

from fmbench.runfile.record import run_id_for
from fmbench.views import content_policy

from testdata import DATA, RUNS

HOSTILE = run_id_for(hashlib.sha256((RUNS / "hostile-text.json").read_bytes()).hexdigest())
FMBENCH_SCRIPTS = {
    "filters.js", "downloads.js", "plotly.min.js", "charts.js", "search.js", "compare-picker.js", "open-section.js",
    "tables.js",
    "trials.js",
}


def _purpose_files() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_purpose_files", DATA / "make_purpose_files.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PURPOSE = _purpose_files()
PAYLOADS: list[str] = PURPOSE.PAYLOADS
JOINED = " | ".join(PAYLOADS)


def shown(text: str) -> str:
    """``text`` as a page must hold it: escaped, with NUL as U+FFFD (HTML would drop a NUL silently)."""
    return str(escape(text.replace("\x00", "\ufffd")))


# Where each text field of the hostile run shows, and how it reads there.
RUN_PAGE_FIELDS = {
    "device name": f"iPhone {PAYLOADS[1]}",
    "scenario title": f"Natural-language task capture {PAYLOADS[0]}",
    "failure message": f"Failure {JOINED}",
    "warmup failure message": f"Warmup failure {JOINED}",
    "unknown key kept": PAYLOADS[0],
    "annotation connection": f"wifi {PAYLOADS[2]}",
    "annotation location": f"{PAYLOADS[0]} {JOINED}",
    "annotation entitlement": f"present: {JOINED}",
    "annotation note": f"Note with {PAYLOADS[1]} and {PAYLOADS[3]}\n{JOINED}",
    "correction value": f"Corrected {JOINED}",
    "correction reason": f"Because {JOINED}",
}
TRIALS_PAGE_FIELDS = {
    "response": f"Answer {JOINED}",
    "1 MiB response": f"Answer {JOINED} {PURPOSE.BIG}",
    "prompt": f"Prompt {JOINED}",
    "check label": f"Contains “Lee” {PAYLOADS[1]}",
    "check detail": f"detail {PAYLOADS[2]} {JOINED}",
    "tool name": f"createReminder{PAYLOADS[0]}",
    "tool argument name": PAYLOADS[1],
    "tool argument value": JOINED,
    "final-state key": PAYLOADS[1],
    "fallback reason": f"Fallback {JOINED}",
}
GUARDRAIL_PAGE_FIELDS = {"safety detail": f"Safety {JOINED}"}


def laid_out_from_data(page: str) -> bool:
    """Whether a page's hostile fields are laid out in the browser by trials.js from the scenario's trial data (a
    trials page), not written in its HTML: its HTML holds none of them, its data file every one."""
    return "/trials/" in page


def hostile_pages() -> dict[str, dict[str, str]]:
    return {
        f"runs/{HOSTILE}/": RUN_PAGE_FIELDS,
        f"runs/{HOSTILE}/trials/task-capture/": TRIALS_PAGE_FIELDS,
        f"runs/{HOSTILE}/trials/guardrail-expected-protection/": GUARDRAIL_PAGE_FIELDS,
    }


def url_scheme(value: str) -> str | None:
    """The scheme a browser reads in a URL: C0 controls and spaces trimmed, tabs and newlines removed."""
    url = re.sub(r"[\t\n\r]", "", value.strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f"
                                             "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f \t\n\r"))
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", url)
    return match.group(1).lower() if match else None


class _Tags(HTMLParser):
    """Every element and attribute a browser would build from the page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def tags(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Tags()
    parser.feed(html)
    parser.close()
    return parser.tags


def _is_fmbench_policy(attrs: dict[str, str | None]) -> bool:
    """The one http-equiv meta tag a page may hold: fmbench's own content security policy."""
    return attrs.get("http-equiv") == "Content-Security-Policy" and attrs.get("content") == content_policy.META


def assert_no_active_content(html: str, where: str) -> None:
    """Only fmbench's own scripts and chart JSON; no handler attribute; no javascript: URL."""
    for tag, attrs in tags(html):
        names = dict(attrs)
        if tag == "script":
            src = names.get("src")
            if src is None:
                assert names.get("type") == "application/json", (where, attrs)
            else:
                assert src.split("?")[0].rsplit("/", 1)[-1] in FMBENCH_SCRIPTS, (where, src)
                assert "/assets/" in src, (where, src)
        assert tag not in ("iframe", "object", "embed", "svg", "img", "base", "meta") or (
            tag == "meta" and ("http-equiv" not in names or _is_fmbench_policy(names))
        ), (where, tag)
        for name, value in attrs:
            assert not name.startswith("on"), (where, tag, name)
            if value and name in ("href", "src", "action", "formaction", "data", "xlink:href"):
                assert url_scheme(value) in (None, "http", "https", "mailto", "data"), (where, value)
                assert not value.lower().startswith("data:") or value == "data:,", (where, value)
