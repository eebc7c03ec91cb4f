"""The figure catalog: one entry per figure, from which the pages' columns, ``compare``'s figures and the data
files are derived. A figure added to the catalog (here, inside the test) is on the run page, in ``compare
--json`` and in the run's data files with no other change; a quantile figure's point value is its own
nearest-rank quantile."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.revisions import fixtures_registry
from fmbench.cli import main
from fmbench.comparison.compare import compare_sides
from fmbench.comparison.results import Comparison
from fmbench.ingest import ingest_paths
from fmbench.storage.db import connect
from fmbench.views import PAGES, data, render_page, run_page, site_context
from fmbench.views.filters import Filters
from fmbench.views.render import Renderer

from testdata import FIXTURES

BASELINE = "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json"
CANDIDATE = "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json"

MEDIAN_DURATION = fc.Figure(
    "duration_median", "Median duration", "seconds", "lower", "quantile", "duration", q=0.5,
    stored="duration_median", column="dur50", heading="Duration median", tables=frozenset({"run"}), speed=True,
)
"""A figure the shipped catalog does not have, over a column every trial records."""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("catalog") / "two.duckdb"
    assert ingest_paths([FIXTURES / BASELINE, FIXTURES / CANDIDATE], path, registry=fixtures_registry()).ok
    return path


@pytest.fixture
def con(db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with connect(db, read_only=True) as connection:
        yield connection


def _run_id(con: duckdb.DuckDBPyConnection, file_name: str) -> str:
    return con.execute("SELECT run_id FROM runs WHERE file_name = ?", [file_name]).fetchone()[0]


def _nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(q * len(ordered)) - 1, 0)]


def _durations(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for sid, duration in con.execute(
        "SELECT scenario_id, duration FROM trials WHERE run_id = ? ORDER BY ordinal", [run_id]
    ).fetchall():
        found.setdefault(sid, []).append(duration)
    return found


def test_a_figure_added_to_the_catalog_is_on_the_run_page_in_compare_json_and_in_the_data_files(
    db: Path, con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fc, "CATALOG", fc.CATALOG.with_figure(MEDIAN_DURATION, after="peak_memory"))
    baseline, candidate = _run_id(con, BASELINE), _run_id(con, CANDIDATE)
    durations = _durations(con, baseline)

    # The run page: a column of its own after peak memory, each scenario's stored median duration.
    site = site_context(con, Renderer(), fixtures_registry())
    page = run_page.run_page(site, Filters(), baseline)
    keys = [c.key for c in page.scenarios.columns]
    assert keys[keys.index("mem") + 1] == "dur50"
    at = keys.index("dur50")
    assert page.scenarios.columns[at].label == "Duration median"
    stored = dict(con.execute(
        "SELECT scenario_id, duration_median FROM scenario_figures WHERE run_id = ?", [baseline]
    ).fetchall())
    titles = dict(con.execute("SELECT title, scenario_id FROM scenario_figures WHERE run_id = ?", [baseline]).fetchall())
    for row in page.scenarios.rows:
        sid = titles[row.cells[0].text]
        assert stored[sid] == _nearest_rank(durations[sid], 0.5)
        assert row.cells[at].text == d.seconds(stored[sid])
        assert row.cells[at].sort == stored[sid]  # the raw value, what the column sorts by
    (kind,) = [k for k in PAGES if k.name == "run"]
    html = render_page(site, kind, Filters(), run_id=baseline)
    assert "Duration median" in html and d.seconds(stored[next(iter(stored))]) in html

    # compare --json: the figure in every scenario, worked out from the trials' durations.
    result = CliRunner().invoke(main, ["compare", baseline, candidate, "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    scenarios = json.loads(result.output)["scenarios"]
    assert scenarios
    for s in scenarios:
        (figure,) = [f for f in s["figures"] if f["key"] == "duration_median"]
        assert figure["label"] == "Median duration" and figure["unit"] == "seconds" and figure["better"] == "lower"
        assert figure["baseline"] == _nearest_rank(durations[s["scenario_id"]], 0.5)
        assert figure["verdict"] in ("better", "worse", "inconclusive", "within tolerance")
    assert [f["key"] for f in scenarios[0]["figures"]].index("duration_median") == (
        [f["key"] for f in scenarios[0]["figures"]].index("peak_memory") + 1
    )

    # The data files: the run's figures JSON holds the stored figure, the trials CSV the durations it is of.
    document = json.loads(data.figures_json(site, Filters(), baseline))
    assert {s["scenario_id"]: s["duration_median"] for s in document["scenarios"]} == stored
    rows = list(csv.DictReader(io.StringIO(data.trials_csv_text(site.con, baseline))))
    from_csv: dict[str, list[float]] = {}
    for r in rows:
        from_csv.setdefault(r["scenario_id"], []).append(float(r["duration"]))
    assert {sid: _nearest_rank(v, 0.5) for sid, v in from_csv.items()} == stored


def test_a_p99_figure_is_compared_at_its_nearest_rank_p99_not_at_the_p90(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    p99 = fc.Figure("ttft_p99", "p99 TTFT", "seconds", "lower", "quantile", "time_to_first_token", q=0.99, speed=True)
    monkeypatch.setattr(fc, "CATALOG", fc.CATALOG.with_figure(p99, after="ttft_p90"))
    baseline, candidate = _run_id(con, BASELINE), _run_id(con, CANDIDATE)
    compared = compare_sides(con, baseline, candidate)
    ttfts: dict[str, list[float]] = {}
    for sid, ttft in con.execute(
        "SELECT scenario_id, time_to_first_token FROM trials WHERE run_id = ? AND time_to_first_token IS NOT NULL",
        [baseline],
    ).fetchall():
        ttfts.setdefault(sid, []).append(ttft)
    differs = 0
    for s in compared.scenarios:
        values = ttfts[s.scenario_id]
        assert s.figure("ttft_p99").baseline == _nearest_rank(values, 0.99)
        assert s.figure("ttft_p90").baseline == _nearest_rank(values, 0.9)
        differs += _nearest_rank(values, 0.99) != _nearest_rank(values, 0.9)
        interval = s.figure("ttft_p99").interval
        assert interval is None or interval.low <= interval.high
    assert differs, "the fixture's TTFTs should tell a p99 from a p90"


def test_the_catalog_refuses_two_figures_of_one_key_and_a_quantile_without_its_q() -> None:
    with pytest.raises(ValueError, match="one key"):
        fc.CATALOG.with_figure(fc.CATALOG["ttft_median"])
    with pytest.raises(ValueError, match="quantile"):
        fc.Figure("x", "X", "seconds", "lower", "quantile", "duration")


def _in_order(found: tuple[str, ...] | list[str], shipped: list[str]) -> list[str]:
    """The shipped entries among ``found``, in the order ``found`` lists them (any entry added since is left out)."""
    return [x for x in found if x in shipped]


def test_every_table_shows_the_catalog_figures_it_names_in_catalog_order() -> None:
    order = [f.key for f in fc.CATALOG.figures]
    for table in ("run", "scenario", "device", "device-one-build", "build", "executed-model", "leaderboard"):
        columns = fc.CATALOG.columns(table)
        shown = [f.key for f in fc.CATALOG.figures if table in f.tables and f.column]
        assert [fc.CATALOG.column(c).key for c in columns] == shown  # every figure naming the table, none else
        assert sorted(shown, key=order.index) == shown
    # The shipped figures keep their place, whatever a contributor adds around them.
    run = ["task", "prompt", "failure", "constraint", "ttft50", "ttft90", "tps50", "tps90", "mem"]
    assert _in_order(fc.CATALOG.columns("run"), run) == run
    assert _in_order(fc.CATALOG.columns("build"), ["task", "ttft50", "tps50"]) == ["task", "ttft50", "tps50"]
    compared = [f.key for f in fc.CATALOG.compared()]
    assert all(fc.CATALOG[k].compared == "always" for k in compared)
    assert [f.key for f in fc.CATALOG.figures if f.compared == "always"] == compared
    shipped = ["task_success", "prompt_pass", "constraint_score", "ttft_median", "ttft_p90", "tps_median", "tps_p90",
               "peak_memory"]
    assert _in_order(compared, shipped) == shipped and "failure_rate" not in compared
    for_tokens = [f.key for f in fc.CATALOG.compared(for_tokens=True)]
    assert _in_order(for_tokens, ["cps_median", "cps_p90"]) == ["cps_median", "cps_p90"]
    assert [k for k in for_tokens if k not in compared] == [
        f.key for f in fc.CATALOG.figures if f.compared == "for tokens"]
    ttft = [f.q for f in fc.CATALOG.figures if f.source == "time_to_first_token" and f.compared != "never" and f.q]
    assert fc.CATALOG.quantiles("time_to_first_token") == tuple(ttft) and tuple(
        q for q in ttft if q in (0.5, 0.9)) == (0.5, 0.9)


def test_every_chart_of_the_catalog_says_how_to_read_its_marks_and_starts_its_speed_axis_at_zero() -> None:
    for chart in fc.CATALOG.charts:
        median, _p90 = fc.CATALOG.charted(chart)
        assert "median" in chart.marks.lower() and "p90" in chart.marks
        assert chart.from_zero or median.unit not in ("rate", "tokens/s", "chars/s")
        assert len(chart.axis) <= 20  # fits a phone's axis without being cut
    for delta in fc.CATALOG.delta_charts:
        assert "interval" in delta.marks and "zero" in delta.marks
        assert len(delta.axis) <= 20


def _widths(compared: Comparison) -> dict[tuple[str, str], float]:
    return {(s.scenario_id, f.key): f.interval.high - f.interval.low
            for s in compared.scenarios for f in s.figures if f.interval is not None}


def test_a_compared_figure_added_to_the_catalog_widens_every_other_interval_and_the_comparison_counts_it(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline, candidate = _run_id(con, BASELINE), _run_id(con, CANDIDATE)
    shipped = compare_sides(con, baseline, candidate)
    monkeypatch.setattr(fc, "CATALOG", fc.CATALOG.with_figure(MEDIAN_DURATION, after="peak_memory"))
    added = compare_sides(con, baseline, candidate)
    # One more tested figure per workload it is tested in: the Bonferroni family is that much larger.
    newly = [s for s in added.scenarios if s.figure("duration_median").interval is not None]
    assert newly and added.tested_figures == shipped.tested_figures + len(newly)
    assert added.figure_confidence == pytest.approx(1 - (1 - added.confidence) / added.tested_figures)
    assert added.figure_confidence > shipped.figure_confidence
    # Every other figure's interval is computed at that higher level: none narrower, most of them wider.
    before, after = _widths(shipped), _widths(added)
    assert set(before) == {k for k in after if k[1] != "duration_median"}
    assert all(after[k] >= before[k] for k in before)
    assert sum(after[k] > before[k] for k in before) > len(before) / 2
    # The comparison says how many figures its family holds, in its methods and its JSON.
    assert f"over {added.tested_figures} tested figures" in " ".join(added.method_notes)
    assert added.to_json()["tested_figures"] == added.tested_figures


def test_a_figure_that_is_never_compared_leaves_the_other_intervals_as_they_were(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline, candidate = _run_id(con, BASELINE), _run_id(con, CANDIDATE)
    shipped = compare_sides(con, baseline, candidate)
    shown_only = replace(MEDIAN_DURATION, compared="never")
    monkeypatch.setattr(fc, "CATALOG", fc.CATALOG.with_figure(shown_only, after="peak_memory"))
    added = compare_sides(con, baseline, candidate)
    assert added.tested_figures == shipped.tested_figures
    assert _widths(added) == _widths(shipped)
