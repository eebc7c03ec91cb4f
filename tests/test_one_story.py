"""One story on every page (publishing rules §11): the same evidence gives the same numbers wherever it is shown.

The corpus has the shapes that made pages disagree: samples that flip between two builds of a Mac, an exploratory
run (of a suite revision no registry lists) beside the publishable run of the same configuration on both builds
(which gave one build step two baselines), a newer build measured only by an exploratory run, and a second Mac
for a device comparison, with two publishable runs of one configuration on its one build (which gave the
leaderboard a pooled number and every other page the newer run's).
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any
from xml.etree import ElementTree as ET

import duckdb
import pytest

from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.detectable import DEFINITION
from fmbench.analysis.tolerance import VERDICT_MEANINGS
from fmbench.cli import main
from fmbench.comparison.build_history import read_histories
from fmbench.comparison.compare import compare_files, compare_runs, compare_selected
from fmbench.comparison.evidence import RULE
from fmbench.comparison.history_changes import HistoryChange, newest_first
from fmbench.comparison.regressions import BuildChange, BuildSampleChange, find_build_changes
from fmbench.ingest import ingest_paths
from fmbench.publish.regression_cache import build_regressions
from fmbench.serving.serve import create_app
from fmbench.views import PAGES, render_page, site_context
from fmbench.views.blocks import Cell
from fmbench.views.builds import build_page
from fmbench.views.catalog import device_page
from fmbench.views.comparison_blocks import ComparisonSection
from fmbench.views.comparisons import comparison_page, regressions_feed, regressions_page
from fmbench.views.device_comparisons import device_comparison_page
from fmbench.views.filters import Filters
from fmbench.views.home import _standing, home_page
from fmbench.views.home_queries import runs_by_id
from fmbench.views.render import Renderer
from fmbench.views.site import SiteContext

from testdata import DATA

ATOM = "{http://www.w3.org/2005/Atom}"


def _flips() -> ModuleType:
    name = "fmbench_flipped_samples"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DATA / "compare" / "flipped_samples.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


flips = _flips()
rb = flips.rb
UNLISTED = "0000000"
"""A benchmark commit no revision lists: its runs' suite revision is unknown, so they are exploratory."""
NEWER_BUILD = "26A5390a"
AIR = "Mac16,12"


def _at(day: int) -> datetime:
    return datetime(2026, 11, day, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("one-story")
    folder = root / "runs"
    flips.write_corpus(folder)  # publishable: 26A5353q -> 26A5378f, three samples flip
    # Unknown revision, each started after the publishable run of its build, and slower: "latest" alone took them.
    rb.write_run(flips.BASE.but(commit=UNLISTED, noise_seed=21, started=_at(4), ttft_offset=0.05), folder, "u-base")
    rb.write_run(flips.CANDIDATE.but(commit=UNLISTED, noise_seed=22, started=_at(11), ttft_offset=0.40), folder, "u-cand")
    # A newer build with an exploratory run only (one warmup), much slower: a listed change resting on it.
    rb.write_run(flips.CANDIDATE.but(build=NEWER_BUILD, warmups=1, noise_seed=23, started=_at(15), ttft_offset=0.30),
                 folder, "newer")
    # A second Mac on the candidate build, for the device comparison.
    rb.write_run(flips.CANDIDATE.but(hardware=AIR, device="MacBook Air M4", noise_seed=24, started=_at(12)),
                 folder, "air")
    # The Air measured again on the same build, publishable too, and slower: one build, two publishable runs.
    rb.write_run(flips.CANDIDATE.but(hardware=AIR, device="MacBook Air M4", noise_seed=25, started=_at(13),
                                     ttft_offset=0.05), folder, "air-again")
    path = root / "db.duckdb"
    report = ingest_paths([folder], path)
    assert report.ok
    return path


@pytest.fixture()
def site(db: Path) -> Iterator[SiteContext]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        yield site_context(con, Renderer())
    finally:
        con.close()


def _verdicts(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, str]]:
    return {str(f): (str(v), str(b)) for f, v, b in con.execute("SELECT file_name, verdict, os_build FROM runs").fetchall()}


def _section(site: SiteContext, href: str) -> ComparisonSection:
    """The comparison page section an href lands on (``/compare/DEVICE/A..B/#anchor``)."""
    path, _, anchor = href.partition("#")
    assert anchor, f"{href} names no section"
    _, kind, device, pair, _ = path.split("/", 4)
    assert kind == "compare"
    baseline, candidate = pair.split("..")
    page = comparison_page(site, Filters(), device, baseline, candidate)
    found = [s for s in page.sections if s.anchor == anchor]
    assert len(found) == 1, f"{href}: no section {anchor} on the page"
    return found[0]


def _cell_text(cell: Any) -> Any:
    return cell.text if isinstance(cell, Cell) else cell


def test_the_evidence_of_a_build_is_its_publishable_run_never_the_newer_one_of_an_unknown_revision(
    site: SiteContext,
) -> None:
    verdicts = _verdicts(site.con)
    assert verdicts["u-base.json"][0] == verdicts["u-cand.json"][0] == "exploratory"
    reasons = [m for (m,) in site.con.execute(
        "SELECT message FROM verdict_reasons v JOIN runs r USING (run_id) WHERE r.file_name = 'u-cand.json'"
    ).fetchall()]
    assert any(f"benchmark commit {UNLISTED} is in no revision of revisions.yaml" in m for m in reasons)
    report = site.regressions()
    steps = [(s.group.hardware_model, s.baseline_build, s.candidate_build) for s in report.steps]
    # One step per build pair and configuration: the unknown revision's runs no longer make a second one.
    assert steps.count((flips.DEVICE, flips.BASELINE_BUILD, flips.CANDIDATE_BUILD)) == 1
    (step,) = [s for s in report.steps if s.candidate_build == flips.CANDIDATE_BUILD and s.comparison]
    files = {r.file_name for r in (*step.comparison.baseline.runs, *step.comparison.candidate.runs)}
    assert files == {"mac-baseline.json", "mac-candidate.json"} and not step.exploratory
    listed = report.to_json()["sample_changes"]
    assert {(c["scenario_id"], c["outcome"], c["samples"]) for c in listed if c["candidate_build"] == flips.CANDIDATE_BUILD} == {
        ("task-capture", "now fail every trial", 2), ("journal-summary", "now pass every trial", 1)}
    # The newer build has no publishable run: its exploratory run stands for it, and the step says so.
    (newer,) = [s for s in report.steps if s.candidate_build == NEWER_BUILD]
    assert newer.exploratory and newer.baseline_build == flips.CANDIDATE_BUILD


def test_every_listed_change_links_to_a_section_with_the_same_numbers(site: SiteContext) -> None:
    report = site.regressions()
    assert report.changes and report.sample_changes
    for change in report.changes:
        section = _section(site, "/" + change.path)
        assert section.comparison is not None
        shown = section.comparison.scenario(change.scenario.scenario_id).figure(change.figure.key)
        f = change.figure
        assert (shown.baseline, shown.candidate, shown.delta) == (f.baseline, f.candidate, f.delta)
        assert shown.interval == f.interval and shown.verdict == f.verdict
    for samples in report.sample_changes:
        section = _section(site, "/" + samples.path)
        assert section.comparison is not None and section.comparison.sample_changes is not None
        assert section.samples is not None
        assert samples.samples.text() in section.verdict

    # /regressions/: each change point links to the section of the two builds around it, which shows that figure.
    page = regressions_page(site, Filters())
    rows = [row for table in (page.regressions, page.improvements) for row in table.rows]
    assert rows
    for row in rows:
        href = row.cells[0].href
        section = _section(site, href)
        assert section.table is not None and section.comparison is not None
        before, after = row.cells[0].text.split(" → ")
        assert {r.os_build for r in section.comparison.baseline.runs} == {before}
        assert {r.os_build for r in section.comparison.candidate.runs} == {after}
        assert [r for r in section.table.rows if r.cells[0] == row.cells[3] and r.cells[1] == row.cells[4]]
        assert [c for c in section.change_points if row.cells[5] in c and row.cells[4] in c]  # the same numbers
    assert page.samples.rows
    for row in page.samples.rows:
        section = _section(site, row.cells[0].href)
        assert row.cells[3] in section.verdict
    # Home, the feed and the OS build pages link to the same sections.
    home = home_page(site, Filters())
    assert home.changes and all(_section(site, c.href) for c in home.changes)
    # Home shows the eight newest entries of the list, the flipped samples among them where their build's are.
    newest = newest_first(site.change_list().listed())[:8]
    assert len(home.changes) == len(newest)
    samples = [c.text for c in home.changes if "every trial" in c.text]
    assert samples and len(samples) == sum(not isinstance(c, HistoryChange) for c in newest)
    feed = ET.fromstring(regressions_feed(site, Filters()))
    links = [e.find(f"{ATOM}link").get("href") for e in feed.findall(f"{ATOM}entry")]  # type: ignore[union-attr]
    assert links and all(_section(site, "/" + h.split("/", 3)[3]) for h in links)
    build = build_page(site, Filters(), build=flips.CANDIDATE_BUILD)
    (block,) = build.changes
    assert _section(site, block.comparison.href).comparison is not None
    assert any("2 samples of Natural-language task capture now fail every trial" in c.text for c in block.changes)


def test_the_headline_names_the_flipped_samples_first_and_an_exploratory_side(site: SiteContext) -> None:
    page = comparison_page(site, Filters(), flips.DEVICE, flips.BASELINE_BUILD, flips.CANDIDATE_BUILD)
    assert page.verdict.startswith("2 samples of Natural-language task capture now fail every trial"), page.verdict
    assert "exploratory" not in page.verdict
    newer = comparison_page(site, Filters(), flips.DEVICE, flips.CANDIDATE_BUILD, NEWER_BUILD)
    assert "the candidate stands on exploratory runs" in newer.verdict
    figure_changes = [c for c in site.regressions().changes if c.candidate_build == NEWER_BUILD]
    assert figure_changes and all(isinstance(c, BuildChange) and c.exploratory for c in figure_changes)


def test_a_device_comparison_stands_each_mac_on_its_publishable_run_not_a_newer_exploratory_one(
    site: SiteContext,
) -> None:
    page = device_comparison_page(site, Filters(), AIR, flips.DEVICE, "27")
    (section,) = page.sections
    assert section.comparison is not None
    assert [r.file_name for r in section.comparison.candidate.runs] == ["mac-candidate.json"]
    assert [r.file_name for r in section.comparison.baseline.runs] == ["air-again.json"]  # the newer of two
    assert f"{flips.DEVICE} on {flips.CANDIDATE_BUILD}" in section.heading


def test_serve_answers_the_same_section_and_headline(db: Path) -> None:
    client = create_app(db, host="127.0.0.1", port=8000).test_client()
    con = duckdb.connect(str(db), read_only=True)
    try:
        site = site_context(con, Renderer())
        page = comparison_page(site, Filters(), flips.DEVICE, flips.BASELINE_BUILD, flips.CANDIDATE_BUILD)
        changes = site.regressions().sample_changes
    finally:
        con.close()
    (anchor,) = {s.anchor for s in page.sections}
    served = client.get(f"/compare/{flips.DEVICE}/{flips.BASELINE_BUILD}..{flips.CANDIDATE_BUILD}/",
                        headers={"Host": "127.0.0.1:8000"})
    assert served.status_code == 200
    html = served.get_data(as_text=True)
    assert f'id="{anchor}"' in html
    assert page.verdict.split(";")[0] in html
    assert all(c.step.anchor == anchor for c in changes if c.candidate_build == flips.CANDIDATE_BUILD)


def test_a_figure_of_one_run_and_workload_reads_the_same_on_every_page_that_shows_it(site: SiteContext) -> None:
    (run_id,) = site.con.execute("SELECT run_id FROM runs WHERE file_name = 'mac-candidate.json'").fetchone() or ()
    median = fc.CATALOG["ttft_median"]
    (value,) = site.con.execute(
        "SELECT ttft_median FROM scenario_figures WHERE run_id = ? AND scenario_id = 'task-capture'", [run_id]
    ).fetchone() or ()
    text = median.format(value)
    assert text == f"{value:.3f} s"
    kinds = {k.name: k for k in PAGES}
    pages = {
        "run": {"run_id": run_id},
        "comparison": {"device": flips.DEVICE, "baseline": flips.BASELINE_BUILD, "candidate": flips.CANDIDATE_BUILD},
        "leaderboard": {"scenario": "task-capture"},
        "device": {"device": flips.DEVICE},
    }
    for name, args in pages.items():
        html = render_page(site, kinds[name], Filters(), **args)
        assert text in html, name
        # never the same figure in another form (fewer digits, milliseconds)
        assert f"{value:.2f} s<" not in html and f"{value * 1000:.0f} ms" not in html, name
    # The comparison's candidate value of that figure is that text, in the section the build step links to.
    section = _section(site, "/" + site.regressions().steps[0].path)
    assert section.table is not None
    (row,) = [r for r in section.table.rows
              if r.cells[0] == "Natural-language task capture" and r.cells[1] == median.label]
    assert _cell_text(row.cells[4]) == text


def test_home_shows_the_run_a_build_stands_on_not_a_newer_exploratory_one_beside_it(site: SiteContext) -> None:
    ids = dict(site.con.execute("SELECT file_name, run_id FROM runs").fetchall())
    newest = list(runs_by_id(site.con, [ids["u-cand.json"], ids["air.json"]]).values())
    shown = {r["file_name"] for r in _standing(site, newest)}
    assert shown == {"mac-candidate.json", "air-again.json"}


def _figure_text(site: SiteContext, file_name: str, scenario: str = "task-capture") -> tuple[str, str]:
    """A run's id and its median TTFT of a workload as every page formats it."""
    (run_id,) = site.con.execute("SELECT run_id FROM runs WHERE file_name = ?", [file_name]).fetchone() or ()
    (value,) = site.con.execute(
        "SELECT ttft_median FROM scenario_figures WHERE run_id = ? AND scenario_id = ?", [run_id, scenario]
    ).fetchone() or ()
    return run_id, fc.CATALOG["ttft_median"].format(value) or ""


def test_a_build_with_two_publishable_runs_shows_the_newer_runs_numbers_on_every_page_and_home(
    site: SiteContext,
) -> None:
    verdicts = _verdicts(site.con)
    assert verdicts["air.json"] == verdicts["air-again.json"] == ("publishable", flips.CANDIDATE_BUILD)
    older_id, older = _figure_text(site, "air.json")
    newer_id, newer = _figure_text(site, "air-again.json")
    assert older != newer
    (config,) = site.evidence().configurations(AIR, flips.CANDIDATE_BUILD)
    evidence = site.evidence().cell(AIR, flips.CANDIDATE_BUILD, config)
    assert evidence is not None and evidence.run_ids == (newer_id,) and evidence.side.rule == RULE == "latest"
    kinds = {k.name: k for k in PAGES}
    pages: dict[str, dict[str, str]] = {
        "home": {},
        "leaderboard": {"scenario": "task-capture"},
        "device_comparison": {"device_a": AIR, "device_b": flips.DEVICE, "generation": "27"},
        "device": {"device": AIR},
        "build": {"build": flips.CANDIDATE_BUILD},
        "run": {"run_id": newer_id},
    }
    shown = {name: render_page(site, kinds[name], Filters(), **args) for name, args in pages.items()}
    for name, html in shown.items():
        assert newer in html, name
    # One number for the build on home, the leaderboard and the device comparison: never the older run's beside
    # it, nor a pool of the two (the leaderboard pooled them: a number no run page shows). The older run's median
    # is the Mac's to three digits, so the leaderboard and the comparison are read where they show the Air.
    home_air = [chunk for chunk in re.split(r"<(?:tr|li)\b", shown["home"]) if AIR in chunk]
    assert home_air and not [chunk for chunk in home_air if older in chunk]
    build = build_page(site, Filters(), build=flips.CANDIDATE_BUILD)
    headline = [_cell_text(c) for r in build.figures.rows if r.cells[0] == f"MacBook Air M4 ({AIR})"
                and r.cells[2] == "Natural-language task capture" for c in r.cells]
    assert newer in headline and older not in headline
    # The Mac's row of that build is its publishable run's, not the newer exploratory one of an unknown revision.
    _mac_id, mac = _figure_text(site, "mac-candidate.json")
    _unknown_id, unknown = _figure_text(site, "u-cand.json")
    mac_row = [_cell_text(c) for r in build.figures.rows if r.cells[0].endswith(f"({flips.DEVICE})")
               and r.cells[2] == "Natural-language task capture" for c in r.cells]
    assert mac in mac_row and unknown not in mac_row
    board = shown["leaderboard"]
    (row,) = re.findall(rf'<tr data-f-device="{re.escape(AIR)}".*?</tr>', board, re.DOTALL)
    assert f">{newer} (" in row and f">{older} (" not in row
    (section,) = device_comparison_page(site, Filters(), AIR, flips.DEVICE, "27").sections
    assert section.table is not None
    (median,) = [r for r in section.table.rows
                 if r.cells[0] == "Natural-language task capture" and r.cells[1] == fc.CATALOG["ttft_median"].label]
    assert _cell_text(median.cells[3]) == newer  # the Air is the baseline
    # The leaderboard's row of the Air names the run it stands on, and says the other exists.
    assert newer_id in board and older_id not in board
    assert "the newest of this build&#39;s 2 publishable runs" in board


def test_every_selection_of_runs_defaults_to_the_one_rule_of_the_evidence_module() -> None:
    for function in (find_build_changes, build_regressions, read_histories, compare_selected, compare_runs,
                     compare_files):
        parameters = inspect.signature(function).parameters
        if "rule" in parameters:
            assert parameters["rule"].default == RULE, function.__name__
    for kind in ("comparison",):
        view = next(k for k in PAGES if k.name == kind).view
        assert inspect.signature(view).parameters["rule"].default == RULE
    (option,) = [p for p in main.commands["compare"].params if p.name == "rule"]  # type: ignore[attr-defined]
    assert option.default == RULE


def test_the_methodology_page_states_the_one_rule_every_page_takes_runs_by() -> None:
    text = " ".join((Path(__file__).resolve().parents[1] / "site" / "methodology.md").read_text(encoding="utf-8").split())
    assert f"**One run stands for a build.** Every page takes a device's runs of one configuration on one OS build by " \
           f"the same rule, the {RULE}: of its publishable runs (of one suite revision), the one that started last." in text


def test_the_api_comparison_carries_the_verdict_vocabulary_and_the_smallest_detectable_changes_definition(
    db: Path,
) -> None:
    client = create_app(db, host="127.0.0.1", port=8000).test_client()
    answer = client.get("/api/compare", headers={"Host": "127.0.0.1:8000"}, query_string={
        "device": flips.DEVICE, "baseline": flips.BASELINE_BUILD, "candidate": flips.CANDIDATE_BUILD})
    assert answer.status_code == 200
    (compared,) = answer.get_json()["comparisons"]
    assert compared["verdicts"] == VERDICT_MEANINGS
    assert compared["smallest_detectable_change"] == {"definition": DEFINITION, "power": 0.8}
    assert "80% of the time" in DEFINITION
    figures = [f for s in compared["scenarios"] for f in s["figures"]]
    tested = [f for f in figures if f["interval"]]
    assert tested and {f["verdict"] for f in tested} <= set(VERDICT_MEANINGS)
    assert all(f["smallest_detectable_change"] is not None for f in tested)
    # Its headline is the page's, in the same words.
    assert "did not change" not in compared["verdict"] and "unchanged" not in compared["verdict"]


def test_a_device_page_shows_each_build_by_the_run_it_stands_on_not_a_newer_exploratory_one(site: SiteContext) -> None:
    ids = dict(site.con.execute("SELECT file_name, run_id FROM runs").fetchall())
    page = device_page(site, Filters(), flips.DEVICE)
    rows = [r for s in page.sections for r in s.table.rows if r.cells[1] == flips.CANDIDATE_BUILD]
    assert rows
    linked = {c.href.rstrip("/").rsplit("/", 1)[-1] for r in rows for c in r.cells if isinstance(c, Cell) and c.href
              and "/runs/" in c.href}
    assert linked == {ids["mac-candidate.json"]}  # not u-cand.json, newer and exploratory


def test_within_one_build_the_changed_samples_come_before_the_figures_that_moved(site: SiteContext) -> None:
    listed = newest_first(site.change_list().listed())
    kinds: dict[datetime, list[bool]] = {}
    for change in listed:
        kinds.setdefault(change.step.candidate_first_seen, []).append(isinstance(change, BuildSampleChange))
    assert [k for k in kinds.values() if len(set(k)) == 2], "a build with both a changed sample and a moved figure"
    assert all(k == sorted(k, reverse=True) for k in kinds.values())
    # Home's short list keeps that order, so a build's changed samples stay on it whatever else moved.
    home = home_page(site, Filters())
    assert [c.text for c in home.changes] == [c.headline() for c in listed][: len(home.changes)]
    assert any("now fail every trial" in c.text for c in home.changes)
