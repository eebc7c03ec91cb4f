"""Distributions where readers look: a run page shows, per scenario, the full distribution of duration, TTFT,
tokens/s, characters/s, the largest stream update gap and peak memory, and the trials as boxes with every point."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from fmbench.analysis.figure_catalog import CATALOG
from fmbench.analysis.figures import distribution
from fmbench.analysis.revisions import fixtures_registry
from fmbench.ingest import ingest_paths
from fmbench.storage.db import connect
from fmbench.views import SiteContext, run_page, site_context
from fmbench.views.blocks import Cell
from fmbench.views.filters import Filters
from fmbench.views.render import Renderer

from testdata import FIXTURES

QUICK = "iphone-17-pro-ios27-24a5264n-on-device-quick-2026-11-11.json"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteContext]:
    db = tmp_path_factory.mktemp("distributions") / "db.duckdb"
    registry = fixtures_registry()
    assert ingest_paths([FIXTURES / QUICK], db, registry=registry).ok
    with connect(db, read_only=True) as con:
        yield site_context(con, Renderer(), registry)


def _text(cell: object) -> object:
    return cell.text if isinstance(cell, Cell) else cell


def test_the_run_page_shows_every_distribution_figure_of_every_scenario(site: SiteContext) -> None:
    (run_id,) = site.con.execute("SELECT run_id FROM runs").fetchone()
    page = run_page.run_page(site, Filters(), run_id)
    assert page.distributions is not None
    labels = [c.label for c in page.distributions.columns]
    assert labels == ["Scenario", "Figure", "Count", "Min", "Median", "Mean", "p90", "Max", "Std dev"]
    scenarios = site.con.execute("SELECT count(*) FROM scenario_figures WHERE run_id = ? AND trial_count > 0",
                                 [run_id]).fetchone()[0]
    assert len(page.distributions.rows) == scenarios * len(CATALOG.metrics)
    figures = {_text(r.cells[1]) for r in page.distributions.rows}
    assert figures == {"Duration", "Time to first token", "Output tokens per second",
                       "Output characters per second", "Largest stream update gap", "Peak observed memory"}


def test_a_distribution_row_is_the_recomputed_distribution_of_the_recorded_values(site: SiteContext) -> None:
    (run_id,) = site.con.execute("SELECT run_id FROM runs").fetchone()
    sid, title = site.con.execute(
        "SELECT scenario_id, title FROM scenario_figures WHERE run_id = ? AND trial_count > 0 ORDER BY ordinal",
        [run_id],
    ).fetchone()
    values = [v for (v,) in site.con.execute(
        "SELECT output_chars_per_second FROM trials WHERE run_id = ? AND scenario_id = ? "
        "AND output_chars_per_second IS NOT NULL", [run_id, sid]).fetchall()]
    page = run_page.run_page(site, Filters(), run_id)
    assert page.distributions is not None
    row = next(r for r in page.distributions.rows
               if _text(r.cells[0]) == title and _text(r.cells[1]) == "Output characters per second")
    expected = distribution(values)
    assert _text(row.cells[2]) == str(expected.count)
    assert _text(row.cells[4]) == f"{expected.median:.2f}"
    assert _text(row.cells[7]) == f"{expected.maximum:.2f}"


def test_missing_values_are_left_out_and_an_unrecorded_figure_reads_not_recorded(site: SiteContext) -> None:
    (run_id,) = site.con.execute("SELECT run_id FROM runs").fetchone()
    recorded, total = site.con.execute(
        "SELECT count(time_to_first_token), count(*) FROM trials WHERE run_id = ?", [run_id]).fetchone()
    page = run_page.run_page(site, Filters(), run_id)
    assert page.distributions is not None
    counts = sum(int(str(_text(r.cells[2])).replace(",", "")) for r in page.distributions.rows
                 if _text(r.cells[1]) == "Time to first token")
    assert counts == recorded
    if recorded < total:
        empty = [r for r in page.distributions.rows if _text(r.cells[2]) == "0"]
        for row in empty:
            assert row.cells[4].text is None and row.cells[4].reason


def test_the_trials_are_drawn_as_every_point_with_a_median_and_p90_per_scenario(site: SiteContext) -> None:
    (run_id,) = site.con.execute("SELECT run_id FROM runs").fetchone()
    page = run_page.run_page(site, Filters(), run_id)
    assert [c.title for c in page.trial_charts] == [
        "Time to first token: every trial, by scenario", "Output tokens per second: every trial, by scenario"]
    chart = page.trial_charts[0]
    trials, medians = chart.figure_json["data"]
    assert {trials["type"], medians["type"]} == {"scatter"}  # the one trace type of the site's chart bundle
    recorded = site.con.execute(
        "SELECT count(time_to_first_token) FROM trials WHERE run_id = ?", [run_id]).fetchone()[0]
    assert len(trials["y"]) == recorded
    scenarios = chart.figure_json["layout"]["xaxis"]["ticktext"]
    assert len(medians["y"]) == len(scenarios) and all(m is not None for m in medians["y"])
    assert all(w >= 0 for w in medians["error_y"]["array"])  # a whisker up to the p90
    assert chart.figure_json["layout"]["yaxis"]["rangemode"] == "tozero"
    assert chart.marks and "median" in chart.marks and "p90" in chart.marks
    json.dumps(chart.figure_json)  # plain JSON


AGENTIC = "ipad-pro-m5-ipados27-24a5264n-on-device-agentic-2026-11-05.json"


def test_state_and_trajectory_checks_are_counted_apart() -> None:
    from fmbench.analysis.figures import split_pass_rates

    rates = split_pass_rates([
        [("stateEquals", True), ("toolCalled", True), ("toolCallSequence", False)],  # right state, wrong path
        [("stateEquals", False), ("toolCalled", True)],  # right path, wrong state
        [("contains", True)],  # neither kind: counts toward neither rate
    ])
    assert (rates.state_passed, rates.state_trials, rates.trajectory_passed, rates.trajectory_trials) == (1, 2, 1, 2)
    assert rates.state_rate == 0.5 and rates.trajectory_rate == 0.5


def test_an_agentic_run_page_shows_state_and_trajectory_pass_rates_separately(tmp_path_factory: pytest.TempPathFactory) -> None:
    import json as _json

    db = tmp_path_factory.mktemp("agentic") / "db.duckdb"
    registry = fixtures_registry()
    assert ingest_paths([FIXTURES / AGENTIC], db, registry=registry).ok
    doc = _json.loads((FIXTURES / AGENTIC).read_bytes())
    state = trajectory = state_n = trajectory_n = 0
    for t in doc["trials"]:
        kinds = [next(iter(c)) for c in t["sample"]["checks"]]
        results = [c["passed"] for c in t["grade"]["checks"]]
        s = [p for k, p in zip(kinds, results, strict=True) if k.startswith("state")]
        j = [p for k, p in zip(kinds, results, strict=True) if k.startswith("tool")]
        state_n += bool(s)
        state += bool(s) and all(s)
        trajectory_n += bool(j)
        trajectory += bool(j) and all(j)
    with connect(db, read_only=True) as con:
        site = site_context(con, Renderer(), registry)
        (run_id,) = con.execute("SELECT run_id FROM runs").fetchone()
        page = run_page.run_page(site, Filters(), run_id)
    assert page.agentic is not None and len(page.agentic.rows) == 1
    _title, state_cell, trajectory_cell = page.agentic.rows[0].cells
    assert state_cell.text.endswith(f"({state}/{state_n})") and trajectory_cell.text.endswith(f"({trajectory}/{trajectory_n})")
    assert state_n and trajectory_n and (state, trajectory) != (state_n, trajectory_n)


def test_a_scenario_page_shows_each_runs_distributions_and_its_trials(tmp_path_factory: pytest.TempPathFactory) -> None:
    from fmbench.views import PAGES, catalog, render_page

    names = ["iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json",
             "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json",
             "macbook-pro-m5-macos27-26a5378f-pcc-performance-2026-11-06.json"]
    db = tmp_path_factory.mktemp("scenario") / "db.duckdb"
    registry = fixtures_registry()
    assert ingest_paths([FIXTURES / n for n in names], db, registry=registry).ok
    with connect(db, read_only=True) as con:
        site = site_context(con, Renderer(), registry)
        page = catalog.scenario_page(site, Filters(), "synthetic-throughput")
        (kind,) = [k for k in PAGES if k.name == "scenario"]
        html = render_page(site, kind, Filters(), scenario="synthetic-throughput")
    assert page.distributions is not None
    assert len(page.distributions.rows) == 3 * len(CATALOG.metrics)
    assert [c.title for c in page.trial_charts] == [
        "Time to first token: every trial, by run, on-device", "Time to first token: every trial, by run, PCC (service)"]
    runs = [c.figure_json["layout"]["xaxis"]["ticktext"] for c in page.trial_charts]
    assert [len(r) for r in runs] == [2, 1]  # two on-device runs on one axis, the PCC run on its own
    assert "Distributions per run" in html and "scenario-distributions" in html
