"""What a reader meets on every page kind, in a real headless Chromium at 390 px and 1280 px: the navigation (from
the page registry) fits the screen with the page's own kind marked, and axe-core finds no violation on any page
kind of the registry."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from fmbench.views import NAVIGATION, PAGES
from fmbench.views.render import assets_dir

from browser_support import AXE, axe_violations, draw_every_chart, static_server
from sitebuild import one_page_per_kind, purpose_and_fixture_site

pytestmark = pytest.mark.browser
WIDTHS = (390, 1280)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The purpose-written runs, the benchmark's own published example and the fixture corpus, built."""
    return purpose_and_fixture_site(tmp_path_factory.mktemp("readers"))


@pytest.fixture(scope="module")
def base(site: Path) -> Iterator[str]:
    with static_server(site) as url:
        yield url


@pytest.fixture(scope="module")
def pages(site: Path) -> dict[str, str]:
    found = one_page_per_kind(site)
    assert {"leaderboard", "coverage", "comparison", "device_comparison", "trials"} <= set(found)
    return found


NAV = """() => {
  const links = [...document.querySelectorAll(".site-nav a")];
  return {
    screen: window.innerWidth,
    width: document.documentElement.scrollWidth,
    header: document.querySelector(".site-header").getBoundingClientRect().height,
    links: links.map(a => {
      const r = a.getBoundingClientRect();
      return {text: a.textContent.trim(), left: r.left, right: r.right, top: r.top, bottom: r.bottom,
              current: a.getAttribute("aria-current") === "page"};
    }),
  };
}"""


def _current_entry(kind: str) -> str:
    """The navigation label a page of this kind marks: its own entry, or the entry its page class names."""
    by_key = {e.key: e.label for e in NAVIGATION}
    if kind in by_key:
        return by_key[kind]
    return {
        "run": "Runs", "trials": "Runs", "device": "Devices", "scenario": "Scenarios", "leaderboard": "Leaderboards",
        "leaderboard_category": "Leaderboards", "comparison": "Compare", "device_comparison": "Compare",
        "build": "OS builds",
    }[kind]


def test_the_navigation_fits_a_phone_and_a_laptop_and_marks_the_pages_own_kind(
    browser: Any, base: str, pages: dict[str, str]
) -> None:
    labels = [e.label for e in NAVIGATION]
    problems: list[str] = []
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 900})
        tab = context.new_page()
        try:
            for kind, path in pages.items():
                tab.goto(base + path, wait_until="load")
                nav = tab.evaluate(NAV)
                if [link["text"] for link in nav["links"]] != labels:
                    problems.append(f"{kind} at {width}: entries {[link['text'] for link in nav['links']]}")
                current = [link["text"] for link in nav["links"] if link["current"]]
                if current != [_current_entry(kind)]:
                    problems.append(f"{kind} at {width}: marks {current}")
                for link in nav["links"]:
                    if link["left"] < 0 or link["right"] > nav["screen"]:
                        problems.append(f"{kind} at {width}: {link['text']} is outside the screen")
                boxes = nav["links"]
                for a, b in pairwise(boxes):
                    overlap = min(a["right"], b["right"]) - max(a["left"], b["left"]) > 1 and (
                        min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 1
                    )
                    if overlap:
                        problems.append(f"{kind} at {width}: {a['text']} overlaps {b['text']}")
                if nav["width"] > nav["screen"]:
                    problems.append(f"{kind} at {width}: the page is {nav['width']} px wide")
                # the whole navigation within the first screen's top third, so the page's answer is still in view
                if nav["header"] > 900 / 3:
                    problems.append(f"{kind} at {width}: the header is {nav['header']:.0f} px tall")
        finally:
            context.close()
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_violation_on_any_page_kind_of_the_registry(
    scheme: str, browser: Any, base: str, pages: dict[str, str]
) -> None:
    assert set(pages) == {kind.name for kind in PAGES}  # every page kind of the registry
    found = axe_violations(browser, base, list(pages.values()), scheme)
    assert found == {}, "\n".join(f"{path}: {v}" for path, vs in found.items() for v in vs)


GRID = """<!doctype html><html lang="en"><head><title>Coverage</title></head><body><main>
<h1>Coverage</h1>
<div class="table-wrap" role="region" tabindex="0" aria-labelledby="c"><table class="data coverage" id="g">
<caption id="c">Every device against every OS build</caption>
<thead><tr><th scope="col">Device</th><th scope="col"><a href="/builds/25B78/">25B78</a></th>
<th scope="col">Runs</th></tr></thead>
<tbody><tr><th scope="row"><a href="/devices/Mac17,2/">MacBook Pro M5</a></th><td>1 publishable</td><td>2</td></tr>
<tr><th scope="row"><a href="/devices/Mac16,12/">MacBook Air M4</a></th><td>none</td><td>1</td></tr></tbody>
</table></div></main></body></html>"""


def test_a_header_holding_a_link_keeps_it_unwrapped_so_a_coverage_grid_nests_no_control_in_a_button(
    browser: Any,
) -> None:
    """A coverage grid of two devices or more (the fixture corpus has one a grid) is sortable: its OS build headers
    are links, which a sort button would wrap (axe: nested-interactive)."""
    context = browser.new_context(viewport={"width": 390, "height": 900})
    context.add_init_script(path=str(AXE))
    tab = context.new_page()
    try:
        tab.set_content(GRID)
        tab.add_script_tag(path=str(assets_dir() / "tables.js"))
        tab.wait_for_function("() => document.querySelector('#g').hasAttribute('data-sortable')")
        headers = tab.eval_on_selector_all(
            "#g thead th", "ths => ths.map(th => [th.textContent.trim(), !!th.querySelector('button')])"
        )
        assert headers == [["Device", True], ["25B78", False], ["Runs", True]]
        assert tab.locator("#g thead a[href='/builds/25B78/']").count() == 1
        violations = tab.evaluate("async () => (await axe.run(document)).violations.map(v => v.id)")
        assert violations == []
        tab.click("#g thead th:nth-child(1) button")  # the other headers still sort
        assert tab.eval_on_selector_all("#g tbody th", "ths => ths.map(th => th.textContent)") == [
            "MacBook Air M4", "MacBook Pro M5",
        ]
    finally:
        context.close()


def test_search_finds_a_sample_id_a_workload_a_device_and_a_build(browser: Any, base: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 900})
    tab = context.new_page()
    found: dict[str, list[str]] = {}
    try:
        for query in ("task-capture-007", "task capture", "iPad Pro", "24A5264n"):
            tab.goto(base + "search/?q=" + query.replace(" ", "+"), wait_until="load")
            tab.wait_for_selector("#search-results li")
            found[query] = tab.eval_on_selector_all(
                "#search-results li", "lis => lis.map(li => li.querySelector('a').textContent.trim())"
            )
        first = tab.get_attribute("#search-results li a", "href")
        assert first is not None and first.endswith("/")
    finally:
        context.close()
    assert found["task-capture-007"][0] == "Sample task-capture-007"
    assert "Natural-language task capture" in found["task capture"]
    assert any(t.startswith("iPad Pro M5") for t in found["iPad Pro"])
    assert any("24A5264n" in t for t in found["24A5264n"])


def test_the_runs_index_names_a_run_by_date_device_and_build_with_its_verdict_in_view_on_a_phone(
    browser: Any, base: str
) -> None:
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 900})
        tab = context.new_page()
        try:
            tab.goto(base + "runs/", wait_until="load")
            seen = tab.evaluate("""() => {
              const t = document.querySelector('#runs');
              const row = t.tBodies[0].rows[0];
              const box = c => c.getBoundingClientRect();
              return {heads: [...t.tHead.rows[0].cells].slice(0, 2).map(c => c.textContent.trim()),
                      name: row.cells[0].textContent.trim(), verdict: row.cells[1].textContent.trim(),
                      right: box(row.cells[1]).right, screen: window.innerWidth};
            }""")
        finally:
            context.close()
        assert seen["heads"] == ["Run", "Verdict"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} · .+ · .+", seen["name"]), seen["name"]
        assert seen["verdict"] in ("Publishable", "Exploratory", "Invalid")
        assert seen["right"] <= seen["screen"], (width, seen)  # the verdict in view without scrolling the table


TICKS = """() => {
  const out = [];
  document.querySelectorAll('[data-chart]').forEach(plot => {
    const svg = plot.querySelector('.main-svg');
    if (!svg || !plot.checkVisibility()) return;
    const frame = plot.getBoundingClientRect();
    const labels = [...plot.querySelectorAll('.xtick text, .ytick text, .g-xtitle text, .g-ytitle text, .legendtext')]
      .filter(t => t.textContent.trim() && t.getClientRects().length);
    const boxes = labels.map(t => {
      const r = t.getBoundingClientRect();
      return {text: t.textContent.trim(), axis: t.closest('.xtick, .ytick, .g-xtitle, .g-ytitle, .legend')
              ?.getAttribute('class').split(' ')[0], l: r.left, r: r.right, t: r.top, b: r.bottom};
    });
    boxes.forEach(b => {
      if (b.l < frame.left - 1 || b.r > frame.right + 1 || b.t < frame.top - 1 || b.b > frame.bottom + 1)
        out.push(`${plot.dataset.chart}: "${b.text}" is cut by the chart's edge`);
    });
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], c = boxes[j];
      if (a.axis !== c.axis || !['xtick', 'ytick'].includes(a.axis)) continue;
      const w = Math.min(a.r, c.r) - Math.max(a.l, c.l), h = Math.min(a.b, c.b) - Math.max(a.t, c.t);
      if (w > 1 && h > 1) out.push(`${plot.dataset.chart}: ticks "${a.text}" and "${c.text}" overlap`);
    }
  });
  return out;
}"""


def test_no_chart_label_is_cut_and_no_two_ticks_overlap_at_either_width(
    browser: Any, base: str, pages: dict[str, str]
) -> None:
    problems: list[str] = []
    drawn = 0
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 900})
        tab = context.new_page()
        try:
            for kind, path in pages.items():
                tab.goto(base + path, wait_until="load")
                if not tab.locator("[data-chart]").count():
                    continue
                assert draw_every_chart(tab) == [], path
                drawn += tab.locator("[data-chart] .main-svg").count()
                problems += [f"{kind} at {width}: {p}" for p in tab.evaluate(TICKS)]
        finally:
            context.close()
    assert drawn > 10
    assert problems == [], "\n".join(problems)


PLOT_SHARE = """() => [...document.querySelectorAll('[data-chart]')].filter(p => p.querySelector('.main-svg .legend'))
  .map(p => ({id: p.dataset.chart, chart: p.getBoundingClientRect().height,
              plot: p.querySelector('.nsewdrag').getBoundingClientRect().height,
              scrolls: p.querySelector('.legend .scrollbar')?.getBoundingClientRect().height > 0}))"""


def test_at_390_px_every_chart_with_a_legend_is_at_least_half_plot_and_its_legend_is_whole(
    browser: Any, base: str, pages: dict[str, str]
) -> None:
    """A legend of many configurations (the PCC page's) never takes most of a chart on a phone, nor hides entries
    behind a scrollbar: the plot area is at least half the chart's height."""
    context = browser.new_context(viewport={"width": 390, "height": 900})
    tab = context.new_page()
    measured: list[dict[str, Any]] = []
    try:
        for kind, path in pages.items():
            tab.goto(base + path, wait_until="load")
            if not tab.locator("[data-chart]").count():
                continue
            assert draw_every_chart(tab) == [], path
            measured += [{**m, "kind": kind} for m in tab.evaluate(PLOT_SHARE)]
    finally:
        context.close()
    assert {"pcc", "scenario"} <= {m["kind"] for m in measured}
    assert [m for m in measured if m["plot"] < m["chart"] / 2 or m["scrolls"]] == []
