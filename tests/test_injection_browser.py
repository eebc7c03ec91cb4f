"""Nothing injected, in a real headless Chromium: built pages and `serve` pages of the hostile run.

No dialog opens, no script runs but fmbench's own (every <script> element is an
fmbench asset or a chart's JSON), no CSP violation is reported, every payload
reads literally (also where the page loads trials itself), and charts draw.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fmbench.publish.build import build_site

from browser_support import draw_every_chart, fmbench_server, static_server
from hostile import FMBENCH_SCRIPTS, HOSTILE, JOINED, PURPOSE, hostile_pages
from sitebuild import purpose_db

pytestmark = pytest.mark.browser

WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__violations.push(e.violatedDirective + " " + e.blockedURI);
});
"""

AUDIT = """(allowed) => {
  const problems = [];
  const charts = new Set(Array.from(document.querySelectorAll("[data-chart]")).map(e => e.dataset.chart));
  for (const s of document.querySelectorAll("script")) {
    if (s.src) {
      const url = new URL(s.src);
      const name = url.pathname.split("/").pop();
      if (url.origin !== location.origin || !url.pathname.includes("/assets/") || !allowed.includes(name)) {
        problems.push("script src " + s.src);
      }
    } else if (s.type !== "application/json" || !charts.has(s.id)) {
      problems.push("inline script " + s.outerHTML.slice(0, 80));
    }
  }
  for (const el of document.querySelectorAll("*")) {
    for (const a of el.attributes) {
      if (a.name.startsWith("on")) problems.push("handler " + el.tagName + " " + a.name);
      const v = a.value.replace(/[\\t\\n\\r]/g, "").trim().toLowerCase();
      if (["href", "src", "action", "formaction", "data"].includes(a.name) && /^(javascript|vbscript):/.test(v)) {
        problems.push("url " + el.tagName + " " + a.value);
      }
    }
    if (["IFRAME", "OBJECT", "EMBED", "BASE"].includes(el.tagName)) problems.push("element " + el.tagName);
  }
  if (window.__fmbenchInjected !== undefined) problems.push("injected code ran: " + window.__fmbenchInjected);
  return problems;
}"""

MISSING = """([selector, expected]) => {
  const text = Array.from(document.querySelectorAll(selector)).map(e => e.textContent).join("\\n");
  return Object.keys(expected).filter(field => !text.includes(expected[field]));
}"""


def literal(text: str) -> str:
    """What a parsed page holds for ``text``: the NUL a page shows as U+FFFD (fmbench.views.render.visible_text)."""
    return text.replace("\x00", "\ufffd")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("injection-browser")
    db = purpose_db(root / "hostile.duckdb")
    build_site(db, root / "_site")
    return db, root / "_site"


@pytest.fixture(scope="module")
def bases(site: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    served_db = tmp_path_factory.mktemp("injection-served") / "served.duckdb"
    shutil.copy(site[0], served_db)
    with static_server(site[1]) as static, fmbench_server(served_db) as served:
        yield {"static": static, "serve": served}


class Tab:
    """A page that records dialogs, console errors, page errors and CSP violations."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.add_init_script(WATCH)
        self.page = self.context.new_page()
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("dialog", self._dialog)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, url: str) -> Any:
        response = self.page.goto(url, wait_until="networkidle")
        assert response is not None and response.status == 200, url
        return self.page

    def audit(self) -> list[str]:
        problems = list(self.page.evaluate(AUDIT, sorted(FMBENCH_SCRIPTS)))
        problems += [f"CSP violation: {v}" for v in self.page.evaluate("() => window.__violations")]
        return problems


@pytest.fixture
def tab(browser: Any) -> Iterator[Tab]:
    t = Tab(browser)
    yield t
    t.context.close()


@pytest.mark.parametrize("where", ["static", "serve"])
def test_hostile_pages_run_only_fmbench_scripts_open_no_dialog_read_every_payload_literally_and_draw_charts(
    where: str, tab: Tab, bases: dict[str, str]
) -> None:
    base = bases[where]
    for path, fields in hostile_pages().items():
        page = tab.open(base + path)
        if "/trials/" in path:  # laid out by trials.js from the scenario's gzipped trial data
            page.locator(".trials-status", has_text="of").wait_for(timeout=20000)
            page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        assert tab.audit() == [], path
        expected = {field: literal(text) for field, text in fields.items()}
        assert page.evaluate(MISSING, ["main", expected]) == [], path

        if path == f"runs/{HOSTILE}/":
            assert draw_every_chart(page) == []
            assert page.locator(".chart-plot .main-svg").count() >= 2
            assert page.locator(".chart-fallback").count() == 0
            assert page.locator(".chart-plot script, .chart-plot foreignObject").count() == 0

            buttons = page.locator("button.load-trials")
            assert buttons.count() >= 2
            for i in range(buttons.count()):
                buttons.nth(i).click()
            page.wait_for_function(
                "n => document.querySelectorAll('.trial-list').length === n", arg=buttons.count(), timeout=20000
            )
            loaded = {  # each trial laid out by trials.js from its scenario's data: every payload read literally
                "response": literal(f"Answer {JOINED}"),
                "1 MiB response": literal(f"Answer {JOINED} {PURPOSE.BIG}"),
                "prompt": literal(f"Prompt {JOINED}"),
                "check detail": literal(JOINED),
            }
            assert page.evaluate(MISSING, [".trial-list", loaded]) == []
            assert tab.audit() == [], "after loading trials"
    for path in ("", "runs/", "devices/"):
        tab.open(base + path)
        assert tab.audit() == [], path
    assert tab.dialogs == []
    assert tab.errors == []
