"""In a real headless Chromium, at a phone's 390 px and a laptop's 1280 px: every page kind of the registry keeps to
the screen's width (a wide table scrolls in its own box, its first column in view), the tables readers need whole
fit at 1280 px, and any table sorts by a header with the mouse or the keyboard. A full-page screenshot of each page
kind at both widths, its charts drawn (its first 15,000 px on a taller page), is kept in test-artifacts/screenshots/
for a reviewer to open."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_support import draw_every_chart, static_server
from sitebuild import one_page_per_kind, purpose_and_fixture_site
from testdata import REPO

pytestmark = pytest.mark.browser
SCREENSHOTS = REPO / "test-artifacts" / "screenshots"
WIDTHS = (390, 1280)
SHOT_MAX_HEIGHT = 15_000  # px: a screenshot of a taller page keeps its first 15,000 px


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The purpose-written runs, the benchmark's own published example and the fixture corpus, built."""
    return purpose_and_fixture_site(tmp_path_factory.mktemp("layout"))


@pytest.fixture(scope="module")
def base(site: Path) -> Iterator[str]:
    with static_server(site) as url:
        yield url


@pytest.fixture(scope="module")
def tabs(browser: Any) -> Iterator[dict[int, Any]]:
    """One context (and one tab) per width, reused by every page."""
    contexts = {w: browser.new_context(viewport={"width": w, "height": 900}) for w in WIDTHS}
    yield {w: c.new_page() for w, c in contexts.items()}
    for c in contexts.values():
        c.close()


LAYOUT = """() => {
  const wraps = [...document.querySelectorAll("table")].map(t => {
    const box = t.closest(".table-wrap");
    const style = box ? getComputedStyle(box) : null;
    const first = t.querySelector("tbody tr > :first-child");
    return {
      id: t.id,
      shown: t.getClientRects().length > 0,
      fits: t.getBoundingClientRect().width <= t.parentElement.clientWidth + 1,
      scrolls: !!box && ["auto", "scroll"].includes(style.overflowX) && box.tabIndex === 0
        && box.getAttribute("role") === "region" && !!(box.getAttribute("aria-label") || box.getAttribute("aria-labelledby")),
      sticky: !!first && getComputedStyle(first).position === "sticky",
    };
  });
  return {width: document.documentElement.scrollWidth, screen: window.innerWidth, tables: wraps};
}"""


def test_no_page_kind_scrolls_sideways_and_every_table_fits_or_scrolls_in_its_own_box(
    site: Path, base: str, tabs: dict[int, Any]
) -> None:
    pages = one_page_per_kind(site)
    assert "run" in pages and "scenario" in pages and "pcc" in pages
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    for width, tab in tabs.items():
        for kind, path in pages.items():
            response = tab.goto(base + path, wait_until="load")
            assert response is not None and response.status == 200, path
            found = tab.evaluate(LAYOUT)
            if found["width"] > found["screen"]:
                problems.append(f"{kind} ({path}) at {width} px is {found['width']} px wide")
            for t in found["tables"]:
                if t["shown"] and not t["fits"] and not t["scrolls"]:
                    problems.append(f"{kind} ({path}) at {width} px: table {t['id']} neither fits nor scrolls in its box")
                if t["shown"] and not t["fits"] and not t["sticky"]:
                    problems.append(f"{kind} ({path}) at {width} px: table {t['id']} scrolls without its first column kept")
            assert draw_every_chart(tab) == [], path  # the screenshot shows the charts drawn, not their empty boxes
            target = SCREENSHOTS / f"{kind}-{width}.jpeg"
            # The whole page, but at most the first SHOT_MAX_HEIGHT px of it: past its texture limit Chromium writes an
            # empty image of a very tall page (a long comparison at 390 px). JPEG: smaller and quicker to write than PNG.
            height = min(int(tab.evaluate("document.documentElement.scrollHeight")), SHOT_MAX_HEIGHT)
            tab.screenshot(path=str(target), full_page=True, type="jpeg", quality=70,
                           clip={"x": 0, "y": 0, "width": width, "height": height})
            assert target.stat().st_size > 5_000, target
    assert problems == []
    assert {p.stem for p in SCREENSHOTS.glob("*.jpeg")} >= {f"{k}-{w}" for k in pages for w in WIDTHS}


FIT = """ids => ids.map(id => document.getElementById(id)).filter(t => t).map(t => {
  const box = t.closest(".table-wrap");
  const heads = [...t.tHead.rows[0].cells];
  const hidden = heads.filter(th => th.getBoundingClientRect().right > box.getBoundingClientRect().right + 1);
  return [t.id, hidden.map(th => th.textContent.trim())];
})"""


def test_at_1280_px_every_column_of_the_pcc_runs_and_of_a_scenarios_tables_is_in_view(
    base: str, tabs: dict[int, Any]
) -> None:
    tab = tabs[1280]
    seen = []
    for path, ids in (("pcc/", ["pcc-runs"]), ("scenarios/workout-plan/", ["scenario-on-device", "scenario-pcc"])):
        tab.goto(base + path, wait_until="load")
        for table, hidden in tab.evaluate(FIT, ids):
            seen.append(table)
            assert hidden == [], (path, table, hidden)
    assert seen == ["pcc-runs", "scenario-on-device", "scenario-pcc"]
    headers = tab.eval_on_selector_all("#scenario-on-device thead th", "ths => ths.map(th => th.textContent.trim())")
    assert "TTFT p90" in headers and "Output tok/s median" in headers
    tab.goto(base + "pcc/", wait_until="load")
    headers = tab.eval_on_selector_all("#pcc-runs thead th", "ths => ths.map(th => th.textContent.trim())")
    assert "Fallback trials" in headers and "Verdict" in headers


def _column(tab: Any, table: str, index: int) -> list[str]:
    return list(tab.eval_on_selector_all(
        f"#{table} tbody tr", f"rows => rows.map(r => r.cells[{index}].textContent.trim())"
    ))


def _sort_of(tab: Any, table: str) -> list[str | None]:
    return list(tab.eval_on_selector_all(f"#{table} thead th", "ths => ths.map(th => th.getAttribute('aria-sort'))"))


def _numbers(texts: list[str]) -> list[float]:
    return [float(t.split()[0].rstrip("%").replace(",", "")) for t in texts]


def test_a_header_sorts_its_column_as_numbers_by_click_and_by_enter_with_not_recorded_last(
    base: str, tabs: dict[int, Any]
) -> None:
    tab = tabs[1280]
    tab.goto(base + "scenarios/workout-plan/", wait_until="load")
    table = "scenario-on-device"
    keys = tab.eval_on_selector_all(f"#{table} thead th", "ths => ths.map(th => th.dataset.key)")
    assert tab.locator(f"#{table} thead th > button").count() == len(keys)  # a real button in every header
    assert _sort_of(tab, table) == [None] * len(keys)

    success = keys.index("task")
    before = _column(tab, table, success)
    assert sorted(before) != sorted(before, key=lambda t: _numbers([t])[0])  # text order is not number order here
    tab.click(f"#{table} thead th[data-key=task] button")
    assert _sort_of(tab, table)[success] == "ascending"
    assert _numbers(_column(tab, table, success)) == sorted(_numbers(before))  # as numbers ("60.0%" before "100.0%")
    tab.click(f"#{table} thead th[data-key=task] button")
    assert _sort_of(tab, table)[success] == "descending"
    assert _numbers(_column(tab, table, success)) == sorted(_numbers(before), reverse=True)

    memory = keys.index("mem")
    values = _column(tab, table, memory)
    recorded = [t for t in values if t != "not recorded"]
    assert 3 <= len(recorded) < len(values)  # some runs did not record it
    tab.focus(f"#{table} thead th[data-key=mem] button")
    tab.keyboard.press("Enter")
    sorts = _sort_of(tab, table)
    assert sorts[memory] == "ascending" and sorts.count(None) == len(keys) - 1  # one sorted header at a time
    ascending = _column(tab, table, memory)
    assert _numbers(ascending[: len(recorded)]) == sorted(_numbers(recorded))  # "1,394 MiB" .. "2,154 MiB"
    assert set(ascending[len(recorded):]) == {"not recorded"}  # the unrecorded ones last
    tab.keyboard.press("Enter")
    assert _sort_of(tab, table)[memory] == "descending"
    descending = _column(tab, table, memory)
    assert _numbers(descending[: len(recorded)]) == sorted(_numbers(recorded), reverse=True)
    assert set(descending[len(recorded):]) == {"not recorded"}  # last whichever the direction

    tab.focus(f"#{table} thead th[data-key=device] button")
    tab.keyboard.press("Enter")
    devices = _column(tab, table, keys.index("device"))
    assert _sort_of(tab, table)[keys.index("device")] == "ascending"
    assert devices == sorted(devices, key=str.casefold) and len(set(devices)) > 1


def test_the_view_gives_each_figure_cell_its_raw_value_to_sort_by(site: Path) -> None:
    html = (site / "scenarios" / "workout-plan" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<table id="[^"]+" class="data( [a-z0-9-]+)* n[0-9]+[^"]*">', html)  # its numeric columns named
    assert '<td data-sort="' in html
    assert "tables.js" in html


ALIGNMENT = """() => [...document.querySelectorAll("table.data")].filter(t => t.getClientRects().length > 0).map(t => {
  const heads = [...t.querySelectorAll("thead th")];
  const row = t.querySelector("tbody tr:not(.empty-row)");
  if (!row) return null;
  return {id: t.id, cards: t.classList.contains("row-cards"),
          cells: [...row.children].map((td, i) => ({numeric: !!heads[i] && heads[i].classList.contains("num"),
                                                   align: getComputedStyle(td).textAlign}))};
}).filter(Boolean)"""


def test_numbers_are_aligned_right_in_their_columns_and_text_is_not(site: Path, base: str, tabs: dict[int, Any]) -> None:
    pages = one_page_per_kind(site)
    problems: list[str] = []
    checked = 0
    for width, tab in tabs.items():
        for kind in ("run", "scenario", "comparison"):
            tab.goto(base + pages[kind], wait_until="load")
            for table in tab.evaluate(ALIGNMENT):
                for i, cell in enumerate(table["cells"]):
                    # a card (a comparison's verdicts on a phone) reads label then value, both from the left
                    wanted = "right" if cell["numeric"] and not (table["cards"] and width < 700) else "left"
                    checked += 1
                    if cell["align"] not in (wanted, "start" if wanted == "left" else wanted):
                        problems.append(f"{kind} at {width} px: {table['id']} column {i + 1} is {cell['align']}")
    assert checked > 100 and problems == []
