"""Pages that answer, in a real headless Chromium at 390 px and 1280 px on the fixture site: home's first screen
names the fastest device(s) per workload with PCC's figures apart and the latest changes, home stays short, a
leaderboard's quality × speed chart names its devices, and the PCC page sets the two routes side by side."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_support import draw_every_chart, static_server
from sitebuild import purpose_and_fixture_site

pytestmark = pytest.mark.browser
SCREENS = {390: 844, 1280: 800}
"""A phone's and a laptop's first screen (width: height, px)."""
HOME_MAX_HEIGHT = 6_000


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The purpose-written runs, the benchmark's own published example and the fixture corpus, built."""
    return purpose_and_fixture_site(tmp_path_factory.mktemp("answers"))


@pytest.fixture(scope="module")
def base(site: Path) -> Iterator[str]:
    with static_server(site) as url:
        yield url


FIRST_SCREEN = """() => {
  const box = e => e ? e.getBoundingClientRect() : null;
  const answer = document.querySelector(".answer");
  const fastest = answer && answer.querySelector(".answer-on-device a");
  const pcc = answer && answer.querySelector(".answer-pcc");
  const change = document.querySelector(".home-changes ul.changes a");
  const none = document.querySelector(".home-changes p.empty");
  return {
    screen: window.innerHeight,
    height: document.documentElement.scrollHeight,
    answer: answer && box(answer).bottom,
    workload: answer && answer.querySelector("h3 a").getAttribute("href"),
    fastest: fastest && [box(fastest).bottom, fastest.getAttribute("href"), fastest.textContent],
    pcc: pcc && [box(pcc).bottom, pcc.textContent],
    change: change && [box(change).bottom, change.getAttribute("href")],
    none: none && [box(none).bottom, none.textContent],
    links: [...document.querySelectorAll(".answer a, .home-changes a")].map(a => a.getAttribute("href")),
  };
}"""


@pytest.mark.parametrize("width", sorted(SCREENS))
def test_home_shows_in_its_first_screen_the_fastest_device_of_a_workload_pcc_apart_and_the_latest_changes(
    browser: Any, base: str, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": SCREENS[width]})
    try:
        page = context.new_page()
        page.goto(base, wait_until="networkidle")
        found = page.evaluate(FIRST_SCREEN)
    finally:
        context.close()
    screen = found["screen"]
    assert found["answer"] is not None and found["answer"] <= screen, found  # the whole first answer in view
    assert found["workload"].startswith("/leaderboards/")
    bottom, href, text = found["fastest"]
    assert bottom <= screen and href.startswith("/devices/") and ": " in text
    pcc_bottom, pcc_text = found["pcc"]
    assert pcc_bottom <= screen and pcc_text.startswith("Through PCC")  # its own line, never in the ranking
    # The latest changes are the change points of /regressions/: listed and linked where the corpus has one, and
    # where it has none (this corpus's histories are two builds of few samples) the sentence saying so, in view.
    if found["change"] is not None:
        change_bottom, change_href = found["change"]
        assert change_bottom <= screen and change_href.startswith("/compare/")
    else:
        none_bottom, none_text = found["none"]
        assert none_bottom <= screen and none_text.startswith("No figure's history moved at any build")
    assert all(found["links"]), found["links"]  # each answer and change is linked


def test_home_is_at_most_6000_px_tall_at_1280_px(browser: Any, base: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(base, wait_until="networkidle")
        height = page.evaluate("() => document.documentElement.scrollHeight")
        # the per-device detail is after the answers, each device opened on demand
        page.locator(".newest-device > summary").first.click()
        assert page.locator(".newest-device table").first.is_visible()
    finally:
        context.close()
    assert height <= HOME_MAX_HEIGHT, height


LABELS = """() => [...document.querySelectorAll(".board")].map(b => ({
  id: b.id,
  devices: [...b.querySelectorAll("table[id$='-ranked'] tbody tr td:nth-child(2)")].map(td => td.textContent.trim()),
  labels: [...b.querySelectorAll(".chart-plot .textpoint text")].map(t => t.textContent.trim()),
  cut: [...b.querySelectorAll(".chart-plot .textpoint text")].filter(t => {
    const svg = t.closest(".main-svg").getBoundingClientRect(), r = t.getBoundingClientRect();
    return r.left < svg.left - 0.5 || r.right > svg.right + 0.5 || r.top < svg.top - 0.5 || r.bottom > svg.bottom + 0.5;
  }).map(t => t.textContent.trim()),
}))"""


@pytest.mark.parametrize("width", sorted(SCREENS))
def test_a_leaderboards_chart_names_every_device_beside_its_point_and_no_board_is_empty(
    browser: Any, base: str, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": SCREENS[width]})
    try:
        page = context.new_page()
        page.goto(base + "leaderboards/synthetic-throughput/", wait_until="networkidle")
        assert draw_every_chart(page) == []
        boards = page.evaluate(LABELS)
        text = page.inner_text("main")
    finally:
        context.close()
    assert boards
    for board in boards:
        assert board["devices"], board  # a board is shown only with a ranked device
        assert sorted(board["labels"]) == sorted(board["devices"]), board
        assert board["cut"] == [], board  # each name inside the chart
    assert "No device has a publishable run" not in text


ROUTES = """() => [...document.querySelectorAll(".route-pair")].map(p => {
  const cols = [...p.querySelectorAll(".route-column")];
  return {
    routes: cols.map(c => c.querySelector("h4").textContent),
    lefts: cols.map(c => Math.round(c.getBoundingClientRect().left)),
    tops: cols.map(c => Math.round(c.getBoundingClientRect().top)),
  };
})"""


@pytest.mark.parametrize("width", sorted(SCREENS))
def test_the_pcc_page_sets_on_device_and_pcc_per_workload_in_two_columns_with_the_caveat(
    browser: Any, base: str, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": SCREENS[width]})
    try:
        page = context.new_page()
        page.goto(base + "pcc/", wait_until="networkidle")
        pairs = page.evaluate(ROUTES)
        caveat = page.inner_text(".routes-caveat")
        width_used = page.evaluate("() => document.documentElement.scrollWidth")
    finally:
        context.close()
    assert pairs and "network and the server" in caveat
    assert width_used <= width
    for pair in pairs:
        assert pair["routes"] == ["On-device", "Private Cloud Compute"]
        if width == 1280:  # side by side on a laptop; one after the other on a phone
            assert pair["tops"][0] == pair["tops"][1] and pair["lefts"][0] < pair["lefts"][1], pair
        else:
            assert pair["tops"][0] < pair["tops"][1], pair
