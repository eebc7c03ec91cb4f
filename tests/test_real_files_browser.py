"""In a real headless Chromium: trials loaded on the run page keep what the file holds; the published example's
figures lead its home and run pages, which never scroll sideways."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fmbench.ingest import ingest_paths
from fmbench.publish.build import build_site
from fmbench.runfile.record import run_id_for

from browser_support import static_server
from testdata import DATA, EXAMPLE_NAME, EXAMPLES

pytestmark = pytest.mark.browser
KEPT = DATA / "reading" / "kept-fields.json"


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("kept")
    assert ingest_paths([KEPT], root / "kept.duckdb").ok
    build_site(root / "kept.duckdb", root / "site")
    with static_server(root / "site") as url:
        yield url


@pytest.fixture(scope="module")
def page(site_url: str, browser: Any) -> Iterator[Any]:
    tab = browser.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    run = run_id_for(hashlib.sha256(Path(KEPT).read_bytes()).hexdigest())
    tab.goto(f"{site_url}runs/{run}/", wait_until="networkidle")
    yield tab
    assert errors == []
    tab.close()


def _load(page: Any, scenario_title: str) -> str:
    item = page.locator("ul.trial-sections > li", has_text=scenario_title)
    item.locator("button.load-trials").click()
    item.locator(".trials-status", has_text=" of ").wait_for(timeout=10000)  # "Trials 1–3 of 3."
    item.evaluate("li => li.querySelectorAll('details').forEach(d => d.open = true)")
    return item.inner_text()


def test_loading_a_scenarios_trials_shows_its_failures_tool_calls_and_final_state(page: Any) -> None:
    text = _load(page, "Personal organizer")
    failure = page.locator("ul.trial-sections > li", has_text="Personal organizer").locator(".trial-failures li").first
    assert failure.inner_text().startswith("sample personal-organizer-002 · iteration 1 · ")
    assert "Tool createReminder threw: the list is read-only." in text
    assert "createReminder" in text and "Call Dr. Lee" in text
    assert "reminders.count" in text and "reminders.latest.title" in text


def test_loading_a_trial_shows_offline_success_visual_fixture_and_its_own_environment(page: Any) -> None:
    text = _load(page, "Visual recommendation")
    assert "Offline success" in text and "yes" in text
    assert "sunsetRun" in text
    assert "Environment at this trial" in text and "Low Power Mode" in text and "2026-11-03T09:04:31Z" in text


@pytest.fixture(scope="module")
def examples_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The benchmark's own published example run (exploratory), built alone."""
    root = tmp_path_factory.mktemp("examples")
    assert ingest_paths([EXAMPLES], root / "examples.duckdb").ok
    build_site(root / "examples.duckdb", root / "site")
    with static_server(root / "site") as url:
        yield url


@pytest.mark.parametrize("width", [390, 1280])
def test_the_example_runs_home_and_run_pages_show_its_figures_first_and_never_scroll_sideways(
    examples_url: str, width: int, browser: Any
) -> None:
    example = run_id_for(hashlib.sha256((EXAMPLES / f"{EXAMPLE_NAME}.json").read_bytes()).hexdigest())
    tab = browser.new_page(viewport={"width": width, "height": 900})
    tab.goto(examples_url, wait_until="networkidle")
    # home leads with its answers (the example is exploratory: nothing ranked); each device's figures are one
    # click below them
    tab.locator(".newest-device > summary").first.click()
    rows = tab.locator(".newest-config table tbody tr")
    assert rows.count() == 5  # the example's five workloads
    assert "0.417 s" in rows.first.inner_text() and "Natural-language task capture" in rows.first.inner_text()
    assert tab.locator(".newest-run .badge").inner_text() == "Exploratory"
    assert tab.evaluate("() => document.scrollingElement.scrollWidth") <= width
    tab.goto(f"{examples_url}runs/{example}/", wait_until="networkidle")
    glance = tab.locator("#glance-heading")
    assert glance.bounding_box()["y"] < tab.locator("#scenarios-heading").bounding_box()["y"]
    # the original file's link and its SHA-256 wrap inside the page
    assert tab.evaluate("() => document.scrollingElement.scrollWidth") <= width
    link = tab.locator("ul.downloads a").first
    assert link.bounding_box()["x"] + link.bounding_box()["width"] <= width
    tab.close()
