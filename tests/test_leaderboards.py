"""Leaderboards and coverage on a corpus written for them: three devices on two OS builds, repeated runs on one
build, an exploratory run, an invalid run and a PCC run.

- iPhone 17 Pro Max (``iPhone18,2``): slow on the old build, fastest on the new one (0.15 s quicker than the
  others), and an invalid (hand-edited) run on the old build; a PCC run on the new build.
- iPhone 17 Pro (``iPhone18,1``): two publishable runs on the new build (the newer stands for it, as on every
  page), one on the old one, and an
  exploratory run (two warmups) on the new one.
- iPhone Air (``iPhone18,4``): the new build only, drawn like the iPhone 17 Pro's runs there with trial noise of
  its own and 2 ms slower: the runs cannot tell the two apart, so they are tied. (A copy of one Pro run's very
  trials shifted by 2 ms would be told apart: paired by sample, every difference is the same 2 ms.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fmbench.errors import NotFoundError
from fmbench.ingest import ingest_paths
from fmbench.publish.build import build_site
from fmbench.serving.serve import create_app
from fmbench.storage.db import connect
from fmbench.views import PAGES, SiteContext, site_context
from fmbench.views.blocks import Cell
from fmbench.views.filters import Filters
from fmbench.views.render import Renderer

from testdata import compare_runbuilder

rb = compare_runbuilder()
OLD, NEW = "24A5256a", "24A5264n"
REMINDERS = rb.Scenario("reminder-capture", "Reminder capture", "taskParsing", samples=2, ttft=0.5, tps=30.0)
"""A second workload of task capture's category: the category has a page of its own."""
BASE = rb.RunSpec(scenarios=(rb.SYNTHETIC, rb.TASK_CAPTURE, REMINDERS))
MAX = BASE.but(hardware="iPhone18,2", device="iPhone 17 Pro Max")
PRO = BASE.but(hardware="iPhone18,1", device="iPhone 17 Pro")
AIR = BASE.but(hardware="iPhone18,4", device="iPhone Air")
HOST = "127.0.0.1:8000"


def day(n: int) -> datetime:
    return datetime(2026, 10, n, 9, 0, tzinfo=UTC)


RUNS: dict[str, Any] = {
    "max-old": MAX.but(build=OLD, started=day(1), noise_seed=11, ttft_offset=0.30),
    "max-old-edited": MAX.but(build=OLD, started=day(2), noise_seed=12),
    "max-new": MAX.but(build=NEW, started=day(20), noise_seed=13, ttft_offset=-0.15),
    "max-new-pcc": MAX.but(build=NEW, started=day(21), noise_seed=14, route="privateCloudCompute", ttft_offset=0.4),
    "pro-old": PRO.but(build=OLD, started=day(3), noise_seed=21),
    "pro-new-1": PRO.but(build=NEW, started=day(22), noise_seed=22),
    "pro-new-2": PRO.but(build=NEW, started=day(23), noise_seed=23),
    "pro-new-exploratory": PRO.but(build=NEW, started=day(24), noise_seed=24, warmups=2, ttft_offset=-0.4),
    "air-new": AIR.but(build=NEW, started=day(25), noise_seed=25, ttft_offset=0.002),
}


@dataclass(frozen=True)
class Corpus:
    db: Path
    site: Path
    run_ids: dict[str, str]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    root = tmp_path_factory.mktemp("leaderboards")
    folder = root / "runs"
    for name, spec in RUNS.items():
        path = rb.write_run(spec, folder, name, hand_edited=name == "max-old-edited")
        if spec.route == "privateCloudCompute":
            rb.write_sidecar(path, "wifi", "Berlin, DE")
    db = root / "db.duckdb"
    assert ingest_paths([folder], db).ok
    build_site(db, root / "site")
    with connect(db, read_only=True) as con:
        ids = {f.removesuffix(".json"): r for r, f in con.execute("SELECT run_id, file_name FROM runs").fetchall()}
        verdicts = dict(con.execute("SELECT file_name, verdict FROM runs").fetchall())
    assert verdicts["max-old-edited.json"] == "invalid" and verdicts["pro-new-exploratory.json"] == "exploratory"
    assert verdicts["pro-new-1.json"] == verdicts["max-new.json"] == verdicts["air-new.json"] == "publishable"
    assert verdicts["max-new-pcc.json"] == "publishable"
    return Corpus(db, root / "site", ids)


@pytest.fixture(scope="module")
def site(corpus: Corpus) -> Iterator[SiteContext]:
    with connect(corpus.db, read_only=True) as con:
        yield site_context(con, Renderer())


def _view(site: SiteContext, kind: str, **params: Any) -> Any:
    (found,) = [k for k in PAGES if k.name == kind]
    return found.view(site, Filters(), **params)


def _texts(row: Any) -> list[Any]:
    return [c.text if isinstance(c, Cell) else c for c in row.cells]


def _on_device_board(page: Any) -> Any:
    (board,) = [b for b in page.on_device if b.configuration.startswith("On-device · Synthetic Performance")]
    return board


# --- the leaderboard of a scenario -----------------------------------------------------------------


def test_the_faster_device_ranks_first_on_its_newest_build_and_the_indistinguishable_two_are_tied(
    site: SiteContext, corpus: Corpus,
) -> None:
    board = _on_device_board(_view(site, "leaderboard", scenario="task-capture"))
    rows = [_texts(r) for r in board.ranked.rows]
    assert rows[0][1] == "iPhone 17 Pro Max (iPhone18,2)"
    assert {rows[1][1], rows[2][1]} == {"iPhone 17 Pro (iPhone18,1)", "iPhone Air (iPhone18,4)"}
    assert [r[2] for r in rows] == [NEW, NEW, NEW]  # each on its newest build, not the old one
    assert [r[0] for r in rows] == ["1", "2 (tied)", "2 (tied)"]
    pro = next(r for r in rows if r[1] == "iPhone 17 Pro (iPhone18,1)")
    # Of the two publishable runs of one build, the newer stands for it, by the rule every page takes; the cell
    # says the other exists.
    assert pro[3] == corpus.run_ids["pro-new-2"]
    (pro_row,) = [r for r in board.ranked.rows if _texts(r)[1] == "iPhone 17 Pro (iPhone18,1)"]
    assert "the newest of this build's 2 publishable runs" in (pro_row.cells[3].title or "")
    (tie,) = board.ties
    assert f"{rows[1][1]} and {rows[2][1]} are tied on median TTFT" in tie and "holds zero" in tie
    assert "(paired by sample)" in tie  # both ran the same samples: drawn once for both, as a comparison does


def test_every_figure_carries_its_interval_and_a_machine_sort_key(site: SiteContext) -> None:
    board = _on_device_board(_view(site, "leaderboard", scenario="task-capture"))
    keys = [c.key for c in board.ranked.columns]
    assert keys == ["rank", "device", "build", "runs", "task", "ttft50", "ttft90", "tps50"]
    for row in board.ranked.rows:
        for cell in row.cells[4:]:
            assert isinstance(cell, Cell) and isinstance(cell.sort, float)
            assert re.fullmatch(r".+ \(.+ to .+\)", cell.text or ""), cell.text
        low, high = re.findall(r"([0-9.]+) s", row.cells[5].text)[1:]
        assert float(low) <= row.cells[5].sort <= float(high)  # the median inside its own interval
    sorted_by_ttft = [r.cells[5].sort for r in board.ranked.rows]
    assert sorted_by_ttft == sorted(sorted_by_ttft)
    assert [r.cells[0].sort for r in board.ranked.rows] == [1, 2, 2]


def test_exploratory_runs_are_listed_below_unranked_and_pcc_stands_on_a_board_of_its_own(site: SiteContext) -> None:
    page = _view(site, "leaderboard", scenario="task-capture")
    board = _on_device_board(page)
    assert [_texts(r)[3] for r in board.exploratory.rows] == ["Exploratory"]
    assert "rank" not in [c.key for c in board.exploratory.columns]
    # the exploratory run is the fastest of all, yet not ranked
    assert board.exploratory.rows[0].attrs["device"] == "iPhone18,1"
    assert next(_texts(r)[0] for r in board.ranked.rows if r.attrs["device"] == "iPhone18,1") == "2 (tied)"
    (pcc,) = page.pcc
    assert pcc.service and pcc.configuration.startswith("Private Cloud Compute")
    assert [_texts(r)[1] for r in pcc.ranked.rows] == ["iPhone 17 Pro Max (iPhone18,2)"]
    assert all(not b.service for b in page.on_device)
    assert all("Private Cloud Compute" not in _texts(r)[1] for b in page.on_device for r in b.ranked.rows)


def test_each_board_charts_quality_against_speed_with_the_pareto_front_marked(site: SiteContext) -> None:
    board = _on_device_board(_view(site, "leaderboard", scenario="task-capture"))
    chart = board.chart
    assert chart is not None and chart.title.startswith("Task success against median TTFT")
    traces = {t["name"]: t for t in chart.figure_json["data"]}
    front = traces["Pareto front (no device both faster and better)"]
    assert "iPhone 17 Pro Max (iPhone18,2)" in front["text"]  # the fastest is on the front whatever its quality
    drawn = [label for t in traces.values() for label in t["text"]]
    assert sorted(drawn) == sorted(_texts(r)[1] for r in board.ranked.rows)
    assert [r.cells[0] for r in chart.table.rows] == [_texts(r)[1] for r in board.ranked.rows]


def test_a_category_of_two_workloads_has_a_page_with_the_boards_of_both(site: SiteContext) -> None:
    page = _view(site, "leaderboard_category", category="taskParsing")
    assert page.scenario_id is None and page.category == "Task parsing"
    assert {b.scenario_id for b in page.on_device} == {"task-capture", "reminder-capture"}
    index = _view(site, "leaderboards")
    hrefs = [r.cells[0].href for r in index.scenarios.rows]
    assert "/leaderboards/task-capture/" in hrefs and "/leaderboards/synthetic-throughput/" in hrefs
    categories = {r.cells[0].text: r.cells[0].href for r in index.categories.rows}
    assert categories["Task parsing"] == "/leaderboards/category/taskParsing/"
    board = _view(site, "leaderboard", scenario="task-capture")
    assert "/leaderboards/category/taskParsing/" in [c.href for c in board.links]


def test_a_category_of_one_workload_links_its_leaderboard_and_has_no_page_of_its_own(
    site: SiteContext, corpus: Corpus
) -> None:
    index = _view(site, "leaderboards")
    categories = {r.cells[0].text: r.cells[0].href for r in index.categories.rows}
    assert categories["Synthetic throughput"] == "/leaderboards/synthetic-throughput/"  # its one workload's board
    synthetic = next(r for r in index.scenarios.rows if r.cells[0].text == "synthetic-throughput")
    assert synthetic.cells[2].href == "/leaderboards/synthetic-throughput/"
    board = _view(site, "leaderboard", scenario="synthetic-throughput")
    assert not [c for c in board.links if "/category/" in (c.href or "")]
    with pytest.raises(NotFoundError, match="holds one workload"):
        _view(site, "leaderboard_category", category="syntheticThroughput")
    assert not (corpus.site / "leaderboards" / "category" / "syntheticThroughput").exists()
    assert (corpus.site / "leaderboards" / "category" / "taskParsing" / "index.html").is_file()
    client = create_app(corpus.db, host="127.0.0.1", port=8000).test_client()
    assert client.get("/leaderboards/category/syntheticThroughput/", headers={"Host": HOST}).status_code == 404


# --- coverage -----------------------------------------------------------------------------------------


def test_coverage_shows_every_device_and_build_with_counts_linked_and_empty_cells_visible(
    site: SiteContext, corpus: Corpus
) -> None:
    page = _view(site, "coverage")
    (grid,) = page.grids
    assert grid.platform == "iOS" and [b.text for b in grid.builds] == [OLD, NEW]
    assert [r.device.text for r in grid.rows] == ["iPhone 17 Pro (iPhone18,1)", "iPhone 17 Pro Max (iPhone18,2)",
                                                  "iPhone Air (iPhone18,4)"]
    cells = {(r.device.text.split("(")[1].rstrip(")"), b.text): c for r in grid.rows for b, c in zip(grid.builds, r.cells, strict=True)}
    assert cells[("iPhone18,4", OLD)].empty  # never measured there: what to measure next
    pro_new = [c.text for c in cells[("iPhone18,1", NEW)].counts]
    assert pro_new == ["2 publishable", "1 exploratory", "0 invalid"]
    assert cells[("iPhone18,1", NEW)].counts[0].href == (
        f"/runs/?device=iPhone18%2C1&os_build={NEW}&revision={grid.revision}&verdict=publishable")
    assert cells[("iPhone18,1", NEW)].counts[1].href == f"/runs/{corpus.run_ids['pro-new-exploratory']}/"
    assert cells[("iPhone18,1", NEW)].counts[2].href is None
    max_old = [(c.text, c.href) for c in cells[("iPhone18,2", OLD)].counts]
    assert max_old[2] == ("1 invalid", f"/runs/{corpus.run_ids['max-old-edited']}/")
    assert grid.measured == 5 and grid.publishable == 5


# --- the same pages from the build and from serve --------------------------------------------------------


def _main(html: str) -> str:
    """A page's ``<main>`` (the footer says when it was generated, and in serve that it is a preview)."""
    start, end = html.index('<main id="main"'), html.index("</main>")
    return html[start:end]


@pytest.mark.parametrize("path", ["leaderboards/task-capture/", "coverage/", "leaderboards/",
                                  "leaderboards/category/taskParsing/"])
def test_the_pages_from_serve_are_the_static_pages(corpus: Corpus, path: str) -> None:
    client = create_app(corpus.db, host="127.0.0.1", port=8000).test_client()
    served = client.get(f"/{path}", headers={"Host": HOST})
    assert served.status_code == 200
    built = (corpus.site / path / "index.html").read_text(encoding="utf-8")
    assert _main(served.get_data(as_text=True)) == _main(built)


def test_the_built_leaderboard_is_a_sortable_table_with_its_chart_and_the_tie_in_words(corpus: Corpus) -> None:
    html = (corpus.site / "leaderboards" / "task-capture" / "index.html").read_text(encoding="utf-8")
    board = html[html.index('id="board-'):html.index("Private Cloud Compute</h2>")]
    ranked = board[board.index("<table"):board.index("</table>")]
    assert ranked.index("iPhone 17 Pro Max (iPhone18,2)") < ranked.index("iPhone 17 Pro (iPhone18,1)")
    assert re.search(r'<td data-sort="0\.[0-9]+">', ranked)  # the machine sort key of a figure
    assert '<td data-sort="2">2 (tied)</td>' in ranked
    assert "are tied on median TTFT" in board
    assert 'class="chart-plot" data-chart="board-task-capture-1' in board
    assert "Exploratory runs, unranked" in board
    coverage = (corpus.site / "coverage" / "index.html").read_text(encoding="utf-8")
    assert coverage.count('<td class="coverage-empty"><span class="muted">none</span></td>') == 1
    assert f'href="/runs/{corpus.run_ids["max-old-edited"]}/"' in coverage


# --- home's answers and the boards' defaults --------------------------------------------------------------


def _ranked_values(board: Any, column: str) -> dict[str, str]:
    """Each ranked device's figure on a board, as its cell starts (the value before its interval)."""
    i = [c.key for c in board.ranked.columns].index(column)
    return {_texts(r)[1]: _texts(r)[i].split(" (")[0] for r in board.ranked.rows}


def test_the_throughput_workload_is_ranked_by_tokens_per_second_by_default_and_the_others_by_ttft(
    site: SiteContext,
) -> None:
    throughput = _on_device_board(_view(site, "leaderboard", scenario="synthetic-throughput"))
    assert throughput.ranked_by == "median output tokens/s" and throughput.by.key == "tps_median"
    assert throughput.ranked.columns[0].label == "Rank (by median output tokens/s)"
    speeds = [r.cells[7].sort for r in throughput.ranked.rows]
    assert speeds == sorted(speeds, reverse=True)  # higher is faster: best first
    capture = _on_device_board(_view(site, "leaderboard", scenario="task-capture"))
    assert capture.ranked_by == "median TTFT"
    # every figure stays sortable: a column per figure of the catalog's leaderboard table, each with a sort key
    assert [c.key for c in throughput.ranked.columns][4:] == ["task", "ttft50", "ttft90", "tps50"]


def test_home_names_per_workload_the_fastest_on_device_as_the_leaderboard_ranks_them_ties_said_pcc_apart(
    site: SiteContext,
) -> None:
    home = _view(site, "home")
    answers = {a.workload.text: a for a in home.answers}
    assert list(answers) == ["Synthetic throughput", "Natural-language task capture", "Reminder capture"]
    capture = answers["Natural-language task capture"]
    board = _on_device_board(_view(site, "leaderboard", scenario="task-capture"))
    values = _ranked_values(board, "ttft50")
    (fastest,) = capture.fastest  # the Max alone: the two tied ones are tied for second place
    assert not capture.tied and capture.by == "median TTFT"
    assert fastest.text == f"iPhone 17 Pro Max (iPhone18,2): {values['iPhone 17 Pro Max (iPhone18,2)']}"
    assert fastest.href == "/devices/iPhone18,2/" and capture.workload.href == "/leaderboards/task-capture/"
    assert capture.board is not None and capture.board.href == f"/leaderboards/task-capture/#{board.anchor}"
    throughput = answers["Synthetic throughput"]
    tps = _ranked_values(_on_device_board(_view(site, "leaderboard", scenario="synthetic-throughput")), "tps50")
    assert throughput.tied and throughput.by == "median output tokens/s"  # three devices the runs cannot tell apart
    assert sorted(c.text for c in throughput.fastest) == sorted(f"{d}: {v} tokens/s" for d, v in tps.items())
    # PCC's figures stand apart: the service's own board, never in the on-device answer
    (pcc,) = capture.pcc
    (service,) = _view(site, "leaderboard", scenario="task-capture").pcc
    assert pcc.text == f"iPhone 17 Pro Max (iPhone18,2): {_ranked_values(service, 'ttft50')['iPhone 17 Pro Max (iPhone18,2)']}"
    assert capture.pcc_board is not None and capture.pcc_board.href == f"/leaderboards/task-capture/#{service.anchor}"
    assert all("Private Cloud Compute" not in (c.text or "") for a in home.answers for c in a.fastest)


def test_a_configuration_with_exploratory_runs_only_is_listed_compactly_never_as_an_empty_board(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "runs"
    rb.write_run(PRO.but(build=NEW, started=day(2), noise_seed=3), folder, "ranked")
    rb.write_run(PRO.but(build=NEW, started=day(3), noise_seed=4, warmups=2, suite="quick"), folder, "exploratory")
    db = tmp_path / "db.duckdb"
    assert ingest_paths([folder], db).ok
    with connect(db, read_only=True) as con:
        page = _view(site_context(con, Renderer()), "leaderboard", scenario="task-capture")
    assert [b.has_ranked for b in page.on_device] == [True]
    (row,) = page.unranked.rows
    assert "Practical Quick" in _texts(row)[0] and _texts(row)[1:] == ["iPhone 17 Pro", "1"]
    assert row.cells[2].href == "/runs/?verdict=exploratory"


def test_the_pcc_page_sets_each_workloads_on_device_and_pcc_figures_in_two_columns_never_one_ranking(
    site: SiteContext,
) -> None:
    page = _view(site, "pcc")
    pairs = {p.workload.text: p for p in page.routes}
    assert list(pairs) == ["Synthetic throughput", "Natural-language task capture", "Reminder capture"]
    assert "network and the server" in page.routes_caveat and "never as one ranking or one fastest" in page.routes_caveat
    capture = pairs["Natural-language task capture"]
    leaderboard = _view(site, "leaderboard", scenario="task-capture")
    board, (service,) = _on_device_board(leaderboard), leaderboard.pcc
    for column, source in ((capture.on_device, board), (capture.pcc, service)):
        assert [c.key for c in column.figures.columns] == ["device", "ttft_median", "tps_median"]  # no rank
        devices = [_texts(r)[0] for r in column.figures.rows]
        assert devices == sorted(devices)  # in name order, not by speed
        ttft = _ranked_values(source, "ttft50")
        assert {_texts(r)[0]: _texts(r)[1] for r in column.figures.rows} == ttft  # the board's own numbers
        assert column.board is not None and column.board.href == f"/leaderboards/task-capture/#{source.anchor}"
    assert (capture.on_device.route, capture.pcc.route) == ("On-device", "Private Cloud Compute")
    assert [_texts(r)[0] for r in capture.pcc.figures.rows] == ["iPhone 17 Pro Max (iPhone18,2)"]
