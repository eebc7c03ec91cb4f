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
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.revisions import fixtures_registry
from fmbench.cli import main
from fmbench.comparison.compare import compare_sides
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


def test_every_table_shows_the_catalog_figures_it_names_in_catalog_order() -> None:
    assert fc.CATALOG.columns("run") == (
        "task", "prompt", "failure", "constraint", "ttft50", "ttft90", "tps50", "tps90", "mem",
    )
    assert fc.CATALOG.columns("build") == ("task", "ttft50", "tps50")
    assert [f.key for f in fc.CATALOG.compared()] == [
        "task_success", "prompt_pass", "constraint_score", "ttft_median", "ttft_p90", "tps_median", "tps_p90",
        "peak_memory",
    ]
    assert [f.key for f in fc.CATALOG.compared(for_tokens=True)][-2:] == ["cps_median", "cps_p90"]
    assert fc.CATALOG.quantiles("time_to_first_token") == (0.5, 0.9)


def test_every_chart_of_the_catalog_says_how_to_read_its_marks_and_starts_its_speed_axis_at_zero() -> None:
    for chart in fc.CATALOG.charts:
        median, _p90 = fc.CATALOG.charted(chart)
        assert "median" in chart.marks.lower() and "p90" in chart.marks
        assert chart.from_zero or median.unit not in ("rate", "tokens/s", "chars/s")
        assert len(chart.axis) <= 20  # fits a phone's axis without being cut
    for delta in fc.CATALOG.delta_charts:
        assert "interval" in delta.marks and "zero" in delta.marks
        assert len(delta.axis) <= 20
