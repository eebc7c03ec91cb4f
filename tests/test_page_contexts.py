"""Every page kind's contract, checked on its context: the view is called on a small database and
the typed page it returns is inspected, with no template rendered and no server started.

The rendered HTML and the browser tests cover what only they can see (escaping, layout,
scripts); what a page says is asserted here, in milliseconds per page.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fmbench.blocks import Cell, Table
from fmbench.db import connect
from fmbench.errors import NotFoundError
from fmbench.filters import Filters
from fmbench.ingest import ingest_paths
from fmbench.render import Renderer
from fmbench.revisions import fixtures_registry
from fmbench.views import PAGES, SiteContext, catalog, comparisons, home, pcc, runs, site_context
from fmbench.views.page import Page

from testdata import FIXTURES

BASELINE = "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json"
CANDIDATE = "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json"
PCC = "iphone-17-pro-ios27-24a5264n-pcc-quick-2026-11-02.json"
QUICK = "iphone-17-pro-ios27-24a5264n-on-device-quick-2026-11-11.json"
DEVICE = "iPhone18,1"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteContext]:
    """Four runs of one iPhone: two OS builds of the performance suite, a quick run on-device and one on PCC."""
    db = tmp_path_factory.mktemp("contexts") / "small.duckdb"
    registry = fixtures_registry()
    assert ingest_paths([FIXTURES / name for name in (BASELINE, CANDIDATE, PCC, QUICK)], db, registry=registry).ok
    with connect(db, read_only=True) as con:
        yield site_context(con, Renderer(), registry)


def _run_id(site: SiteContext, file_name: str) -> str:
    return site.con.execute("SELECT run_id FROM runs WHERE file_name = ?", [file_name]).fetchone()[0]


def _column(table: Table, key: str) -> list[Any]:
    """The texts of one column of a table."""
    i = [c.key for c in table.columns].index(key)
    return [cell.text if isinstance(cell, Cell) else cell for cell in (row.cells[i] for row in table.rows)]


def _page(site: SiteContext, kind: str, filters: Filters | None = None, **params: Any) -> Page:
    """What the page kind's view returns: the call the static build and ``serve`` both make."""
    (page_kind,) = [k for k in PAGES if k.name == kind]
    page = page_kind.view(site, filters or Filters(), **params)
    assert isinstance(page, Page)
    assert (Path(__file__).parents[1] / "templates" / page.template).is_file()
    return page


# --- the registry ---------------------------------------------------------------------------------


def test_every_page_kind_is_a_view_function_imported_into_the_registry() -> None:
    for kind in PAGES:
        assert inspect.isfunction(kind.view), kind.name
        assert kind.view.__module__.startswith("fmbench.views."), kind.name
        assert "<locals>" not in kind.view.__qualname__, kind.name
        assert list(inspect.signature(kind.view).parameters)[:2] == ["site", "filters"], kind.name


def test_every_page_kind_has_a_contract_test_here() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    assert {k.name for k in PAGES if f'_page(site, "{k.name}"' not in source} == set()


# --- one contract per page kind ---------------------------------------------------------------------


def test_home_counts_runs_by_verdict_and_lists_the_newest_on_device_run_per_build(site: SiteContext) -> None:
    page = _page(site, "home")
    assert (page.nav_active, page.uses_charts) == ("home", False)
    stats = {s.label: s.value for s in page.stats}
    assert stats["runs"] == "4" and stats["publishable"] == "2" and stats["exploratory"] == "2"
    assert stats["devices"] == "1" and stats["OS builds"] == "2"
    assert _column(page.on_device, "suite") == ["Synthetic Performance", "Synthetic Performance", "Practical Quick"]
    assert _column(page.pcc, "suite") == ["Practical Quick"]


def test_methodology_renders_the_notes_as_markup(site: SiteContext) -> None:
    page = _page(site, "methodology")
    assert (page.title, page.nav_active) == ("Methodology", "methodology")
    assert str(page.markdown_html).startswith("<p>")


def test_revisions_lists_the_registry_newest_first(site: SiteContext) -> None:
    page = _page(site, "revisions")
    assert page.nav_active == "revisions"
    assert page.entries[0].revision.id == site.registry.current.id
    assert sum(len(e.runs.rows) for e in page.entries) == 4
    assert page.unknown_runs.rows == []


def test_data_links_every_runs_original_file(site: SiteContext) -> None:
    page = _page(site, "data")
    assert page.nav_active == "data"
    assert len(page.files.rows) == 4
    assert any(link.href == "/data/runs.json" for link in page.index)


def test_runs_lists_the_runs_newest_first_and_applies_filters(site: SiteContext) -> None:
    page = _page(site, "runs")
    assert (page.nav_active, page.uses_charts) == ("runs", False)
    assert _column(page.runs, "started") == sorted(_column(page.runs, "started"), reverse=True)
    only_pcc = _page(site, "runs", Filters({"route": "privateCloudCompute"}))
    assert only_pcc.runs.caption == "1 run(s), newest first"
    assert _column(only_pcc.runs, "suite") == ["Practical Quick"]


def test_run_carries_its_verdict_figures_trial_sections_and_charts(site: SiteContext) -> None:
    run_id = _run_id(site, QUICK)
    page = _page(site, "run", run_id=run_id)
    assert (page.nav_active, page.uses_charts) == ("runs", True)
    assert page.run_id == run_id and page.verdict.text == "Exploratory"
    assert page.verdict_banner is not None and page.verdict_banner.title.startswith("Exploratory")
    assert _column(page.scenarios, "scenario")[0] == "Natural-language task capture"
    assert page.trial_sections[0].href == f"/runs/{run_id}/trials/task-capture/"
    assert page.charts and page.replay is None
    with pytest.raises(NotFoundError):
        runs.run_page(site, Filters(), run_id="000000000000")


def test_trials_shows_the_first_page_of_a_scenario(site: SiteContext) -> None:
    run_id = _run_id(site, QUICK)
    page = _page(site, "trials", run_id=run_id, scenario="task-capture")
    assert page.nav_active == "runs"
    assert (page.scenario_id, page.total, page.first_ordinal) == ("task-capture", 3, 1)
    assert [t.sample_id for t in page.trials] == ["task-capture-001"] * 3
    assert (page.pager.page, page.pager.pages, page.pager.prev_href) == (1, 1, None)


def test_trials_page_continues_where_the_first_page_stops(site: SiteContext) -> None:
    run_id = _run_id(site, BASELINE)
    page = _page(site, "trials_page", run_id=run_id, scenario="synthetic-throughput", page=2)
    assert (page.total, page.first_ordinal, page.pager.pages) == (60, 51, 2)
    assert page.pager.prev_href == f"/runs/{run_id}/trials/synthetic-throughput/"
    assert page.pager.next_href is None and len(page.trials) == 10
    with pytest.raises(NotFoundError):
        runs.trials_page(site, Filters(), run_id=run_id, scenario="synthetic-throughput", page=3)


def test_devices_groups_runs_by_hardware_model(site: SiteContext) -> None:
    page = _page(site, "devices")
    assert page.nav_active == "devices"
    assert _column(page.devices, "hardware") == [DEVICE]
    assert _column(page.devices, "runs") == ["4"] and _column(page.devices, "publishable") == ["2"]


def test_device_shows_each_configuration_across_builds_and_links_their_comparison(site: SiteContext) -> None:
    page = _page(site, "device", device=DEVICE)
    assert (page.nav_active, page.uses_charts) == ("devices", True)
    assert (page.device, page.hardware_model) == ("iPhone 17 Pro", DEVICE)
    assert len(page.runs.rows) == 4
    assert [c.href for c in page.compare_links] == [f"/compare/{DEVICE}/24A5256a..24A5264n/"]
    with pytest.raises(NotFoundError):
        catalog.device_page(site, Filters(), device="iPhone99,9")


def test_scenarios_lists_every_measured_workload(site: SiteContext) -> None:
    page = _page(site, "scenarios")
    assert page.nav_active == "scenarios"
    ids = _column(page.scenarios, "scenario")
    assert ids[0] == "task-capture" and "synthetic-throughput" in ids and len(ids) == len(set(ids))


def test_scenario_separates_on_device_from_pcc_runs(site: SiteContext) -> None:
    page = _page(site, "scenario", scenario="task-capture")
    assert (page.nav_active, page.uses_charts) == ("scenarios", True)
    assert page.scenario_id == "task-capture"
    assert len(page.on_device.rows) == 1 and len(page.pcc.rows) == 1


def test_pcc_reports_availability_fallback_and_connection_notes_per_run(site: SiteContext) -> None:
    page = _page(site, "pcc")
    assert (page.nav_active, page.uses_charts) == ("pcc", True)
    assert _column(page.availability, "attempts") == ["50"]
    assert _column(page.availability, "success") == ["100.0%"]
    assert _column(page.availability, "fallback") == ["7"]
    assert _column(page.fallback_trials, "executed") == ["On-device"] * 7
    assert _column(page.connections, "connection") == ["cellular-5g"]
    assert page.failure_kinds.rows == []
    assert [c.id for c in page.charts] == ["pcc-availability", "pcc-ttft"]


def test_compare_index_pairs_the_two_builds_of_the_device(site: SiteContext) -> None:
    page = _page(site, "compare_index")
    assert page.nav_active == "compare"
    hrefs = [row.cells[0].href for row in page.pairs.rows]
    assert f"/compare/{DEVICE}/24A5256a..24A5264n/" in hrefs


def test_comparison_compares_the_configuration_both_builds_measured(site: SiteContext) -> None:
    page = _page(site, "comparison", device=DEVICE, baseline="24A5256a", candidate="24A5264n")
    assert (page.nav_active, page.uses_charts) == ("compare", True)
    assert (page.rule, page.strict) == ("latest", False)
    assert [s.heading for s in page.sections] == ["On-device · Synthetic Performance · Cold session"]
    with pytest.raises(NotFoundError):
        comparisons.comparison_page(site, Filters(), device=DEVICE, baseline="24A5256a", candidate="99Z999")


def test_regressions_compares_every_build_step(site: SiteContext) -> None:
    page = _page(site, "regressions")
    assert page.nav_active == "regressions"
    assert _column(page.steps, "builds") == ["24A5256a → 24A5264n"]
    assert page.rule == "latest" and page.confidence == "95%"


def test_search_keeps_the_query_and_points_to_the_index_written_at_build_time(site: SiteContext) -> None:
    page = _page(site, "search", q=" 24A5264n ")
    assert (page.title, page.nav_active, page.uses_charts) == ("Search", "search", False)
    assert page.query == "24A5264n" and page.index_url == "/data/search.json"
    assert _page(site, "search").query == ""


def test_the_registry_holds_the_view_functions_themselves() -> None:
    """What the registry calls is what a reader finds by name (no strings, no adapters)."""
    by_name = {k.name: k.view for k in PAGES}
    assert by_name["home"] is home.home_page and by_name["pcc"] is pcc.pcc_page
    assert by_name["run"] is runs.run_page and by_name["trials_page"] is runs.trials_page


# --- one layout of a trial -------------------------------------------------------------------------


def test_the_run_pages_trial_fragment_lays_trials_out_exactly_as_the_trials_page(site: SiteContext) -> None:
    import re

    from fmbench.views import render_page
    from fmbench.views.data import trials_fragment

    run_id = _run_id(site, QUICK)
    (kind,) = [k for k in PAGES if k.name == "trials"]
    page_html = render_page(site, kind, Filters(), run_id=run_id, scenario="task-capture")
    fragment = trials_fragment(site, Filters(), run_id=run_id, scenario="task-capture").decode("utf-8")
    articles = re.compile(r'<article class="trial".*?</article>', re.S)
    assert len(articles.findall(fragment)) == 3
    assert articles.findall(fragment) == articles.findall(page_html)
    assert fragment.startswith('<div class="trial-list">') and "<html" not in fragment
