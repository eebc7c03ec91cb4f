"""Every page kind's contract, checked on its context: the view is called on a small database and
the typed page it returns is inspected, with no template rendered and no server started.

The rendered HTML and the browser tests cover what only they can see (escaping, layout,
scripts); what a page says is asserted here, in milliseconds per page.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fmbench import urls
from fmbench.analysis.revisions import fixtures_registry
from fmbench.errors import NotFoundError
from fmbench.ingest import ingest_paths
from fmbench.storage.db import connect
from fmbench.views import (
    PAGES,
    SiteContext,
    builds,
    catalog,
    comparisons,
    device_comparisons,
    home,
    pcc,
    resolve,
    run_page,
    site_context,
    trial_details,
    trials,
)
from fmbench.views.blocks import Cell, Table
from fmbench.views.filters import Filters
from fmbench.views.page import Page
from fmbench.views.render import Renderer

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
    assert (page.nav_active, page.uses_charts) == ("home", True)
    stats = {s.label: s.value for s in page.stats}
    assert stats["runs"] == "4" and stats["publishable"] == "2" and stats["exploratory"] == "2"
    assert stats["devices"] == "1" and stats["OS builds"] == "2"
    assert _column(page.on_device, "suite") == ["Synthetic Performance", "Synthetic Performance", "Practical Quick"]
    assert _column(page.pcc, "suite") == ["Practical Quick"]


def test_home_overview_draws_each_configuration_of_the_newest_publishable_build_on_its_own_axes(
    site: SiteContext,
) -> None:
    page = _page(site, "home")
    (device,) = page.overview
    assert (device.device.text, device.build.text) == (f"iPhone 17 Pro ({DEVICE})", "iOS 27.0.0 (24A5264n)")
    assert device.build.href == "/builds/24A5264n/"
    (config,) = device.configs  # the PCC run of that build is exploratory: only publishable runs are drawn
    assert (config.label, config.service) == ("On-device · Synthetic Performance · Cold session", False)
    assert config.run.href == f"/runs/{_run_id(site, CANDIDATE)}/"
    assert [c.title for c in config.charts] == ["Median time to first token", "Median output tokens/s"]
    for chart in config.charts:
        (trace,) = chart.figure_json["data"]
        assert trace["y"] == ["Synthetic throughput"] and all(v is not None for v in trace["x"])
    assert page.changes and page.changes[0].href == f"/compare/{DEVICE}/24A5256a..24A5264n/"
    assert page.changes[0].text.startswith("Regression: Median TTFT of Synthetic throughput increased")


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
        run_page.run_page(site, Filters(), run_id="000000000000")


def test_trials_shows_a_scenarios_counts_and_failing_trials_and_links_its_trial_data(site: SiteContext) -> None:
    run_id = _run_id(site, QUICK)
    page = _page(site, "trials", run_id=run_id, scenario="task-capture")
    assert page.nav_active == "runs"
    assert (page.scenario_id, page.total) == ("task-capture", 3)
    assert page.summary.startswith("3 trials in this scenario: ")
    assert page.data_href == "/" + urls.data_trials_json(run_id, "task-capture")
    assert all(t.checks is not None and 1 <= t.number <= 3 for t in page.failing)


def test_trials_is_one_page_a_scenario_its_failing_trials_numbered_in_the_scenario(site: SiteContext) -> None:
    run_id = _run_id(site, BASELINE)
    page = _page(site, "trials", run_id=run_id, scenario="synthetic-throughput")
    assert page.total == 60 and page.per_page == urls.TRIALS_PER_PAGE
    details = trial_details.trial_details(site.con, run_id, "synthetic-throughput")
    failed = [n for n, t in enumerate(details, start=1) if t.verdict == "task failed"]
    assert [t.number for t in page.failing] == failed[: trials.FAILING_SHOWN]
    assert page.summary == f"60 trials in this scenario: {60 - len(failed)} passed, {len(failed)} failed" + (
        "." if not page.failures else page.summary.split(f"{len(failed)} failed", 1)[1]
    )
    assert {k.name for k in PAGES} >= {"trials"} and "trials_page" not in {k.name for k in PAGES}
    assert resolve(f"runs/{run_id}/trials/synthetic-throughput/page-2/") is None  # no page-N URL any more


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
    assert [c.href for c in page.configs] == [f"#{s.anchor}" for s in page.sections]
    trend = {s.label: [c.id for c in s.charts] for s in page.sections}
    assert trend["On-device · Synthetic Performance · Cold session"]  # two builds: a trend chart
    quick = next(s for s in page.sections if s.label == "On-device · Practical Quick · Warm reused session · offline")
    assert quick.charts == [] and [c.key for c in quick.table.columns][-5:] == ["task", "ttft50", "tps50", "mem", "tokens"]
    with pytest.raises(NotFoundError):
        catalog.device_page(site, Filters(), device="iPhone99,9")
    pcc = page.sections[-1].table
    assert "7 trial(s) that fell back to the on-device model left out" in pcc.caption
    assert "Session usage (counted)" in _column(pcc, "tokens")


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
    assert _column(page.on_device, "tokens") == ["System tokenizer (counted)"]
    assert _column(page.pcc, "tokens") == ["Session usage (counted)"]
    # one TTFT chart per configuration, named by it
    assert [c.title.split(",")[1].split(" · ")[1] for c in page.charts] == ["Practical Quick", "Practical Quick"]


def test_a_pcc_scenario_shows_speed_and_memory_of_the_trials_pcc_answered_and_counts_the_fallbacks(
    site: SiteContext,
) -> None:
    page = _page(site, "scenario", scenario="workout-plan")
    assert "2 trial(s) that fell back to the on-device model left out" in page.pcc.caption
    pooled = site.con.execute(
        "SELECT memory_max FROM scenario_figures JOIN runs USING (run_id) "
        "WHERE route = 'privateCloudCompute' AND scenario_id = 'workout-plan'"
    ).fetchone()
    assert pooled is not None and pooled[0] > 1_000 * 2**20  # the stored figure pools the on-device fallbacks
    assert _column(page.pcc, "mem") == ["225 MiB"]


def test_the_run_page_shows_the_token_count_source_of_the_run_and_of_each_scenario(site: SiteContext) -> None:
    (pcc,) = site.con.execute("SELECT run_id FROM runs WHERE route = 'privateCloudCompute'").fetchone() or ("",)
    page = _page(site, "run", run_id=pcc)
    (condition,) = [c for c in page.conditions if c.label == "Token count source"]
    assert isinstance(condition.value, Cell) and condition.value.text == "Mixed"
    assert "Mixed" in _column(page.scenarios, "tokens") and "Session usage (counted)" in _column(page.scenarios, "tokens")


def test_the_run_page_of_a_pcc_run_with_fallbacks_splits_speed_and_memory_by_executed_model(site: SiteContext) -> None:
    (pcc,) = site.con.execute("SELECT run_id FROM runs WHERE route = 'privateCloudCompute'").fetchone() or ("",)
    table = _page(site, "run", run_id=pcc).executed_models
    assert table is not None
    assert set(_column(table, "model")) == {"Private Cloud Compute", "On-device"}
    workout = [row for row in table.rows if row.cells[0].title == "workout-plan"]
    assert [(r.cells[1].text, r.cells[2]) for r in workout] == [("On-device", "2"), ("Private Cloud Compute", "3")]
    assert _page(site, "run", run_id=site.con.execute(
        "SELECT run_id FROM runs WHERE route = 'onDevice' LIMIT 1").fetchone()[0]).executed_models is None  # type: ignore[index]


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
    ttft = page.charts[1]
    assert "7 trial(s) that fell back to the on-device model left out" in ttft.title
    # one series per device and configuration: suite and session are in its name, never pooled
    names = [trace["name"] for trace in ttft.figure_json["data"]]
    assert len(names) == 1 and "Private Cloud Compute" in names[0] and "fallback enabled" in names[0]


def test_compare_index_pairs_the_two_builds_of_the_device(site: SiteContext) -> None:
    page = _page(site, "compare_index")
    assert page.nav_active == "compare"
    hrefs = [row.cells[0].href for row in page.pairs.rows]
    assert f"/compare/{DEVICE}/24A5256a..24A5264n/" in hrefs


def test_compare_index_gives_the_picker_every_configuration_and_lists_builds_measured_once(site: SiteContext) -> None:
    page = _page(site, "compare_index")
    (device,) = page.picker["devices"]
    assert page.picker["base"] == "/compare/"
    assert (device["key"], device["slug"], device["pairs"]) == (DEVICE, DEVICE, ["24A5256a..24A5264n"])
    builds = {c["label"]: [b["build"] for b in c["builds"]] for c in device["configs"]}
    assert builds["On-device · Synthetic Performance · Cold session"] == ["24A5256a", "24A5264n"]
    quick = "On-device · Practical Quick · Warm reused session · offline"
    assert builds[quick] == ["24A5264n"]  # measured once: listed, not dropped
    assert [quick, "24A5264n"] in [
        [r.cells[1], r.cells[2].text] for r in page.measured_once.rows
    ]


def test_comparison_compares_the_configuration_both_builds_measured(site: SiteContext) -> None:
    page = _page(site, "comparison", device=DEVICE, baseline="24A5256a", candidate="24A5264n")
    assert (page.nav_active, page.uses_charts) == ("compare", True)
    assert (page.rule, page.strict) == ("latest", False)
    assert [s.heading for s in page.sections] == ["On-device · Synthetic Performance · Cold session"]
    with pytest.raises(NotFoundError):
        comparisons.comparison_page(site, Filters(), device=DEVICE, baseline="24A5256a", candidate="99Z999")


@pytest.fixture(scope="module")
def two_devices(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteContext]:
    """The iPhone's two performance runs and the iPad's performance run of OS 27 build 24A5264n."""
    db = tmp_path_factory.mktemp("devices") / "two.duckdb"
    registry = fixtures_registry()
    names = (BASELINE, CANDIDATE, "ipad-pro-m5-ipados27-24a5264n-on-device-performance-2026-11-05.json")
    assert ingest_paths([FIXTURES / name for name in names], db, registry=registry).ok
    with connect(db, read_only=True) as con:
        yield site_context(con, Renderer(), registry)


def test_device_comparison_holds_the_generation_and_configuration_and_takes_each_devices_newest_build(
    two_devices: SiteContext,
) -> None:
    site = two_devices
    assert device_comparisons.device_comparison_instances(site) == [
        {"device_a": "iPad17,3", "device_b": DEVICE, "generation": "27"}
    ]
    page = _page(site, "device_comparison", device_a="iPad17,3", device_b=DEVICE, generation="27")
    assert (page.nav_active, page.uses_charts, page.generation) == ("compare", True, 27)
    (section,) = page.sections
    assert section.heading == f"On-device · Synthetic Performance · Cold session: iPad17,3 on 24A5264n, {DEVICE} on 24A5264n"
    assert section.label == "Device comparison" and section.refused is None
    assert "Hardware model" in [r.cells[0] for r in section.differences.rows]
    index = _page(site, "compare_index")
    assert [r.cells[0].href for r in index.device_pairs.rows] == [f"/compare/devices/iPad17,3..{DEVICE}/27/"]
    with pytest.raises(NotFoundError):
        device_comparisons.device_comparison_page(site, Filters(), device_a="iPad17,3", device_b=DEVICE, generation="26")


def test_regressions_compares_every_build_step(site: SiteContext) -> None:
    page = _page(site, "regressions")
    assert page.nav_active == "regressions"
    assert _column(page.steps, "builds") == ["24A5256a → 24A5264n"]
    assert page.rule == "latest" and page.confidence == "95%"


def test_builds_lists_every_os_build_per_platform_in_order_of_first_appearance(site: SiteContext) -> None:
    page = _page(site, "builds")
    assert page.nav_active == "builds"
    assert [p.platform for p in page.platforms] == ["iOS"]
    assert _column(page.platforms[0].table, "build") == ["24A5256a", "24A5264n"]
    assert page.platforms[0].table.rows[0].cells[0].href == "/builds/24A5256a/"


def test_an_ipad_is_listed_under_ipados_from_its_hardware_model() -> None:
    assert builds.platform("iPad17,3", "iOS") == "iPadOS"
    assert builds.platform("iPhone18,1", "iOS") == "iOS"
    assert builds.platform("Mac17,2", "macOS") == "macOS"
    assert builds.platform(None, "iOS") == "iOS"


def test_build_shows_what_it_measured_and_what_changed_against_the_previous_build(site: SiteContext) -> None:
    page = _page(site, "build", build="24A5264n")
    assert (page.nav_active, page.os_build) == ("builds", "24A5264n")
    assert len(page.measured.rows) == 3
    assert {r.cells[1] for r in page.figures.rows} >= {"On-device · Synthetic Performance · Cold session"}
    (block,) = page.changes
    assert block.comparison.href == f"/compare/{DEVICE}/24A5256a..24A5264n/"
    assert block.changes and all(c.text.startswith(("Regression", "Improvement")) for c in block.changes)
    first = _page(site, "build", build="24A5256a")
    assert first.changes == [] and first.first_builds == [f"iPhone 17 Pro ({DEVICE})"]
    with pytest.raises(NotFoundError):
        builds.build_page(site, Filters(), build="99Z999")


def test_search_keeps_the_query_and_points_to_the_index_written_at_build_time(site: SiteContext) -> None:
    page = _page(site, "search", q=" 24A5264n ")
    assert (page.title, page.nav_active, page.uses_charts) == ("Search", "search", False)
    assert page.query == "24A5264n" and page.index_url == "/data/search.json"
    assert _page(site, "search").query == ""


def test_the_registry_holds_the_view_functions_themselves() -> None:
    """What the registry calls is what a reader finds by name (no strings, no adapters)."""
    by_name = {k.name: k.view for k in PAGES}
    assert by_name["home"] is home.home_page and by_name["pcc"] is pcc.pcc_page
    assert by_name["run"] is run_page.run_page and by_name["trials"] is trials.trials_page


# --- one layout of a trial -------------------------------------------------------------------------


def test_the_run_page_and_the_trials_page_lay_out_the_trials_from_the_gzipped_trial_data(site: SiteContext) -> None:
    import gzip

    from fmbench.views import render_page
    from fmbench.views.data import trial_rows, trials_json

    run_id = _run_id(site, QUICK)
    (kind,) = [k for k in PAGES if k.name == "trials"]
    run = run_page.run_page(site, Filters(), run_id)
    (section,) = [s for s in run.trial_sections if s.scenario_id == "task-capture"]
    assert section.href == "/" + urls.trials(run_id, "task-capture")
    assert section.data_href == "/" + urls.data_trials_json(run_id, "task-capture") and section.data_href.endswith(".json.gz")
    page_html = render_page(site, kind, Filters(), run_id=run_id, scenario="task-capture")
    # no trial is laid out in the HTML: trials.js does it from the data, which the page links for readers without scripts
    assert '<article class="trial"' not in page_html and "trial-metrics" not in page_html
    assert f'<div class="trials-app" data-trials-data="{section.data_href}" data-trials-total="3"' in page_html
    assert '<noscript><p>' in page_html and f'href="{section.data_href}"' in page_html
    assert "/assets/trials.js" in page_html and "fmbench export --trials-csv" in page_html
    doc = json.loads(gzip.decompress(trials_json(site, Filters(), run_id=run_id, scenario="task-capture")))
    assert doc["scenario"] == "task-capture" and doc["count"] == 3 and len(trial_rows(doc)) == 3
    assert trial_rows(doc) == [t.to_json() for t in trial_details.trial_details(site.con, run_id, "task-capture")]


def test_every_metric_and_environment_value_of_a_trial_is_in_the_trial_data_under_its_label(site: SiteContext) -> None:
    import gzip

    from fmbench.views.data import trial_rows, trials_json

    run_id = _run_id(site, BASELINE)
    details = trial_details.trial_details(site.con, run_id, "synthetic-throughput")
    doc = json.loads(gzip.decompress(trials_json(site, Filters(), run_id=run_id, scenario="synthetic-throughput")))
    assert doc["metric_labels"] == list(trial_details.METRIC_LABELS)
    assert doc["environment_labels"] == ["Low Power Mode", "Thermal state", "Snapshot taken (UTC)"]
    rows = trial_rows(doc)
    assert [r["ordinal"] for r in rows] == [t.ordinal for t in details] and len(rows) == 60
    not_recorded = set()
    for t, row in zip(details, rows, strict=True):
        shown = row["metrics"] | row["environment"]
        assert len(shown) == len(trial_details.METRIC_LABELS) + len(trial_details.ENVIRONMENT_LABELS) == 20
        assert shown == dict(zip(trial_details.METRIC_LABELS, t.metrics, strict=True)) | dict(
            zip(trial_details.ENVIRONMENT_LABELS, t.environment, strict=True)
        )
        not_recorded |= {label for label, v in shown.items() if v is None}
    # the runs hold no reasoning token count: null (trials.js shows "not recorded"), never 0 or blank
    assert "Reasoning tokens" in not_recorded
    assert all(v is None for v in doc["columns"]["metrics"][trial_details.METRIC_LABELS.index("Reasoning tokens")])
