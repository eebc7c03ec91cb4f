"""In a real headless Chromium: on every page kind that has a chart, every chart draws with no JavaScript error and
none is drawn empty; the chart library is fetched only by a page that draws a chart, only when a chart comes into
view (one visible on load is drawn on load); pages without a chart never request it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fmbench.runfile.record import run_id_for

from browser_support import draw_every_chart, static_server
from sitebuild import purpose_and_fixture_site
from testdata import RUNS

pytestmark = pytest.mark.browser

WORDS = {"trials", "feed.xml"}
"""Path segments that name a kind of page rather than one of its instances."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return purpose_and_fixture_site(tmp_path_factory.mktemp("charts"))


@pytest.fixture(scope="module")
def base(site: Path) -> Iterator[str]:
    with static_server(site) as url:
        yield url


def _kind(path: str) -> str:
    parts = path.split("/")[:-1]  # ".../index.html"
    return "/".join(p if i == 0 or p in WORDS else "*" for i, p in enumerate(parts)) or "home"


def _pages_by_kind(site: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Per page kind, one page that draws a chart and one that draws none (the first of each, in path order)."""
    charted: dict[str, str] = {}
    plain: dict[str, str] = {}
    for page in sorted(site.rglob("index.html")):
        path = page.relative_to(site).as_posix()
        kind = _kind(path)
        into = charted if "data-chart=" in page.read_text(encoding="utf-8") else plain
        into.setdefault(kind, path.removesuffix("index.html"))
    return charted, plain


class Tab:
    """A tab that records errors and every address it requests."""

    def __init__(self, browser: Any, width: int = 1280, height: int = 900) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))

    def open(self, url: str) -> Any:
        self.requests.clear()
        response = self.page.goto(url, wait_until="networkidle")
        assert response is not None and response.status == 200, url
        return self.page

    def asked_for_plotly(self) -> bool:
        return any("plotly" in u.lower() for u in self.requests)


@pytest.fixture
def tab(browser: Any) -> Iterator[Tab]:
    t = Tab(browser)
    yield t
    t.context.close()


EMPTY_CHARTS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
  .filter(p => p.querySelectorAll('.scatterlayer .point').length === 0)
  .map(p => p.dataset.chart)"""


def test_every_chart_of_every_chart_page_kind_draws_with_marks_and_no_error(tab: Tab, site: Path, base: str) -> None:
    charted, _ = _pages_by_kind(site)
    # the home page shows each device's newest figures as text: no chart there
    assert {"runs/*", "scenarios/*", "pcc", "leaderboards/*"} <= set(charted), sorted(charted)
    assert "home" not in charted
    for kind, path in charted.items():
        page = tab.open(base + path)
        assert draw_every_chart(page) == [], path
        assert page.evaluate(EMPTY_CHARTS) == [], path  # each drawn chart shows at least one mark
        assert page.locator(".chart-fallback").count() == 0, path
        captions = page.eval_on_selector_all(
            "figure.chart:has([data-chart]) .chart-marks", "ps => ps.map(p => p.textContent.trim())")
        assert len(captions) == page.locator("[data-chart]").count() and all(captions), (kind, path)
        assert tab.errors == [], (kind, path, tab.errors)


def test_a_page_without_a_chart_never_requests_plotly(tab: Tab, site: Path, base: str) -> None:
    _, plain = _pages_by_kind(site)
    assert {"runs", "devices", "methodology", "search", "data"} <= set(plain), sorted(plain)
    for kind, path in plain.items():
        page = tab.open(base + path)
        page.mouse.wheel(0, 20000)  # scrolled to the end: still nothing to draw, nothing fetched
        page.wait_for_timeout(150)
        assert not tab.asked_for_plotly(), (kind, path)
        assert page.evaluate("() => typeof window.Plotly") == "undefined", path
        assert tab.errors == [], (kind, path, tab.errors)


def test_a_chart_below_the_fold_is_fetched_and_drawn_only_when_scrolled_to(tab: Tab, base: str) -> None:
    run = run_id_for(hashlib.sha256((RUNS / "purpose-current.json").read_bytes()).hexdigest())
    page = tab.open(base + f"runs/{run}/")
    first = page.eval_on_selector("[data-chart]", "p => p.getBoundingClientRect().top - window.innerHeight")
    assert first > 400, "the run page's first chart should be below the fold at 900 px"
    page.wait_for_timeout(300)
    assert not tab.asked_for_plotly() and page.locator(".main-svg").count() == 0
    page.locator("[data-chart]").first.scroll_into_view_if_needed()
    page.wait_for_selector(".chart-plot .main-svg", timeout=15000)
    assert tab.asked_for_plotly() and tab.errors == []


def test_a_chart_visible_on_load_is_drawn_on_load(browser: Any, site: Path, base: str) -> None:
    charted, _ = _pages_by_kind(site)
    tall = Tab(browser, 1280, 12000)  # a tall window: the PCC page's first chart, under its tables, is in view on load
    try:
        page = tall.open(base + charted["pcc"])
        assert page.eval_on_selector("[data-chart]", "p => p.getBoundingClientRect().top < window.innerHeight")
        page.wait_for_selector(".chart-plot .main-svg", timeout=15000)  # no scrolling
        assert tall.errors == []
    finally:
        tall.context.close()


DRAWN_TRIALS = """() => Array.from(document.querySelectorAll('[data-chart^="trials-"].js-plotly-plot')).map(p => {
  const held = JSON.parse(document.getElementById(p.dataset.chart).textContent).data[0];
  const drawn = p.data[0];
  return {held_x: 'x' in held, spread: held.spread, y: held.y, drawn_x: drawn.x, drawn_y: drawn.y,
          points: p.querySelectorAll('.scatterlayer .trace:first-child .point').length};
})"""


def test_every_trial_is_drawn_in_its_own_column_from_a_chart_that_holds_no_x(tab: Tab, site: Path, base: str) -> None:
    charted, _ = _pages_by_kind(site)
    page = tab.open(base + charted["runs/*"])
    assert draw_every_chart(page) == []
    charts = page.evaluate(DRAWN_TRIALS)
    assert charts, "a run page draws its trials"
    for chart in charts:
        assert not chart["held_x"] and sum(chart["spread"]) == len(chart["y"])  # the page holds counts, not places
        assert chart["drawn_y"] == chart["y"] and chart["points"] == len(chart["y"])  # every trial is a dot
        start = 0
        for column, count in enumerate(chart["spread"]):
            xs = chart["drawn_x"][start:start + count]
            assert all(column - 0.25 <= x <= column + 0.25 for x in xs), (column, xs)  # within its column
            assert count < 2 or len(set(xs)) > 1  # side by side, not stacked on one line
            start += count
    assert tab.errors == []
