"""In a real headless Chromium: every page kind, the OS-build filter, safe text, the watched folder."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fmbench import urls
from fmbench.analysis.revisions import fixtures_registry
from fmbench.ingest import ingest_paths
from fmbench.publish.build import build_site
from fmbench.runfile.record import run_id_for
from fmbench.views import content_policy
from fmbench.views.trials import FAILING_SHOWN

from browser_support import (
    axe_violations,
    draw_every_chart,
    fmbench_server,
    static_server,
)
from sitebuild import purpose_db
from testdata import FIXTURES, REPO, RUNS

pytestmark = pytest.mark.browser
ARTIFACTS = REPO / "test-artifacts"


def _run_id(name: str) -> str:
    return run_id_for(hashlib.sha256((RUNS / name).read_bytes()).hexdigest())


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("browser")
    registry = fixtures_registry()  # the fixture corpus's fictional revisions, as the demo shows them
    db = purpose_db(root / "browser.duckdb", registry)
    if FIXTURES.is_dir():
        ingest_paths([FIXTURES], db, registry=registry)
    out = root / "_site"
    build_site(db, out, registry=registry)
    return db, out


@pytest.fixture(scope="module")
def static_url(corpus: tuple[Path, Path]) -> Iterator[str]:
    with static_server(corpus[1]) as url:
        yield url


@pytest.fixture(scope="module")
def served(corpus: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    watch = tmp_path_factory.mktemp("watched")
    db_copy = tmp_path_factory.mktemp("served") / "served.duckdb"
    shutil.copy(corpus[0], db_copy)
    with fmbench_server(db_copy, watch) as url:
        yield url, watch


VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__violations.push(e.violatedDirective + " " + e.blockedURI);
});
"""


class Page:
    """A browser tab that records console errors, page errors, dialogs and CSP violations."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.add_init_script(VIOLATIONS)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", self._dialog)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, url: str) -> Any:
        response = self.page.goto(url, wait_until="networkidle")
        assert response is not None and response.status == 200, url
        self.response = response
        return self.page

    def violations(self) -> list[str]:
        return list(self.page.evaluate("() => window.__violations"))

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tab(browser: Any) -> Iterator[Page]:
    p = Page(browser)
    yield p
    p.close()


def _page_kinds() -> list[str]:
    run = _run_id("purpose-current.json")
    return [
        "", "methodology/", "revisions/", "runs/", f"runs/{run}/", f"runs/{run}/trials/task-capture/",
        "devices/", "devices/iPhone18,1/", "scenarios/", "scenarios/task-capture/", "pcc/", "compare/",
        "regressions/", "data/", "search/?q=24A5264n", "builds/", "builds/24A5264n/",
    ]


def _visible_rows(page: Any, table: str = "#runs") -> list[str]:
    return page.eval_on_selector_all(
        f"{table} tbody tr:not(.empty-row)", "rows => rows.filter(r => !r.hidden && r.offsetParent !== null).map(r => r.textContent)"
    )


@pytest.mark.parametrize("where", ["static", "serve"])
def test_every_page_kind_renders_without_a_console_error(where: str, tab: Page, static_url: str, served: tuple[str, Path]) -> None:
    base = static_url if where == "static" else served[0]
    for path in _page_kinds():
        page = tab.open(base + path)
        assert page.locator("main h1").count() >= 1, path
    assert tab.errors == []


@pytest.mark.parametrize("where", ["static", "serve"])
def test_every_page_kind_carries_the_policy_in_a_meta_tag_and_meets_no_violation(
    where: str, tab: Page, static_url: str, served: tuple[str, Path]
) -> None:
    base = static_url if where == "static" else served[0]
    for path in _page_kinds():
        page = tab.open(base + path)
        page.wait_for_timeout(100)  # a chart draws after load: any violation it causes is reported by then
        policies = page.eval_on_selector_all(
            'meta[http-equiv="Content-Security-Policy"]', "tags => tags.map(t => t.getAttribute('content'))"
        )
        assert policies == [content_policy.META], path
        header = tab.response.headers.get("content-security-policy")
        if where == "serve":  # the meta policy is the header's, less what a meta tag cannot say
            assert header == content_policy.HEADER
            directives = [d.strip() for d in header.split(";")]
            assert "; ".join(d for d in directives if not d.startswith("frame-ancestors")) == policies[0]
        else:
            assert header is None  # a static host sends none: the meta tag is the only policy
        assert tab.violations() == [], path
    assert tab.errors == []


def test_charts_render_on_the_run_page(tab: Page, static_url: str) -> None:
    page = tab.open(static_url + f"runs/{_run_id('purpose-current.json')}/")
    assert draw_every_chart(page) == []
    assert page.locator(".chart-plot .main-svg").count() >= 2


@pytest.mark.parametrize("where", ["static", "serve"])
def test_choosing_an_os_build_filters_rows_and_the_url_and_the_url_reopens_the_view(
    where: str, tab: Page, static_url: str, served: tuple[str, Path]
) -> None:
    base = static_url if where == "static" else served[0]
    page = tab.open(base + "runs/")
    everything = _visible_rows(page)
    page.select_option("#filter-os_build", "24A5264n")
    if where == "serve":
        with page.expect_navigation():
            page.click(".filters button[type=submit]")
    else:
        page.wait_for_function("() => location.search.includes('os_build=24A5264n')")
    filtered = _visible_rows(page)
    assert "os_build=24A5264n" in page.url
    assert 0 < len(filtered) < len(everything)
    assert all("24A5264n" in row for row in filtered)
    again = tab.open(page.url)
    assert _visible_rows(again) == filtered
    assert again.eval_on_selector("#filter-os_build", "s => s.value") == "24A5264n"


@pytest.mark.parametrize("where", ["static", "serve"])
def test_hostile_text_shows_literally_and_runs_nothing(where: str, tab: Page, static_url: str, served: tuple[str, Path]) -> None:
    base = static_url if where == "static" else served[0]
    run = _run_id("hostile-text.json")
    for path in (f"runs/{run}/", f"runs/{run}/trials/task-capture/"):
        page = tab.open(base + path)
        if "/trials/" in path:  # its trials laid out by trials.js from the gzipped trial data
            page.locator(".trials-status", has_text=" of ").wait_for(timeout=20000)
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        text = page.inner_text("main")
        assert "</script><script>alert(1)</script>" in text
        assert "<img src=x onerror=alert(1)>" in text
        assert "{{7*7}}" in text
        assert page.locator("main img").count() == 0
    assert tab.dialogs == []
    assert tab.errors == []


def test_screenshots_of_the_run_device_and_comparison_pages(tab: Page, static_url: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    pages = {"run": f"runs/{_run_id('purpose-current.json')}/", "device": "devices/iPhone18,1/", "compare": "compare/iPhone18,1/24A5256a..24A5264n/" if FIXTURES.is_dir() else "compare/"}
    for name, path in pages.items():
        page = tab.open(static_url + path)
        target = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(target), full_page=True)
        assert target.stat().st_size > 10_000


def test_a_file_dropped_into_the_watched_folder_appears_on_the_next_reload(tab: Page, served: tuple[str, Path]) -> None:
    url, watch = served
    data = (RUNS / "purpose-current.json").read_bytes().replace(b"18446744073709551615", b"424242", 1)
    new_id = run_id_for(hashlib.sha256(data).hexdigest())
    (watch / "dropped.json").write_bytes(data)
    (watch / "broken.json").write_bytes(b'{"suite": "quick", ')
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        page = tab.open(url + "runs/")
        if new_id in page.inner_text("#runs"):
            break
        time.sleep(1)
    else:
        raise AssertionError("the dropped run never appeared")
    diagnostics = tab.open(url + "diagnostics/").inner_text("main")
    assert "broken.json" in diagnostics and "invalid JSON" in diagnostics


# --- search, downloads, the chart bundle, accessibility ------------------------------------------------



def _search_results(page: Any) -> list[dict[str, str]]:
    page.wait_for_function("() => !/Loading/.test(document.getElementById('search-status').textContent)")
    return page.eval_on_selector_all(
        "#search-results li",
        "items => items.map(li => ({kind: li.className, text: li.textContent, href: li.querySelector('a').getAttribute('href')}))",
    )


@pytest.mark.parametrize("where", ["static", "serve"])
def test_a_search_for_an_os_build_lists_its_runs_and_keeps_the_query_in_the_url(
    where: str, tab: Page, static_url: str, served: tuple[str, Path]
) -> None:
    import urllib.request

    base = static_url if where == "static" else served[0]
    with urllib.request.urlopen(base + "data/runs.json") as answer:  # the runs the site holds (serve's may have grown)
        expected = {r["run_id"] for r in json.load(answer)["runs"] if r["os_build"] == "24A5264n"}
    page = tab.open(base + "search/?q=24A5264n")
    assert page.input_value("#search-q") == "24A5264n"
    results = _search_results(page)
    runs = {r["href"].strip("/").split("/")[-1] for r in results if "search-run" in r["kind"]}
    assert runs == expected and len(expected) > 1
    assert any("search-build" in r["kind"] for r in results)
    page.fill("#search-q", "iPadOS 27.0")
    page.wait_for_function("() => location.search.includes('q=iPadOS')")
    ipad = _search_results(page)
    assert ipad and all("iPad" in r["text"] for r in ipad if "search-run" in r["kind"])
    again = tab.open(page.url)
    assert _search_results(again) == ipad
    again.click("#search-results li.search-run a >> nth=0")
    again.wait_for_selector("main h1")
    assert "/runs/" in again.url
    assert tab.errors == [] and tab.violations() == []


def _parse_csv(text: str) -> list[list[str]]:
    import csv
    import io

    return list(csv.reader(io.StringIO(text)))


@pytest.mark.parametrize("where", ["static", "serve"])
def test_a_tables_csv_download_matches_the_table(where: str, tab: Page, static_url: str, served: tuple[str, Path]) -> None:
    base = static_url if where == "static" else served[0]
    page = tab.open(base + "runs/?os_build=24A5264n")
    shown = page.eval_on_selector(
        "#runs",
        """t => [Array.from(t.tHead.rows[0].cells).map(c => c.textContent.replace(/\\s+/g, ' ').trim())].concat(
            Array.from(t.tBodies[0].rows).filter(r => !r.hidden && !r.classList.contains('empty-row'))
              .map(r => Array.from(r.cells).map(c => c.textContent.replace(/\\s+/g, ' ').trim())))""",
    )
    with page.expect_download() as info:
        page.click("button[data-download-csv=runs]")
    download = info.value
    assert download.suggested_filename == "runs.csv"
    rows = _parse_csv(Path(download.path()).read_text(encoding="utf-8"))
    assert rows == shown
    assert len(rows) > 2 and all("24A5264n" in " ".join(r) for r in rows[1:])
    assert tab.errors == [] and tab.violations() == []


def test_a_chart_offers_its_data_and_a_png(tab: Page, static_url: str) -> None:
    page = tab.open(static_url + f"runs/{_run_id('purpose-current.json')}/")
    assert draw_every_chart(page) == []
    name = page.get_attribute("button[data-download-chart-data] >> nth=0", "data-download-chart-data")
    with page.expect_download() as info:
        page.click(f"button[data-download-chart-data='{name}']")
    data = info.value
    assert data.suggested_filename == f"{name}.json"
    figure = page.eval_on_selector(f"#{name}-data", "s => JSON.parse(s.textContent)")
    assert json.loads(Path(data.path()).read_text(encoding="utf-8")) == figure
    with page.expect_download() as info:
        page.click(f"button[data-download-chart-png='{name}']")
    png = info.value
    assert png.suggested_filename == f"{name}.png"
    assert Path(png.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert tab.errors == [] and tab.violations() == []


def test_the_chart_bundle_holds_every_trace_type_fmbench_draws(tab: Page, static_url: str, corpus: tuple[Path, Path]) -> None:
    page = tab.open(static_url + f"runs/{_run_id('purpose-current.json')}/")
    assert draw_every_chart(page) == []
    drawn = set()
    for html in corpus[1].rglob("index.html"):
        for figure in re.findall(r'<script type="application/json" id="[^"]*-data">(.*?)</script>', html.read_text()):
            drawn |= {t.get("type", "scatter") for t in json.loads(figure)["data"]}
    assert drawn
    for kind in drawn:  # an unregistered trace type would be left invisible
        shown = page.evaluate(
            """async (kind) => { const d = document.createElement('div'); document.body.appendChild(d);
                 await Plotly.newPlot(d, [{type: kind, x: [1, 2], y: [1, 2]}]);
                 const t = d._fullData[0]; return t.type === kind && t.visible === true; }""", kind)
        assert shown, kind


def test_pages_without_charts_load_no_chart_code(tab: Page, static_url: str) -> None:
    for path in ("", "runs/", "search/", "methodology/"):
        page = tab.open(static_url + path)
        if page.locator("[data-chart]").count() == 0:
            scripts = page.eval_on_selector_all("script[src]", "s => s.map(x => x.getAttribute('src'))")
            assert not any("plotly" in s or "charts.js" in s for s in scripts), path
            assert page.evaluate("() => typeof window.Plotly") == "undefined", path


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_violation_on_any_page_kind(scheme: str, browser: Any, static_url: str) -> None:
    found = axe_violations(browser, static_url, _page_kinds(), scheme)
    assert found == {}, "\n".join(f"{path}: {v}" for path, vs in found.items() for v in vs)


def test_a_scenarios_trial_data_loads_gzipped_and_is_saved_as_its_json(
    tab: Page, static_url: str, served: tuple[str, Path], corpus: tuple[Path, Path]
) -> None:
    import gzip

    run = _run_id("purpose-current.json")
    for base in (static_url, served[0]):
        page = tab.open(base + f"runs/{run}/")
        href = page.get_attribute("a.trial-data >> nth=0", "href")
        assert href is not None and href.endswith(".json.gz")
        stored = json.loads(gzip.decompress((corpus[1] / href.lstrip("/")).read_bytes()))
        with page.expect_download() as info:
            page.click("a.trial-data >> nth=0")
        assert info.value.suggested_filename == href.rsplit("/", 1)[1].removesuffix(".gz")
        loaded = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
        assert loaded == stored and loaded["run"] == run and loaded["count"] == len(loaded["columns"]["ordinal"]) > 0
        assert tab.errors == [] and tab.violations() == [], base


def test_show_here_lays_out_a_scenarios_trials_from_its_data_a_page_at_a_time(
    tab: Page, static_url: str, corpus: tuple[Path, Path]
) -> None:
    import duckdb

    con = duckdb.connect(str(corpus[0]), read_only=True)
    run, title, count = con.execute(
        "SELECT run_id, title, trial_count FROM scenario_figures ORDER BY trial_count DESC, run_id LIMIT 1"
    ).fetchone()
    con.close()
    page = tab.open(static_url + f"runs/{run}/")
    item = page.locator("ul.trial-sections > li", has_text=title).first
    item.locator("button.load-trials").click()
    status = item.locator(".trials-status")
    status.filter(has_text=f" of {count:,}").wait_for(timeout=30000)
    assert status.inner_text() == f"Trials 1–{min(count, 50)} of {count:,}."
    assert item.locator("article.trial").count() == min(count, 50)
    if FIXTURES.is_dir():
        assert count > 50  # more than one page of trials: the next one is laid out from the same data
        item.locator("button.pager-next").click()
        assert status.inner_text() == f"Trials 51–{min(count, 100)} of {count:,}."
        assert item.locator("article.trial summary").first.inner_text().startswith("Trial 51 · ")
    assert tab.errors == [] and tab.violations() == []


@pytest.mark.parametrize("where", ["static", "serve"])
def test_a_failing_trials_link_opens_it_on_its_page_of_the_list_and_axe_finds_no_violation(
    where: str, browser: Any, static_url: str, served: tuple[str, Path], corpus: tuple[Path, Path]
) -> None:
    import duckdb

    from browser_support import AXE

    con = duckdb.connect(str(corpus[0]), read_only=True)
    paths = urls.SitePaths.read(con)
    run, scenario, count = con.execute(
        "SELECT run_id, scenario_id, count(*) FROM trials WHERE NOT task_passed GROUP BY run_id, scenario_id "
        "ORDER BY max(ordinal) - min(ordinal) DESC, run_id LIMIT 1"
    ).fetchone()
    trials_path = paths.trials(run, scenario)  # the site's paths are read from the database: before it is closed
    con.close()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(path=str(AXE))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto((static_url if where == "static" else served[0]) + trials_path, wait_until="networkidle")
        page.locator(".trials-status", has_text=" of ").wait_for(timeout=30000)
        links = page.locator("ol.failing-trials a[data-trial]")
        assert links.count() == min(count, FAILING_SHOWN)
        last = links.last
        ordinal = last.get_attribute("data-trial")
        number = last.inner_text()  # "Trial 57": its place in the scenario
        last.click()  # the trial's page of the list is laid out and the trial opened
        details = page.locator(f"#trial-{ordinal} > details")
        page.wait_for_function("d => d && d.open", arg=details.element_handle(timeout=5000), timeout=5000)
        assert details.locator("summary").inner_text().startswith(number + " · ")
        assert page.evaluate("location.hash") == f"#trial-{ordinal}"
        details.evaluate("d => d.open = false")
        last.click()  # the same link again (no change of fragment) opens it again
        page.wait_for_function("d => d.open", arg=details.element_handle(), timeout=5000)
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        violations = page.evaluate(
            "async () => (await axe.run(document)).violations.map("
            "v => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', '))"
        )
        assert violations == []
        assert errors == []
    finally:
        context.close()
