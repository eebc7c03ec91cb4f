"""In a real headless Chromium: trials loaded on the run page keep what the file holds."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fmbench.ingest import ingest_paths
from fmbench.publish.build import build_site
from fmbench.runfile.record import run_id_for

from browser_support import CHROMIUM_ARGS, chromium_path, static_server
from testdata import DATA

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
def page(site_url: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        tab = browser.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda e: errors.append(str(e)))
        run = run_id_for(hashlib.sha256(Path(KEPT).read_bytes()).hexdigest())
        tab.goto(f"{site_url}runs/{run}/", wait_until="networkidle")
        yield tab
        assert errors == []
        browser.close()


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
