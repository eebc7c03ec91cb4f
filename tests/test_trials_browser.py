"""In a real Chromium, at a phone's width and a desktop's: a trials page lays out its trials with trials.js from
the scenario's gzipped trial data, says what it shows, pages through them, shows a response holding markup and
script as text, and says so when the data cannot be read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from fmbench import urls
from fmbench.fixtures.generate import generate_large_corpus
from fmbench.ingest import ingest_paths
from fmbench.publish.build import build_site

from browser_support import static_server
from hostile import HOSTILE
from testdata import RUNS

pytestmark = pytest.mark.browser
WIDTHS = [390, 1280]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("trials-browser")
    generated = generate_large_corpus(root / "corpus", runs=1, trials_per_run=130, legacy_runs=0, seed=5)
    db = root / "trials.duckdb"
    assert ingest_paths([RUNS, *[p for p in generated if p.suffix == ".json"]], db).ok
    build_site(db, root / "_site", jobs=1)
    return db, root / "_site"


@pytest.fixture(scope="module")
def base(site: tuple[Path, Path]) -> Iterator[str]:
    with static_server(site[1]) as url:
        yield url


@pytest.fixture
def tab(browser: Any, request: pytest.FixtureRequest) -> Iterator[tuple[Any, list[str]]]:
    context = browser.new_context(viewport={"width": request.param, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("dialog", lambda d: (errors.append("dialog " + d.message), d.dismiss()))
    yield page, errors
    context.close()


def _largest(db: Path) -> tuple[str, str, int, int]:
    """The scenario with the most trials: its trials page, trial count, and failed trials."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        run, sid, n, failed = con.execute(
            "SELECT run_id, scenario_id, count(*), count(*) FILTER (WHERE NOT task_passed) FROM trials "
            "GROUP BY run_id, scenario_id ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()
        return urls.SitePaths.read(con).trials(run, sid), urls.SitePaths.read(con).data_trials_json(run, sid), n, failed
    finally:
        con.close()


@pytest.mark.parametrize("tab", WIDTHS, indirect=True)
def test_a_trials_page_lays_out_its_trials_from_the_compressed_data_and_pages_through_them(
    tab: tuple[Any, list[str]], base: str, site: tuple[Path, Path]
) -> None:
    page, errors = tab
    path, _, n, failed = _largest(site[0])
    assert n > 100  # three pages of 50
    page.goto(base + path, wait_until="domcontentloaded")
    status = page.locator(".trials-app .trials-status")
    status.filter(has_text=" of ").wait_for(timeout=30000)
    assert status.inner_text() == f"Trials 1–50 of {n:,}."
    assert page.locator(".trials-app article.trial").count() == 50
    assert page.locator(".trials-app article.trial summary").first.inner_text().startswith("Trial 1 · ")
    page.locator(".trials-app button.pager-next").click()
    assert status.inner_text() == f"Trials 51–100 of {n:,}."
    assert page.locator(".trials-app article.trial summary").first.inner_text().startswith("Trial 51 · ")
    page.locator(".trials-app button.pager-next").click()
    assert status.inner_text() == f"Trials 101–{n} of {n:,}."
    assert page.locator(".trials-app article.trial").count() == n - 100
    assert page.locator(".trials-app button.pager-next").is_disabled()
    page.locator(".trials-app select").select_option("task failed")
    assert status.inner_text() == (
        f"Trials 1–{min(failed, 50)} of {failed} shown ({n:,} trials in all)." if failed > 1 else status.inner_text()
    )
    assert page.locator(".trials-app article.trial").count() == min(failed, 50)
    # the trial's detail: its response, checks and metrics, "not recorded" where the file holds no value
    page.locator(".trials-app select").select_option("")
    first = page.locator(".trials-app article.trial details").first
    first.locator("summary").click()
    text = first.inner_text()
    assert "Response" in text and "Checks" in text and "Metrics" in text and "not recorded" in text
    # its prompt and response, from columns that hold each distinct value once
    con = duckdb.connect(str(site[0]), read_only=True)
    try:
        prompt, response = con.execute(
            "SELECT prompt, response FROM trials WHERE run_id || '/' || scenario_id IN (SELECT run_id || '/' || "
            "scenario_id FROM trials GROUP BY run_id, scenario_id ORDER BY count(*) DESC LIMIT 1) ORDER BY ordinal LIMIT 1"
        ).fetchone()
    finally:
        con.close()
    assert prompt.split("\n")[0] in text and response.split("\n")[0] in text
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"] + 1
    assert errors == []


@pytest.mark.parametrize("tab", WIDTHS, indirect=True)
def test_a_response_holding_markup_and_script_shows_as_text(tab: tuple[Any, list[str]], base: str) -> None:
    page, errors = tab
    page.goto(base + f"runs/{HOSTILE}/trials/task-capture/", wait_until="domcontentloaded")
    page.locator(".trials-status", has_text=" of ").wait_for(timeout=30000)
    page.evaluate("() => document.querySelectorAll('.trials-app details').forEach(d => d.open = true)")
    text = page.locator(".trials-app .trial-list").inner_text()
    assert "</script><script>alert(1)</script>" in text and "<img src=x onerror=alert(1)>" in text
    assert page.locator(".trials-app img, .trials-app script, .trials-app iframe").count() == 0
    assert page.evaluate("window.__fmbenchInjected === undefined")
    assert errors == []


@pytest.mark.parametrize("tab", WIDTHS, indirect=True)
def test_a_trials_page_says_so_when_its_data_cannot_be_read(
    tab: tuple[Any, list[str]], base: str, site: tuple[Path, Path]
) -> None:
    page, errors = tab
    path, data, _, _ = _largest(site[0])
    page.route(f"**/{data}", lambda route: route.fulfill(status=404, body="gone"))
    page.goto(base + path, wait_until="domcontentloaded")
    status = page.locator(".trials-app .trials-status")
    status.filter(has_text="Could not read").wait_for(timeout=30000)
    assert status.inner_text().startswith("Could not read the trials (the server answered 404).")
    assert (status.locator("a").get_attribute("href") or "").endswith("/" + data)  # the data file to download
    assert page.locator(".trials-app article.trial").count() == 0
    assert [e for e in errors if "404" not in e] == []  # the browser logs the failed fetch itself, nothing else
