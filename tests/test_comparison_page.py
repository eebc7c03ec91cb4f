"""OS-build comparison pages of the fixture corpus: their intervals are the seeded resamples' (unchanged when the
resampling got faster), a page served with its configurations computed side by side is the built one, and a page
leads with its answer: the verdict sentence first, the caveats in one box, the expected differences apart, the
verdict table readable on a phone without sideways scrolling (in Chromium)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import pytest

from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.revisions import fixtures_registry
from fmbench.ingest import ingest_paths
from fmbench.views import comparison_blocks, comparisons, site_context
from fmbench.views.comparisons import ComparisonPage, build_comparison, build_pairs, comparison_page
from fmbench.views.filters import Filters
from fmbench.views.render import Renderer

from browser_support import AXE, fmbench_server
from testdata import FIXTURES

INTERVALS_DIGEST = "5b099548a46e2a75700b131c7b5302508b8998af4932b4fdcca29610db0d298f"
"""SHA-256 of every interval of every comparison page of the fixture corpus (84 of them), as the seeded cluster
bootstrap draws them since the intervals of sides that ran the same samples are paired by sample (63 of them). A
change of the resampling that changes a published interval must change this on purpose: it changed when the draw
stopped drawing trials again inside each drawn sample, with the √(G / (G − 1)) widening and the trials' noise as
the floor (resample_store.ALGORITHM 2)."""
UNPAIRED_DIGEST = "6fe791608bc02d8093c3834fbc3fb5964427cfd9e3c5b4e595f9f53b4433b542"
"""SHA-256 of the 21 intervals that are not paired (pinned again with :data:`INTERVALS_DIGEST`, for the same
reason)."""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("comparisons") / "corpus.duckdb"
    assert ingest_paths([FIXTURES], path, registry=fixtures_registry()).ok
    return path


PUBLISHED_FIGURES = (
    "task_success", "prompt_pass", "failure_rate", "constraint_score", "ttft_median", "ttft_p90", "tps_median",
    "tps_p90", "peak_memory", "cps_median", "cps_p90",
)
"""The catalog the intervals were published with. A compared figure added since would widen every one of them
(one more figure in each comparison's Bonferroni family), so they are computed with these figures alone."""


def test_every_interval_of_the_fixture_corpus_comparisons_is_the_one_published_before(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    published = tuple(f for f in fc.CATALOG.figures if f.key in PUBLISHED_FIGURES)
    assert [f.key for f in published] == list(PUBLISHED_FIGURES)
    monkeypatch.setattr(fc, "CATALOG", replace(fc.CATALOG, figures=published))
    con = duckdb.connect(str(db), read_only=True)
    try:
        site = site_context(con, Renderer())
        rows = []
        paired: list[bool] = []
        for device, a, b in sorted(build_pairs(site)):
            found = build_comparison(site, {"device": device, "baseline": a, "candidate": b}).to_json()
            for cmp in found["comparisons"]:
                for s in cmp["scenarios"]:
                    rows += [
                        [f"{device}/{a}..{b}", cmp["configuration"], s["scenario_id"], f["key"],
                         repr(f["interval"]["low"]), repr(f["interval"]["high"])]
                        for f in s["figures"] if f["interval"]
                    ]
                    paired += [f["interval"]["paired"] for f in s["figures"] if f["interval"]]
    finally:
        con.close()
    assert len(rows) == 84 and sum(paired) == 63
    assert hashlib.sha256(json.dumps(rows).encode()).hexdigest() == INTERVALS_DIGEST
    unpaired = [row for row, p in zip(rows, paired, strict=True) if not p]
    assert hashlib.sha256(json.dumps(unpaired).encode()).hexdigest() == UNPAIRED_DIGEST


def test_a_served_page_computes_its_configurations_side_by_side_into_the_built_page(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    device, baseline, candidate = "Mac17,2", "25B78", "26A5378f"  # two configurations measured on both builds
    con = duckdb.connect(str(db), read_only=True)
    try:
        built = comparison_page(site_context(con, Renderer(mode="static")), Filters.none(), device, baseline, candidate)
        threads: set[str] = set()
        section = comparisons._section

        def watched(*args, **kwargs):  # type: ignore[no-untyped-def]
            import threading

            threads.add(threading.current_thread().name)
            return section(*args, **kwargs)

        monkeypatch.setattr(comparisons, "_section", watched)
        monkeypatch.setattr(comparison_blocks.os, "cpu_count", lambda: 2)
        served = comparison_page(site_context(con, Renderer(mode="serve")), Filters.none(), device, baseline, candidate)
    finally:
        con.close()
    assert len(built.sections) == 2 and all(s.refused is None for s in built.sections)
    assert threads and "MainThread" not in threads  # on the pool's threads
    assert served.sections == built.sections


class _WatchedConnection:
    """A connection that notes each thread that calls it, but for making a cursor (a thread's own connection)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con
        self.threads: set[str] = set()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        return self._con.cursor()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._con, name)
        if not callable(found):
            return found

        def call(*args: Any, **kwargs: Any) -> Any:
            import threading

            self.threads.add(threading.current_thread().name)
            return found(*args, **kwargs)

        return call


def test_the_threads_of_a_served_comparison_never_call_the_requests_own_connection(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It serves one call at a time and refuses a second instead of waiting: a section that read the workloads' names
    # on it while another section did made the page an error ("connection is busy with another call").
    device, baseline, candidate = "Mac17,2", "25B78", "26A5378f"  # two configurations: two sections on two threads
    monkeypatch.setattr(comparison_blocks.os, "cpu_count", lambda: 2)
    con = duckdb.connect(str(db), read_only=True)
    try:
        watched = _WatchedConnection(con)
        page = comparison_page(site_context(watched, Renderer(mode="serve")),  # type: ignore[arg-type]
                               Filters.none(), device, baseline, candidate)
    finally:
        con.close()
    assert len(page.sections) == 2 and all(s.refused is None for s in page.sections)
    assert watched.threads == {"MainThread"}


# --- the answer first -------------------------------------------------------------------------------


class _Main(HTMLParser):
    """The text of <main>, chunk by chunk, each with the classes of the elements it is in; and every element's
    classes in document order."""

    VOID: ClassVar[set[str]] = {"br", "img", "input", "meta", "link", "hr", "col", "area", "source", "wbr"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, str, str]] = []
        self.texts: list[tuple[str, tuple[str, ...]]] = []
        self.elements: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        element = (tag, found.get("class") or "", found.get("id") or "")
        if tag == "main" or any(t == "main" for t, _c, _i in self.stack):
            self.elements.append(element)
        if tag not in self.VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        if data.strip() and any(t == "main" for t, _c, _i in self.stack):
            self.texts.append((" ".join(data.split()), tuple(f"{t}.{c}#{i}" for t, c, i in self.stack)))


def _html(db: Path, device: str, baseline: str, candidate: str) -> tuple[ComparisonPage, str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        renderer = Renderer(mode="static")
        page = comparison_page(site_context(con, renderer), Filters.none(), device, baseline, candidate)
        return page, renderer.render(page.template, page)
    finally:
        con.close()


def _main(html: str) -> _Main:
    parser = _Main()
    parser.feed(html)
    return parser


def test_the_first_text_after_the_title_is_the_verdict_sentence_and_the_charts_come_after_the_caveats(db: Path) -> None:
    page, html = _html(db, "iPhone18,1", "24A5256a", "24A5264n")
    main = _main(html)
    title = next(i for i, (_t, where) in enumerate(main.texts) if where[-1].startswith("h1."))
    assert main.texts[title][0] == page.title
    assert main.texts[title + 1][0] == page.verdict
    assert main.texts[title + 1][0].startswith("p90 TTFT of Synthetic throughput got 30% worse (0.401 s → 0.522 s)")
    order = [c for _t, c, _i in main.elements]
    verdicts = next(i for i, c in enumerate(order) if c.split()[:2] == ["data", "row-cards"])
    caveats = next(i for i, c in enumerate(order) if c.startswith("banner "))
    charts = order.index("chart")
    assert verdicts < caveats < charts


def test_a_comparison_has_one_caveat_box_and_lists_the_seed_as_an_expected_difference_not_a_caveat(db: Path) -> None:
    # 24A5210f ran 5 repetitions with seed 709, 24A5264n 20 with seed 7: the repetitions can explain a change,
    # the seed cannot (every run draws its own).
    page, html = _html(db, "iPhone18,1", "24A5210f", "24A5264n")
    (section,) = page.sections
    main = _main(html)
    boxes = [c for _t, c, _i in main.elements if c.split()[:1] == ["banner"]]
    assert boxes == ["banner banner-warning"]
    in_box = " ".join(t for t, where in main.texts if any(w.startswith("div.banner ") for w in where))
    expected = " ".join(t for t, where in main.texts if any(w.startswith("div.expected-differences") for w in where))
    assert "exploratory" in in_box and "repetitions differ as well" in in_box
    assert "Repetitions 5 20" in in_box  # the condition that can explain a change, in the box
    assert "seed" not in in_box.lower()
    assert "Seed 709 7" in expected
    runs = [r.run_id for r in section.comparison.baseline.runs + section.comparison.candidate.runs]  # type: ignore[union-attr]
    assert f"Run {runs[0]} {runs[1]}" in expected and "Started 2026-07-09T18:40:05Z 2026-11-04T11:30:00Z" in expected
    assert "more than one possible cause" in in_box  # said of the repetitions only
    assert "Seed" not in [r.cells[0] for r in section.differences.rows]


def test_the_os_version_change_is_listed_beside_the_build_change_in_the_caveat_box(db: Path) -> None:
    page, html = _html(db, "Mac17,2", "25B78", "26A5361b")
    (section,) = page.sections
    conditions = [r.cells for r in section.differences.rows]
    assert conditions[:2] == [["OS build", "25B78", "26A5361b"], ["OS version", "26.1.0", "27.0.0"]]
    in_box = " ".join(t for t, where in _main(html).texts if any(w.startswith("div.banner ") for w in where))
    assert "OS build 25B78 26A5361b OS version 26.1.0 27.0.0" in in_box


@pytest.fixture(scope="module")
def served_corpus(db: Path) -> Iterator[str]:
    """``fmbench serve`` of the corpus: the page a reader opens, rendered on request."""
    with fmbench_server(db) as url:
        yield url


_PLACES = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, width: r.width}; };
  const table = document.querySelector("table.row-cards");
  const row = [...table.querySelectorAll("tbody tr")].find(tr => tr.textContent.includes("worse"));
  const cell = label => box(row.querySelector(`td[data-label="${label}"]`));
  return {scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
          wrap: box(table.closest(".table-wrap")), table: box(table),
          cells: Object.fromEntries(["Figure", "Baseline", "Candidate", "Delta", "Interval", "Verdict"].map(l => [l, cell(l)])),
          verdict: row.querySelector('td[data-label="Verdict"]').textContent.trim()};
}"""


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1280])
def test_the_verdict_table_shows_the_candidate_delta_and_verdict_without_sideways_scrolling(
    browser: Any, served_corpus: str, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.add_init_script(path=str(AXE))
    try:
        page = context.new_page()
        response = page.goto(served_corpus + "compare/iPhone18,1/24A5256a..24A5264n/", wait_until="networkidle")
        assert response is not None and response.status == 200
        found = page.evaluate(_PLACES)
        violations = page.evaluate("async () => (await axe.run(document)).violations.map(v => v.id)")
    finally:
        context.close()
    assert violations == []  # the cards keep their labels readable (contrast) and their table's structure
    assert found["scrollWidth"] <= found["innerWidth"] == width  # the page does not scroll sideways
    assert found["table"]["width"] <= found["wrap"]["width"] + 1  # nor does the table inside its box
    assert found["verdict"] == "worse"
    for label, cell in found["cells"].items():
        assert cell["left"] >= 0 and cell["right"] <= width, (label, cell)
        assert found["wrap"]["left"] <= cell["left"] and cell["right"] <= found["wrap"]["right"] + 1, (label, cell)
    cells = found["cells"]
    if width == 390:  # one card per row: the cells are stacked, each as wide as the card
        assert cells["Candidate"]["left"] == cells["Delta"]["left"] == cells["Verdict"]["left"]
    else:  # a table: the cells side by side
        assert cells["Baseline"]["right"] <= cells["Candidate"]["left"] < cells["Delta"]["left"] < cells["Verdict"]["left"]
