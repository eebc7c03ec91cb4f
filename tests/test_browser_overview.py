"""In a real headless Chromium: the home page's newest figures, the compare picker, the OS build pages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_support import (
    axe_violations,
    draw_every_chart,
    fmbench_server,
    static_server,
)
from sitebuild import fixture_site

pytestmark = pytest.mark.browser

DEVICE = "Mac17,2"
CONFIG = "On-device · Synthetic Performance · Cold session"
"""Measured on three builds of the Mac: 25B78, then 26A5361b, then 26A5378f."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return fixture_site(tmp_path_factory.mktemp("overview"))


@pytest.fixture(scope="module")
def bases(corpus: tuple[Path, Path]) -> Iterator[dict[str, str]]:
    with static_server(corpus[1]) as static, fmbench_server(corpus[0]) as served:
        yield {"static": static, "serve": served}


@pytest.fixture
def tab(browser: Any) -> Iterator[tuple[Any, list[str]]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page, errors
    context.close()


@pytest.mark.parametrize("where", ["static", "serve"])
def test_the_home_page_shows_each_devices_newest_figures_as_text_and_loads_no_chart_library(
    where: str, tab: tuple[Any, list[str]], bases: dict[str, str]
) -> None:
    page, errors = tab
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(bases[where], wait_until="networkidle")
    devices = page.locator(".newest-device")
    assert devices.count() == 3  # the corpus' Mac, iPhone and iPad
    for summary in page.locator(".newest-device > summary").all():  # each device's detail opens on demand
        summary.click()
    first = page.locator(".newest-device table").first
    assert first.locator("tbody tr").count() >= 1
    assert [h.strip() for h in first.locator("thead th").all_inner_texts()] == [
        "Workload", "Task success", "TTFT median", "Output tok/s median"]
    badges = page.locator(".newest-run .badge").all_inner_texts()
    assert "Exploratory" in badges and "Publishable" in badges
    assert not [u for u in requested if "plotly" in u]
    assert errors == []


@pytest.mark.parametrize("where", ["static", "serve"])
def test_the_picker_opens_two_non_adjacent_builds_and_a_reload_keeps_the_choice(
    where: str, tab: tuple[Any, list[str]], bases: dict[str, str]
) -> None:
    page, errors = tab
    page.goto(bases[where] + "compare/", wait_until="networkidle")
    page.select_option("#pick-device", DEVICE)
    page.select_option("#pick-config", CONFIG)
    page.select_option("#pick-baseline", "25B78")
    page.select_option("#pick-candidate", "26A5378f")
    page.wait_for_function("() => location.hash.includes('candidate=26A5378f')")
    page.reload(wait_until="networkidle")  # the choice lives in the URL
    assert page.eval_on_selector("#pick-baseline", "s => s.value") == "25B78"
    assert page.eval_on_selector("#pick-candidate", "s => s.value") == "26A5378f"
    with page.expect_navigation():
        page.click("#pick-open")
    assert page.url.endswith(f"compare/{DEVICE}/25B78..26A5378f/")
    assert "25B78 → 26A5378f" in page.locator("main h1").inner_text()
    page.reload(wait_until="networkidle")
    assert page.url.endswith(f"compare/{DEVICE}/25B78..26A5378f/")
    assert errors == []


def test_a_configuration_measured_once_says_so_in_the_picker(tab: tuple[Any, list[str]], bases: dict[str, str]) -> None:
    page, errors = tab
    page.goto(bases["static"] + "compare/", wait_until="networkidle")
    page.select_option("#pick-device", DEVICE)
    page.select_option("#pick-config", "On-device · Agentic Tools · Cold session")
    assert "measured on one build only (26A5361b)" in page.locator("#pick-result").inner_text()
    assert page.locator("#pick-open").count() == 0
    assert errors == []


@pytest.mark.parametrize("where", ["static", "serve"])
def test_the_os_build_pages_render_without_a_script_error(where: str, tab: tuple[Any, list[str]], bases: dict[str, str]) -> None:
    page, errors = tab
    for path in ("builds/", "builds/24A5264n/", f"devices/{DEVICE}/"):
        response = page.goto(bases[where] + path, wait_until="networkidle")
        assert response is not None and response.status == 200, path
        assert page.locator("main h1").count() == 1, path
    page.goto(bases[where] + "builds/", wait_until="networkidle")
    assert page.locator("main h2").all_inner_texts() == ["iOS", "iPadOS", "macOS"]  # an iPad reports iOS
    assert errors == []


def test_picking_a_configuration_on_a_device_page_opens_its_section_the_pages_own_charts_drawing_its_trend(
    tab: tuple[Any, list[str]], bases: dict[str, str]
) -> None:
    page, errors = tab
    page.goto(bases["static"] + f"devices/{DEVICE}/", wait_until="networkidle")
    assert page.locator("details.config-section[open]").count() == 0  # the page stays short until a choice
    page.get_by_role("link", name=CONFIG, exact=True).click()
    page.wait_for_selector("details.config-section[open]", timeout=15000)  # opened by a script, on the hash change
    section = page.locator("details.config-section[open]")
    assert section.count() == 1 and CONFIG in section.locator("summary").first.inner_text()
    assert draw_every_chart(page) == []  # each drawn as it comes into view
    # one chart a figure for the device, above the sections (none of them holds a chart of its own)
    assert page.locator(".device-trends .chart-plot:has(.main-svg)").count() == 2
    assert section.locator(".chart-plot").count() == 0
    assert errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_violation_on_the_comparison_and_os_build_pages(
    scheme: str, browser: Any, bases: dict[str, str], corpus: tuple[Path, Path]
) -> None:
    """The page kinds the purpose-built site of tests/test_browser.py has no data for: a comparison of two
    builds, a device comparison, the OS build pages and the compare index with its picker."""
    site = corpus[1]
    pair = next((site / "compare" / DEVICE).iterdir())
    devices = next(p for p in (site / "compare" / "devices").glob("*/*") if p.is_dir())
    paths = [
        "compare/",
        f"compare/{DEVICE}/{pair.name}/",
        f"{devices.relative_to(site).as_posix()}/",
        "builds/",
        "builds/26A5378f/",
    ]
    found = axe_violations(browser, bases["static"], paths, scheme)
    assert found == {}, "\n".join(f"{path}: {v}" for path, vs in found.items() for v in vs)
