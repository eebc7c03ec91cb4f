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
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.changepoints import DEFAULT_LEVEL, method_statement
from fmbench.analysis.revisions import fixtures_registry
from fmbench.comparison.text import NAMED_CHANGES
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
    leaderboards,
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

from testdata import FIXTURES, compare_runbuilder, methodology_sections

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
    assert (page.nav_active, page.uses_charts) == ("home", False)  # figures as text: the page loads no chart library
    stats = {s.label: s.value for s in page.stats}
    assert stats["runs"] == "4" and stats["publishable"] == "2" and stats["exploratory"] == "2"
    assert stats["device"] == "1" and stats["OS builds"] == "2"  # each noun in the number its count takes
    assert _column(page.on_device, "suite") == ["Synthetic Performance", "Synthetic Performance", "Practical Quick"]
    assert _column(page.pcc, "suite") == ["Practical Quick"]


def test_home_leads_with_each_devices_newest_run_per_configuration_exploratory_ones_labelled_never_ranked(
    site: SiteContext,
) -> None:
    page = _page(site, "home")
    (device,) = page.newest
    assert (device.device.text, device.device.href) == (f"iPhone 17 Pro ({DEVICE})", f"/devices/{DEVICE}/")
    by_label = {c.label: c for c in device.configs}
    assert list(by_label) == [
        "On-device · Synthetic Performance · Cold session",
        "On-device · Practical Quick · Warm reused session · offline",
        "Private Cloud Compute · Practical Quick · Cold session · reasoning Light · falls back on-device",
    ]
    performance = by_label["On-device · Synthetic Performance · Cold session"]
    # the newest run of the configuration (24A5264n), not the older build's
    assert performance.run.href == f"/runs/{_run_id(site, CANDIDATE)}/"
    assert (performance.verdict.text, performance.exploratory) == ("Publishable", False)
    assert (performance.os.text, performance.os.href) == ("iOS 27.0.0 (24A5264n)", "/builds/24A5264n/")
    table = performance.figures
    assert [c.key for c in table.columns] == ["scenario", "task", "ttft50", "tps50"]  # the catalog's headline
    assert [c.label for c in table.columns][1:] == ["Task success", "TTFT median", "Output tok/s median"]
    assert _column(table, "scenario") == ["Synthetic throughput"]
    assert _column(table, "ttft50")[0].endswith(" s") and _column(table, "task")[0].endswith("%")
    quick = by_label["On-device · Practical Quick · Warm reused session · offline"]
    assert (quick.verdict.text, quick.verdict.tone, quick.exploratory) == ("Exploratory", "exploratory", True)
    assert "exploratory run of 2026-11-11" in quick.figures.caption and quick.note is None
    listed = _column(quick.figures, "scenario")
    stored = [t for (t,) in site.con.execute(
        "SELECT title FROM scenario_figures WHERE run_id = ? ORDER BY ordinal", [_run_id(site, QUICK)]).fetchall()]
    assert listed == stored  # the run file's order, never sorted by a figure
    pcc = by_label["Private Cloud Compute · Practical Quick · Cold session · reasoning Light · falls back on-device"]
    assert pcc.service and pcc.exploratory
    assert pcc.note == "PCC: network and server included; 7 trials that fell back to the on-device model left out of its speed"
    assert pcc.note in pcc.figures.caption
    captions = [c.figures.caption for d in page.newest for c in d.configs]
    assert len(set(captions)) == len(captions)  # each table (a region) is named apart from the others


def test_a_home_page_with_no_run_says_so_in_place_of_the_figures(tmp_path: Path) -> None:
    from fmbench.ingest import writable

    db = tmp_path / "empty.duckdb"
    with writable(db):
        pass
    with connect(db, read_only=True) as con:
        page = _page(site_context(con, Renderer(), fixtures_registry()), "home")
    assert page.newest == [] and page.newest_empty == home.NO_RUN
    assert {s.label: s.value for s in page.stats}["runs"] == "0"
    assert page.on_device.rows == [] and page.changes == []


def test_a_home_page_of_a_database_without_its_derived_tables_says_so_and_raises_nothing(tmp_path: Path) -> None:
    import duckdb

    db = tmp_path / "bare.duckdb"
    duckdb.connect(str(db)).close()  # a DuckDB file with no table at all
    with duckdb.connect(str(db), read_only=True) as con:
        page = _page(site_context(con, Renderer(), fixtures_registry()), "home")
    assert page.newest == [] and page.newest_empty == home.NO_FIGURES and page.stats == []


def test_methodology_renders_the_notes_as_markup(site: SiteContext) -> None:
    page = _page(site, "methodology")
    assert (page.title, page.nav_active) == ("Methodology", "methodology")
    assert str(page.markdown_html).startswith("<p>")


def test_the_methodology_page_opens_with_a_contents_list_linking_every_section(site: SiteContext) -> None:
    from dataclasses import replace

    page = _page(site, "methodology")
    html = str(page.markdown_html)
    assert (page.contents[0].text, page.contents[0].href) == ("What is measured", "#measured")
    assert [link.href for link in page.contents][-1] == "#limitations"
    assert len(page.contents) == html.count("<h2") == methodology_sections()
    assert all(f'id="{link.href[1:]}"' in html for link in page.contents)
    noted = _page(replace(site, methodology="## How we ran these\n\nOn a desk.\n", memo={}), "methodology")
    added = noted.contents[-1]  # a publisher's section without an id of its own is linked by the one it was given
    assert added.text == "How we ran these" and f'id="{added.href[1:]}"' in str(noted.markdown_html)


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
    assert only_pcc.runs.caption == "1 run, newest first"
    assert page.runs.empty_text == "No runs yet."  # no filter applied: nothing to "match"
    none = _page(site, "runs", Filters({"route": "unknownRoute"}))
    assert none.runs.rows == [] and none.runs.empty_text == "No run matches these filters."
    assert _column(only_pcc.runs, "suite") == ["Practical Quick"]
    # a run is named by its date, device and build, judged beside it; its id comes last
    keys = [c.key for c in page.runs.columns]
    assert keys[:2] == ["run", "verdict"] and keys[-1] == "id"
    first = page.runs.rows[0].cells[0]
    assert first.text == "2026-11-11 · iPhone 17 Pro · 24A5264n" and first.href == f"/runs/{_run_id(site, QUICK)}/"
    assert _column(page.runs, "id")[0] == _run_id(site, QUICK)


def test_run_carries_its_verdict_figures_trial_sections_and_charts(site: SiteContext) -> None:
    run_id = _run_id(site, QUICK)
    page = _page(site, "run", run_id=run_id)
    assert (page.nav_active, page.uses_charts) == ("runs", True)
    assert page.run_id == run_id and page.verdict.text == "Exploratory"
    assert page.verdict_banner is not None and page.verdict_banner.title.startswith("Exploratory")
    assert _column(page.scenarios, "scenario")[0] == "Natural-language task capture"
    assert page.trial_sections[0].href == f"/runs/{run_id}/trials/task-capture/"
    assert page.charts and page.replay is None
    # offline success is a condition of a run on a verified offline path (this one) only: on a normal connection
    # every trial's is "no", which says nothing
    assert "Offline success" in [c.label for c in page.conditions]
    normal = _page(site, "run", run_id=_run_id(site, BASELINE))
    assert "Offline success" not in [c.label for c in normal.conditions] and "Suite" in [c.label for c in normal.conditions]
    with pytest.raises(NotFoundError):
        run_page.run_page(site, Filters(), run_id="000000000000")


def test_the_run_pages_failures_are_one_row_a_scenario_kind_and_message_with_their_samples_and_iterations() -> None:
    def failure(scenario: str, kind: str, message: str, sample: str, iteration: int) -> dict[str, object]:
        return {"scenario_id": scenario, "kind": kind, "message": message, "sample_id": sample, "iteration": iteration}

    lost = "The network connection was lost."
    table = run_page.failure_table([
        failure("task-capture", "network", lost, "task-capture-002", 9),
        failure("task-capture", "guardrail", "Flagged.", "task-capture-001", 4),
        failure("task-capture", "network", lost, "task-capture-001", 2),
        failure("journal-summary", "network", lost, "journal-summary-001", 7),
        failure("task-capture", "network", lost, "task-capture-002", 5),
    ], "failures", "Measured failures", "No measured request failed.")
    assert [c.key for c in table.columns] == ["scenario", "kind", "message", "count", "sample", "iteration"]
    rows = [[c.text if isinstance(c, Cell) else c for c in r.cells] for r in table.rows]
    assert rows == [
        ["journal-summary", "Network", lost, "1", "journal-summary-001", "7"],
        ["task-capture", "Network", lost, "3", "task-capture-001, task-capture-002", "2, 5, 9"],  # the most first
        ["task-capture", "Guardrail", "Flagged.", "1", "task-capture-001", "4"],
    ]
    assert run_page.failure_table([], "failures", "Measured failures", "No measured request failed.").rows == []


def test_trials_shows_a_scenarios_counts_and_failing_trials_and_links_its_trial_data(site: SiteContext) -> None:
    run_id = _run_id(site, QUICK)
    page = _page(site, "trials", run_id=run_id, scenario="task-capture")
    assert page.nav_active == "runs"
    assert (page.scenario_id, page.total) == ("task-capture", 3)
    assert page.shown.startswith("3 trials in this scenario") and " passed, " in page.summary
    assert page.data_href == "/" + urls.data_trials_json(run_id, "task-capture")
    for sample in page.failing_samples:  # each failing sample with its count, its checks and one response
        assert 1 <= sample.failed <= sample.trials and len(sample.failing) + sample.more == sample.failed
        assert all(1 <= t.number <= 3 and t.sample_id == sample.sample_id for t in sample.failing)
        assert sample.response_trial == sample.failing[0].number


def test_trials_is_one_page_a_scenario_its_failing_trials_numbered_in_the_scenario(site: SiteContext) -> None:
    run_id = _run_id(site, BASELINE)
    page = _page(site, "trials", run_id=run_id, scenario="synthetic-throughput")
    assert page.total == 60 and page.per_page == urls.TRIALS_PER_PAGE
    details = trial_details.trial_details(site.con, run_id, "synthetic-throughput")
    failed = [n for n, t in enumerate(details, start=1) if t.verdict == "task failed"]
    linked = sorted(t.number for s in page.failing_samples for t in s.failing)
    assert linked == failed[: trials.FAILING_SHOWN] and page.samples_more == 0
    assert sum(s.failed for s in page.failing_samples) == len(failed)
    # the samples that failed every trial first, then by how many failed
    shares = [(s.failed / s.trials, s.failed) for s in page.failing_samples]
    assert shares == sorted(shares, reverse=True)
    assert page.summary == f"{60 - len(failed)} passed, {len(failed)} failed" + (
        "." if not page.failures else page.summary.split(f"{len(failed)} failed", 1)[1]
    )
    assert {k.name for k in PAGES} >= {"trials"} and "trials_page" not in {k.name for k in PAGES}
    assert resolve(f"runs/{run_id}/trials/synthetic-throughput/page-2/") is None  # no page-N URL any more


def test_a_trials_page_sets_its_failing_samples_against_the_previous_build_the_changed_ones_first(
    site: SiteContext,
) -> None:
    baseline, candidate = _run_id(site, BASELINE), _run_id(site, CANDIDATE)
    builds = dict(site.con.execute("SELECT run_id, os_build FROM runs WHERE run_id IN (?, ?)",
                                   [baseline, candidate]).fetchall())
    page = _page(site, "trials", run_id=candidate, scenario="synthetic-throughput")
    assert page.previous_build == builds[baseline]
    changed = [s.changed for s in page.failing_samples]  # (the order itself: tests/test_trials_by_sample.py)
    assert changed == sorted(changed, reverse=True)  # every changed sample before every unchanged one
    first = _page(site, "trials", run_id=baseline, scenario="synthetic-throughput")
    assert first.previous_build is None and all(s.before is None and not s.changed for s in first.failing_samples)


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
    assert [c.href.split("#")[0] for c in page.compare_links] == [f"/compare/{DEVICE}/24A5256a..24A5264n/"]
    assert all(c.href.split("#")[1].startswith("cfg-onDevice-") for c in page.compare_links)
    assert [c.href for c in page.configs] == [f"#{s.anchor}" for s in page.sections]
    trend = {s.label: s.trend for s in page.sections}
    assert trend["On-device · Synthetic Performance · Cold session"]  # two builds: on the page's trend charts
    quick = next(s for s in page.sections if s.label == "On-device · Practical Quick · Warm reused session · offline")
    assert quick.trend is None and [c.key for c in quick.table.columns][-5:] == ["task", "ttft50", "tps50", "mem", "tokens"]
    # named once beside the charts, linked to its section: measured on one build, so not drawn
    assert (quick.label, f"#{quick.anchor}") in [(c.text, c.href) for c in page.single_build]
    with pytest.raises(NotFoundError):
        catalog.device_page(site, Filters(), device="iPhone99,9")
    pcc = page.sections[-1].table
    assert "7 trial(s) that fell back to the on-device model left out" in pcc.caption
    assert "Session usage (counted)" in _column(pcc, "tokens")


def test_a_device_page_has_exactly_one_chart_a_figure_and_route_every_configuration_a_trace_on_it(
    site: SiteContext,
) -> None:
    page = _page(site, "device", device=DEVICE)
    # one chart per catalog figure and route; here only on-device configurations span two builds
    assert [c.id for c in page.charts] == [f"{c.id}-on-device" for c in fc.CATALOG.charts]
    assert not any(c.id.endswith("-pcc") for c in page.charts)
    ttft = page.charts[0]
    (trended,) = [s for s in page.sections if s.trend is not None]
    assert trended.trend is not None and f"on-device: {trended.trend.name} · " in ttft.title  # named once, in the title
    layout = ttft.figure_json["layout"]
    assert layout["xaxis"]["categoryarray"] == ["24A5256a", "24A5264n"]  # builds in OS version order
    assert [t["x"] for t in ttft.figure_json["data"]] == [["24A5256a", "24A5264n"]] * len(ttft.figure_json["data"])
    # rendered: the charts once, above the sections (none holds a chart), the one-build configurations linked
    html = site.renderer.render(page.template, page)
    trends, sections = html.split('<details class="config-section"', 1)
    assert trends.count("data-chart=") == len(page.charts) and "data-chart=" not in sections
    assert all(f'<a href="{c.href}">' in trends for c in page.single_build)


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
    # one TTFT chart per route, each configuration a trace named by it (the route said once, in the title)
    assert [c.id for c in page.charts] == ["ttft-on-device", "ttft-pcc"]
    assert [c.table.rows[0].cells[0].split(" · ")[0] for c in page.charts] == ["Practical Quick", "Practical Quick"]


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
    # (the route left out: every series of the page is PCC)
    assert names == ["iPhone18,1 · Practical Quick · Cold session · reasoning Light · falls back on-device"]


def test_pcc_sets_on_device_beside_pcc_per_workload_an_empty_column_said_as_such(site: SiteContext) -> None:
    page = _page(site, "pcc")
    (pair,) = page.routes  # the one workload a publishable run ranks; the PCC run is exploratory
    assert (pair.workload.text, pair.workload.href) == ("Synthetic throughput", "/leaderboards/synthetic-throughput/")
    assert [_column(pair.on_device.figures, "device")] == [[f"iPhone 17 Pro ({DEVICE})"]]
    assert pair.pcc.board is None and pair.pcc.figures.rows == []
    assert pair.pcc.figures.empty_text == "No publishable run of this workload on this route yet."


def test_compare_index_pairs_the_two_builds_of_the_device(site: SiteContext) -> None:
    page = _page(site, "compare_index")
    assert page.nav_active == "compare_index"
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
    assert (page.nav_active, page.uses_charts) == ("compare_index", True)
    assert (page.rule, page.strict) == ("latest", False)
    assert [s.heading for s in page.sections] == ["On-device · Synthetic Performance · Cold session"]
    (section,) = page.sections
    # Its anchor, which the regressions page, home, the feed and the build page link to.
    (step,) = site.regressions().steps
    assert section.anchor == step.anchor and section.anchor.startswith("cfg-onDevice-performance-cold-")
    # Under the verdicts: how many samples were tested and which changed; every figure's smallest detectable change.
    assert section.samples is not None and " sample(s) tested changed beyond chance" in section.samples.summary
    assert section.samples.detectable.rows and all(r.cells[2].startswith("±") for r in section.samples.detectable.rows)
    with pytest.raises(NotFoundError):
        comparisons.comparison_page(site, Filters(), device=DEVICE, baseline="24A5256a", candidate="99Z999")


def _figures(n: int, adjective: str) -> str:
    return f"{n} {adjective} figure{'' if n == 1 else 's'}"


def test_comparison_states_its_verdicts_in_one_sentence_and_lists_expected_differences_apart(site: SiteContext) -> None:
    page = _page(site, "comparison", device=DEVICE, baseline="24A5256a", candidate="24A5264n")
    (section,) = page.sections
    cmp = section.comparison
    assert cmp is not None
    worse = [f.key for _s, f in cmp.changes() if f.verdict == "worse"]
    # The candidate build is slower: its latency and throughput got worse, and nothing but speed did.
    assert {"ttft_median", "ttft_p90", "tps_median", "tps_p90"} <= set(worse)
    assert all(fc.CATALOG[key].speed for key in worse)
    # what got worse, named with its workload and size, the biggest first, then what stayed within tolerance and
    # what the runs could not tell (never called unchanged): one sentence
    assert page.verdict.startswith("p90 TTFT of Synthetic throughput got 30% worse (0.401 s → 0.522 s); "
                                   "Median TTFT of Synthetic throughput got 26% worse (0.369 s → 0.467 s); ")
    verdicts = [f.verdict for s in cmp.scenarios for f in s.figures]
    within, inconclusive = verdicts.count("within tolerance"), verdicts.count("inconclusive")
    untested = len(verdicts) - len(worse) - verdicts.count("better") - within - inconclusive
    assert "better" not in verdicts and within and inconclusive > 1 and untested
    assert page.verdict.endswith(
        f"; {_figures(len(worse) - NAMED_CHANGES, 'other')} got worse; {_figures(within, 'other')} stayed within "
        f"tolerance; {inconclusive} were inconclusive; {untested} {'was' if untested == 1 else 'were'} not tested."
    )
    assert page.verdict.endswith(".") and ". " not in page.verdict  # one sentence
    assert page.verdict == section.verdict == cmp.verdict_sentence
    # the caveats: what differs and can explain a change; the runs and their start times are expected
    assert [r.cells for r in section.differences.rows] == [["OS build", "24A5256a", "24A5264n"]]
    assert section.caveats == []
    assert [r.cells[0] for r in section.expected.rows] == ["Run", "Started"]
    assert section.expected.rows[0].cells[1:] == [_run_id(site, BASELINE), _run_id(site, CANDIDATE)]
    assert section.table is not None and section.table.cards and section.differences.cards


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
    assert (page.nav_active, page.uses_charts, page.generation) == ("compare_index", True, 27)
    (section,) = page.sections
    assert section.heading == f"On-device · Synthetic Performance · Cold session: iPad17,3 on 24A5264n, {DEVICE} on 24A5264n"
    assert section.label == "Device comparison" and section.refused is None
    assert "Hardware model" in [r.cells[0] for r in section.differences.rows]
    assert section.samples is not None
    assert all([side.name for side in x.sides] == ["Device A", "Device B"] for x in section.samples.changes)
    assert section.comparison is not None and page.verdict == section.comparison.verdict_sentence
    assert "Seed" not in [r.cells[0] for r in section.differences.rows]
    index = _page(site, "compare_index")
    assert [r.cells[0].href for r in index.device_pairs.rows] == [f"/compare/devices/iPad17,3..{DEVICE}/27/"]
    with pytest.raises(NotFoundError):
        device_comparisons.device_comparison_page(site, Filters(), device_a="iPad17,3", device_b=DEVICE, generation="26")


def test_regressions_compares_every_build_step(site: SiteContext) -> None:
    page = _page(site, "regressions")
    assert page.nav_active == "regressions"
    assert _column(page.steps, "builds") == ["24A5256a → 24A5264n"]
    assert page.rule == "latest" and page.confidence == "95%"
    # each step links to its configuration's section of the comparison page
    assert page.steps.rows[0].cells[0].href.startswith(f"/compare/{DEVICE}/24A5256a..24A5264n/#cfg-onDevice-")
    assert [c.key for c in page.samples.columns] == ["builds", "device", "config", "samples", "verdict"]
    # change points: the builds around each, its size, interval, levels and runs; the list's level stated
    assert [c.key for c in page.regressions.columns] == [
        "builds", "device", "config", "scenario", "figure", "size", "interval", "levels", "runs", "adjusted", "verdict"]
    assert [c.key for c in page.improvements.columns] == [c.key for c in page.regressions.columns]
    assert page.statement == method_statement(DEFAULT_LEVEL)
    listed = site.change_list()
    assert len(page.regressions.rows) + len(page.improvements.rows) == len(listed.changes)
    assert len(page.samples.rows) == len(listed.sample_changes)


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
    assert block.comparison.href.startswith(f"/compare/{DEVICE}/24A5256a..24A5264n/#cfg-onDevice-performance-cold-")
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


def test_leaderboards_lists_each_workloads_boards_and_links_them_by_scenario_and_category(site: SiteContext) -> None:
    page = _page(site, "leaderboards")
    assert (page.title, page.uses_charts, page.coverage) == ("Leaderboards", False, "/coverage/")
    assert page.nav_active == "leaderboards"
    first = page.scenarios.rows[0]
    assert first.cells[0].href == "/leaderboards/synthetic-throughput/"
    # each category of these runs holds one workload: its link is that workload's leaderboard
    assert first.cells[2].href == "/leaderboards/synthetic-throughput/"
    assert (first.cells[3].text, first.cells[4].text) == ("1", "1")  # one board, one device with a publishable run
    assert "/leaderboards/task-capture/" in [r.cells[0].href for r in page.categories.rows]


def test_leaderboard_ranks_the_device_on_its_newest_build_with_a_publishable_run(site: SiteContext) -> None:
    page = _page(site, "leaderboard", scenario="synthetic-throughput")
    assert page.nav_active == "leaderboards"  # not "scenarios": the navigation has a Leaderboards entry
    assert (page.uses_charts, page.scenario_id, page.category) == (True, "synthetic-throughput", "Synthetic throughput")
    (board,) = page.on_device
    assert board.configuration == "On-device · Synthetic Performance · Cold session · suite revision 2026.11"
    (row,) = board.ranked.rows
    assert [c.text for c in row.cells[:4]] == ["1", f"iPhone 17 Pro ({DEVICE})", "24A5264n", _run_id(site, CANDIDATE)]
    assert row.cells[5].text.startswith("0.467 s (") and row.cells[5].sort == pytest.approx(0.467, abs=5e-4)
    assert board.ties == [] and board.chart is not None and board.exploratory.rows == []
    assert page.pcc == [] and [c.href for c in page.links][:2] == ["/scenarios/synthetic-throughput/", "/leaderboards/"]
    with pytest.raises(NotFoundError):
        leaderboards.leaderboard_page(site, Filters(), scenario="no-such-workload")


def test_leaderboard_category_holds_every_board_of_the_categorys_workloads(tmp_path: Path) -> None:
    rb = compare_runbuilder()
    reminders = rb.Scenario("reminder-capture", "Reminder capture", "taskParsing", samples=2)
    folder = tmp_path / "runs"
    rb.write_run(rb.RunSpec(scenarios=(rb.TASK_CAPTURE, reminders, rb.SYNTHETIC)), folder, "on-device")
    pcc = rb.write_run(rb.RunSpec(scenarios=(rb.TASK_CAPTURE,), route="privateCloudCompute"), folder, "pcc")
    rb.write_sidecar(pcc, "wifi", "Berlin, DE")
    db = tmp_path / "category.duckdb"
    assert ingest_paths([folder], db).ok
    with connect(db, read_only=True) as con:
        site = site_context(con, Renderer())
        page = _page(site, "leaderboard_category", category="taskParsing")
        assert (page.scenario_id, page.category, page.title) == (None, "Task parsing", "Leaderboards: Task parsing")
        assert {b.scenario_id for b in page.on_device} == {"task-capture", "reminder-capture"}
        (board,) = page.pcc  # the PCC run stands apart, never on an on-device board
        assert board.service and board.scenario_id == "task-capture"
        with pytest.raises(NotFoundError):
            leaderboards.category_page(site, Filters(), category="noSuchCategory")
        with pytest.raises(NotFoundError):  # one workload: its leaderboard is the category's board
            leaderboards.category_page(site, Filters(), category="syntheticThroughput")


def test_coverage_counts_each_builds_runs_by_verdict_and_links_them(site: SiteContext) -> None:
    page = _page(site, "coverage")
    assert page.nav_active == "coverage"
    (grid,) = page.grids
    assert (grid.revision, grid.platform) == ("2026.11", "iOS")
    assert [b.text for b in grid.builds] == ["24A5256a", "24A5264n"]
    (row,) = grid.rows
    assert [[c.text for c in cell.counts] for cell in row.cells] == [
        ["1 publishable", "0 exploratory", "0 invalid"], ["1 publishable", "2 exploratory", "0 invalid"]]
    assert row.cells[0].counts[0].href == f"/runs/{_run_id(site, BASELINE)}/"
    assert row.cells[1].counts[1].href == f"/runs/?device={DEVICE.replace(',', '%2C')}&os_build=24A5264n&revision=2026.11&verdict=exploratory"


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


# --- the answer first: a run's conditions at a glance, a trials page's range, one name per workload -------


def test_the_run_page_states_its_conditions_at_a_glance_from_the_configuration_spec(site: SiteContext) -> None:
    from fmbench.analysis.configuration import REPETITIONS, REVISION_ID, ROUTE, SUITE, WARMUP_COUNT

    page = _page(site, "run", run_id=_run_id(site, QUICK))
    shown = {c.label: c.value.text if isinstance(c.value, Cell) else c.value for c in page.glance}
    assert list(shown) == [
        "Device", "OS version and build", ROUTE.label, "Session", SUITE.label, REVISION_ID.label, "Trials",
        WARMUP_COUNT.label, REPETITIONS.label,
    ]
    assert shown["Device"] == f"iPhone 17 Pro ({DEVICE})" and shown["OS version and build"] == "iOS 27.0.0, build 24A5264n"
    assert shown[ROUTE.label] == "On-device" and shown["Session"] == "Warm reused session"
    assert shown[SUITE.label] == "Practical Quick" and shown["Trials"] == "30 measured trials"
    run = site.con.execute("SELECT warmup_count, repetitions FROM runs WHERE run_id = ?", [_run_id(site, QUICK)]).fetchone()
    assert (shown[WARMUP_COUNT.label], shown[REPETITIONS.label]) == (f"{run[0]:,}", f"{run[1]:,}")
    links = {c.label: c.value.href for c in page.glance if isinstance(c.value, Cell)}
    assert links["Device"] == f"/devices/{DEVICE}/" and links["OS version and build"] == "/builds/24A5264n/"
    labels = [c.label for c in page.conditions]
    assert "Fixture version" in labels and "Fixture fingerprint" not in labels  # the reader's words
    assert "Run-file format" in labels and "Format generation" not in labels


def test_a_trials_page_states_the_range_of_trials_it_shows_numbered_in_its_scenario(site: SiteContext) -> None:
    quick = _page(site, "trials", run_id=_run_id(site, QUICK), scenario="task-capture")
    assert quick.shown == "3 trials in this scenario, numbered 1–3 in the order they ran."
    # one page a scenario: its trial list (trials.js) says which of them it shows ("Trials 51–60 of 60.")
    second = _page(site, "trials", run_id=_run_id(site, BASELINE), scenario="synthetic-throughput")
    assert second.shown == "60 trials in this scenario, numbered 1–60 in the order they ran."
    assert trials.shown_text(60, 51, 60) == "60 trials in this scenario, numbered in the order they ran; this page shows trials 51–60."
    assert trials.shown_text(1, 1, 1) == "1 trial in this scenario."
    assert "(s)" not in quick.shown + second.shown + quick.summary + second.summary


@pytest.fixture(scope="module")
def renamed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteContext]:
    """The quick run, and a copy of it a day later whose file calls task-capture "Natural-language task parsing"."""
    root = tmp_path_factory.mktemp("renamed")
    text = (FIXTURES / QUICK).read_text(encoding="utf-8")
    later = text.replace("Natural-language task capture", "Natural-language task parsing").replace("2026-11-11T", "2026-11-12T")
    (root / "later.json").write_text(later, encoding="utf-8")
    registry = fixtures_registry()
    assert ingest_paths([FIXTURES / QUICK], root / "db.duckdb", registry=registry).ok
    with connect(root / "db.duckdb", read_only=True) as con:
        from fmbench.views.inputs import RunIndex

        before = RunIndex.read(con).runs[_run_id_of(con, QUICK)].fingerprint
    assert ingest_paths([root / "later.json"], root / "db.duckdb", registry=registry).ok
    with connect(root / "db.duckdb", read_only=True) as con:
        site = site_context(con, Renderer(), registry)
        site.memo["fingerprint before the rename"] = before
        yield site


def _run_id_of(con: Any, file_name: str) -> str:
    return con.execute("SELECT run_id FROM runs WHERE file_name = ?", [file_name]).fetchone()[0]


def test_a_workload_has_one_name_on_every_page_the_newest_runs_title(renamed: SiteContext) -> None:
    from fmbench.storage.queries import scenario_titles

    site = renamed
    new = "Natural-language task parsing"
    assert scenario_titles(site.con)["task-capture"] == new
    older = _run_id_of(site.con, QUICK)
    run = _page(site, "run", run_id=older)
    assert _column(run.scenarios, "scenario")[0] == new  # the older run's own file says "task capture"
    assert next(s.title for s in run.trial_sections if s.scenario_id == "task-capture") == new
    assert run.charts[0].figure_json["data"][0]["y"][0] == new
    assert _page(site, "trials", run_id=older, scenario="task-capture").scenario_title == new
    build = _page(site, "build", build="24A5264n")
    assert {t for t in _column(build.figures, "scenario") if "task" in t.lower()} == {new}  # one name in one table
    listed = dict(zip(_column(_page(site, "scenarios").scenarios, "scenario"), _column(_page(site, "scenarios").scenarios, "title"), strict=True))
    assert listed["task-capture"] == new
    assert _page(site, "scenario", scenario="task-capture").title.startswith(new)
    device = _page(site, "device", device=DEVICE)
    assert all("task capture" not in str(_column(s.table, "scenario")) for s in device.sections)
    home_titles = [t for d in _page(site, "home").newest for c in d.configs for t in _column(c.figures, "scenario")]
    assert new in home_titles and "Natural-language task capture" not in home_titles


def test_renaming_a_workload_changes_the_fingerprint_of_every_run_that_measured_it(renamed: SiteContext) -> None:
    from fmbench.views.inputs import RunIndex

    after = RunIndex.read(renamed.con).runs[_run_id_of(renamed.con, QUICK)].fingerprint
    assert after != renamed.memo["fingerprint before the rename"]  # an incremental build renders its pages again


# --- run-to-run variation ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def repeated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteContext]:
    """One iPhone configuration run twice on build 24A5264n (one run slower by 40 ms) and once on 24A5270a."""
    import importlib.util
    import sys
    from datetime import UTC, datetime

    from testdata import DATA

    name = "fmbench_compare_runbuilder"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DATA / "compare" / "runbuilder.py")
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    rb = sys.modules[name]
    folder = tmp_path_factory.mktemp("repeated")
    base = rb.RunSpec()
    rb.write_run(base, folder / "runs", "first")
    rb.write_run(base.but(started=datetime(2026, 11, 4, 9, 0, tzinfo=UTC), noise_seed=2, ttft_offset=0.04),
                 folder / "runs", "second")
    rb.write_run(base.but(build="24A5270a", started=datetime(2026, 11, 10, 9, 0, tzinfo=UTC), noise_seed=3),
                 folder / "runs", "later")
    db = folder / "repeated.duckdb"
    registry = fixtures_registry()
    assert ingest_paths([folder / "runs"], db, registry=registry).ok
    with connect(db, read_only=True) as con:
        yield site_context(con, Renderer(), registry)


def test_a_device_page_shows_the_spread_of_the_runs_of_one_configuration_on_one_build(repeated: SiteContext) -> None:
    page = _page(repeated, "device", device="iPhone18,1")
    (section,) = page.sections
    table = section.variation
    assert table is not None and "run-to-run variation" in table.caption
    assert [c.key for c in table.columns] == ["scenario", "build", "runs", "task", "ttft50", "tps50", "mem"]
    assert set(_column(table, "build")) == {"24A5264n"}  # the build measured once has no spread
    assert _column(table, "runs") == ["2", "2"]
    # each cell: the two runs' lowest to highest figure, from what each run stored, and their SD
    stored = repeated.con.execute(
        "SELECT min(ttft_median), max(ttft_median) FROM scenario_figures JOIN runs USING (run_id) "
        "WHERE os_build = '24A5264n' AND scenario_id = 'task-capture'"
    ).fetchone()
    assert stored is not None and stored[1] - stored[0] > 0.03
    ttft = dict(zip(_column(table, "scenario"), _column(table, "ttft50"), strict=True))
    low, high = (fc.CATALOG["ttft_median"].format(v) for v in stored)
    assert ttft["Natural-language task capture"].startswith(f"{low} – {high} (SD ")
    from fmbench.views import render_page

    (kind,) = [k for k in PAGES if k.name == "device"]
    html = render_page(repeated, kind, Filters(), device="iPhone18,1")
    assert 'id="variation-c0"' in html and f"{low} – {high} (SD " in html


def test_a_comparison_of_sides_of_several_runs_says_it_measured_run_to_run_variation_and_pairing(
    repeated: SiteContext,
) -> None:
    pooled = _page(repeated, "comparison", device="iPhone18,1", baseline="24A5264n", candidate="24A5270a",
                   rule="pooled")
    (section,) = pooled.sections
    assert any(n.startswith("Intervals are paired by sample") for n in section.intervals)
    assert any("Run-to-run variation was measured: the baseline's 2 runs" in n for n in section.intervals)
    assert any("the candidate has one run" in n for n in section.intervals)
    latest = _page(repeated, "comparison", device="iPhone18,1", baseline="24A5264n", candidate="24A5270a")
    assert not any("Run-to-run variation was measured" in n for n in latest.sections[0].intervals)
