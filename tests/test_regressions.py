"""OS-build regressions: consecutive builds compared, real changes listed, noise and invalid runs never."""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from xml.etree import ElementTree as ET

import duckdb
import numpy as np
import pytest
from markupsafe import escape

from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.changepoints import (
    DEFAULT_LEVEL,
    Series,
    changes_over_history,
    find_change_points,
    method_statement,
)
from fmbench.analysis.revisions import fixtures_registry
from fmbench.comparison.history_changes import newest_first
from fmbench.comparison.regressions import (
    BUILD_ORDER_RULE,
    RegressionReport,
    atom_feed,
    comparison_path,
    detect_regressions,
)
from fmbench.ingest import ingest_paths
from fmbench.serving.serve import create_app
from fmbench.views import PAGES, render_page, site_context
from fmbench.views.comparison_blocks import ComparisonSection
from fmbench.views.comparisons import comparison_page, regressions_feed, regressions_page
from fmbench.views.filters import Filters
from fmbench.views.home import home_page
from fmbench.views.render import Renderer
from fmbench.views.site import SiteContext

from testdata import DATA, FIXTURES

ATOM = "{http://www.w3.org/2005/Atom}"


def _load_builder() -> ModuleType:
    name = "fmbench_compare_runbuilder"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DATA / "compare" / "runbuilder.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


rb = _load_builder()
BASE = rb.RunSpec()


def day(n: int) -> datetime:
    return datetime(2026, 11, n, 9, 0, tzinfo=UTC)


def detect(tmp_path: Path, runs: dict[str, object], hand_edited: tuple[str, ...] = ()) -> RegressionReport:
    folder = tmp_path / "runs"
    for name, spec in runs.items():
        rb.write_run(spec, folder, name, hand_edited=name in hand_edited)
    report = ingest_paths([folder], tmp_path / "db.duckdb")
    assert report.ok
    return detect_regressions(tmp_path / "db.duckdb")


def steps(report: RegressionReport) -> list[tuple[str, str, str]]:
    return [(s.group.hardware_model, s.baseline_build, s.candidate_build) for s in report.steps]


def test_a_slower_build_is_listed_as_a_regression_with_its_size_direction_and_verdict(tmp_path: Path) -> None:
    report = detect(tmp_path, {
        "a": BASE.but(build="24A100a", started=day(1)),
        "b": BASE.but(build="24A200b", started=day(2), noise_seed=2),
        "c": BASE.but(build="24A300c", started=day(3), noise_seed=2, ttft_offset=0.1),
    })
    assert steps(report) == [("iPhone18,1", "24A100a", "24A200b"), ("iPhone18,1", "24A200b", "24A300c")]
    assert [s for s in report.changes if s.baseline_build == "24A100a"] == []
    found = {(c.scenario.scenario_id, c.figure.key): c for c in report.regressions}
    assert set(found) >= {("synthetic-throughput", "ttft_median"), ("task-capture", "ttft_median")}
    change = found[("synthetic-throughput", "ttft_median")]
    assert (change.baseline_build, change.candidate_build) == ("24A200b", "24A300c")
    assert change.figure.delta == pytest.approx(0.1)
    assert change.direction == "increased" and change.verdict == "worse" and change.is_regression
    assert change.figure.better == "lower"
    assert change.path == "compare/iPhone18,1/24A200b..24A300c/#" + change.step.anchor
    assert change.step.anchor.startswith("cfg-onDevice-performance-cold-")
    assert not change.exploratory
    # Only figures of what the planted offset moves: the TTFT, and the trial's duration that holds it.
    assert {fc.CATALOG[c.figure.key].source for c in report.changes} <= {"time_to_first_token", "duration"}
    payload = change.to_json()
    assert payload["direction"] == "increased" and payload["verdict"] == "worse"
    assert payload["figure"]["delta"] == pytest.approx(0.1)
    assert "from 0.2" in payload["summary"] and "Lower is better, so this is worse" in payload["summary"]


def test_a_faster_build_is_listed_as_an_improvement_not_a_regression(tmp_path: Path) -> None:
    report = detect(tmp_path, {
        "a": BASE.but(build="24A100a", started=day(1)),
        "b": BASE.but(build="24A200b", started=day(2), tps_offset=8.0),
    })
    assert report.regressions == ()
    assert {c.figure.key for c in report.improvements} >= {"tps_median"}
    assert all(c.verdict == "better" for c in report.improvements)
    # Faster output: each figure moved the way its better direction says (more tokens/s, a shorter trial).
    assert all(c.direction == ("increased" if c.figure.better == "higher" else "decreased") for c in report.improvements)
    assert {c.direction for c in report.improvements if c.figure.key.startswith("tps_")} == {"increased"}


def test_builds_are_ordered_by_version_never_by_the_date_measured(tmp_path: Path) -> None:
    report = detect(tmp_path, {
        "z-first": BASE.but(build="24Z900z", started=day(1)),
        "a-second": BASE.but(build="24A100a", started=day(2), noise_seed=2),
        "z-again": BASE.but(build="24Z900z", started=day(3), noise_seed=3),
    })
    assert steps(report) == [("iPhone18,1", "24A100a", "24Z900z")]
    assert "version order" in BUILD_ORDER_RULE and "never by the date" in BUILD_ORDER_RULE


def test_a_release_measured_before_its_beta_still_comes_after_it(tmp_path: Path) -> None:
    report = detect(tmp_path, {
        "release": BASE.but(build="24A335", started=day(1)),
        "beta": BASE.but(build="24A5264n", started=day(2), noise_seed=2),
    })
    assert steps(report) == [("iPhone18,1", "24A5264n", "24A335")]


def test_invalid_runs_never_appear(tmp_path: Path) -> None:
    report = detect(
        tmp_path,
        {
            "a": BASE.but(build="24A100a", started=day(1)),
            "b": BASE.but(build="24A200b", started=day(2), noise_seed=2),
            "edited": BASE.but(build="24A300c", started=day(3), ttft_offset=0.3),
        },
        hand_edited=("edited",),
    )
    assert steps(report) == [("iPhone18,1", "24A100a", "24A200b")]
    assert report.changes == ()


def test_exploratory_runs_take_part_and_their_changes_are_flagged(tmp_path: Path) -> None:
    report = detect(tmp_path, {
        "a": BASE.but(build="24A100a", started=day(1)),
        "b": BASE.but(build="24A200b", started=day(2), warmups=1, ttft_offset=0.1),
    })
    assert report.regressions
    assert all(c.exploratory for c in report.regressions)
    assert report.regressions[0].headline().startswith("Regression (exploratory): ")
    assert any("exploratory" in caveat for caveat in report.regressions[0].caveats)


def test_only_runs_of_one_configuration_and_os_generation_are_put_in_build_order(tmp_path: Path) -> None:
    report = detect(tmp_path, {
        "cold-a": BASE.but(build="24A100a", started=day(1)),
        "warm-b": BASE.but(build="24A200b", started=day(2), session="warm"),
        "os26": BASE.but(build="23B85", version="26.1", started=day(3)),
        "cold-c": BASE.but(build="24A300c", started=day(4), noise_seed=2),
        "mac": BASE.but(hardware="Mac17,2", system="macOS", build="26A5353q", started=day(5)),
    })
    assert steps(report) == [("iPhone18,1", "24A100a", "24A300c")]
    assert report.steps[0].group.session_mode == "cold" and report.steps[0].group.os_generation == 27


def test_the_atom_feed_is_valid_atom_with_stable_tag_ids_and_links_to_the_comparison_pages(tmp_path: Path) -> None:
    odd = rb.Scenario("synthetic-throughput", "Throughput <b>&amp; \"friends\"</b>", "syntheticThroughput")
    report = detect(tmp_path, {
        "a": BASE.but(build="24A100a", started=day(1), scenarios=(odd,)),
        "b": BASE.but(build="24A200b", started=day(2), scenarios=(odd,), ttft_offset=0.1),
    })
    generated = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    xml = atom_feed(report.regressions, site_url="https://bench.example.org/fm/", generated_at=generated)
    assert xml.startswith('<?xml version="1.0" encoding="utf-8"?>\n')
    root = ET.fromstring(xml)
    assert root.tag == f"{ATOM}feed"
    for required in ("id", "title", "updated", "author"):
        assert root.find(f"{ATOM}{required}") is not None, required
    assert root.findtext(f"{ATOM}updated") == "2026-11-20T12:00:00Z"
    self_link = root.find(f"{ATOM}link[@rel='self']")
    assert self_link is not None and self_link.get("href", "").startswith("https://bench.example.org/fm/")
    entries = root.findall(f"{ATOM}entry")
    assert len(entries) == len(report.regressions) >= 2
    ids = [e.findtext(f"{ATOM}id") or "" for e in entries]
    assert len(set(ids)) == len(ids)
    assert all(re.match(r"^tag:bench\.example\.org,2026:fmbench/build-change/iPhone18,1/24A100a\.\.24A200b/", i)
               for i in ids)
    for e in entries:
        for required in ("id", "title", "updated", "summary"):
            assert e.find(f"{ATOM}{required}") is not None, required
        link = e.find(f"{ATOM}link")
        assert link is not None
        assert (link.get("href") or "").startswith(
            "https://bench.example.org/fm/compare/iPhone18,1/24A100a..24A200b/#cfg-onDevice-performance-cold-")
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", e.findtext(f"{ATOM}updated") or "")
    title = entries[0].findtext(f"{ATOM}title") or ""
    assert 'Throughput <b>&amp; "friends"</b>' in title  # escaped in the XML, intact once parsed
    assert "<b>" not in xml
    # The same changes, detected again later, keep their ids.
    again = atom_feed(detect_regressions(tmp_path / "db.duckdb").regressions,
                      site_url="https://bench.example.org/fm", generated_at=datetime(2026, 12, 1, tzinfo=UTC))
    assert [e.findtext(f"{ATOM}id") for e in ET.fromstring(again).findall(f"{ATOM}entry")] == ids


def test_an_empty_feed_is_still_valid_and_the_site_url_must_be_absolute() -> None:
    root = ET.fromstring(atom_feed([], site_url="https://bench.example.org", generated_at=datetime(2026, 11, 1)))
    assert root.findall(f"{ATOM}entry") == [] and root.findtext(f"{ATOM}id", "").startswith("tag:bench.example.org,")
    with pytest.raises(ValueError, match="absolute"):
        atom_feed([], site_url="/fm/", generated_at=datetime(2026, 11, 1))


def test_comparison_paths_follow_the_site_scheme() -> None:
    assert comparison_path("Mac17,2", "26A5361b", "26A5378f") == "compare/Mac17,2/26A5361b..26A5378f/"


def test_the_fixture_corpus_shows_the_planted_iphone_regression_and_not_the_mac_noise_pair(tmp_path: Path) -> None:
    if not (FIXTURES / "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json").exists():
        pytest.skip("the fixture corpus is not generated in this checkout")
    report = ingest_paths([FIXTURES], tmp_path / "fixtures.duckdb", registry=fixtures_registry())
    assert report.count("ingested") > 0
    found = detect_regressions(tmp_path / "fixtures.duckdb")
    planted = {
        (c.scenario.scenario_id, c.figure.key): c
        for c in found.regressions
        if (c.hardware_model, c.baseline_build, c.candidate_build) == ("iPhone18,1", "24A5256a", "24A5264n")
    }
    # fixtures/README.md: median TTFT 0.369 s -> 0.467 s, median tokens/s 40.8 -> 34.8, iPhone, on-device performance.
    ttft = planted[("synthetic-throughput", "ttft_median")]
    tps = planted[("synthetic-throughput", "tps_median")]
    assert ttft.direction == "increased" and ttft.figure.relative_delta == pytest.approx(0.27, abs=0.02)
    assert tps.direction == "decreased" and tps.figure.relative_delta == pytest.approx(-0.15, abs=0.02)
    assert ttft.step.group.suite == "performance" and ttft.step.group.route == "onDevice"
    assert not ttft.exploratory
    # fixtures/README.md: the two Mac builds come from one distribution.
    mac = [s for s in found.steps if (s.group.hardware_model, s.baseline_build, s.candidate_build)
           == ("Mac17,2", "26A5361b", "26A5378f")]
    assert len(mac) == 1 and mac[0].comparison is not None
    assert [c for c in found.changes if c.step is mac[0]] == []
    # Invalid runs never appear (the hand-edited iPad OS 26 file, the Simulator, the run with no build).
    used = {r for s in found.steps if s.comparison for r in (*s.comparison.baseline.run_ids, *s.comparison.candidate.run_ids)}
    assert used
    assert not any(s.comparison and any(r.verdict == "invalid" for r in (*s.comparison.baseline.runs,
                                                                         *s.comparison.candidate.runs))
                   for s in found.steps)


def test_the_feed_stays_well_formed_xml_when_a_title_holds_a_control_character() -> None:
    from xml.etree import ElementTree as ET

    from fmbench.comparison.regressions import _xml_text

    assert _xml_text("Synthetic\x00throughput\x1b") == "Synthetic\ufffdthroughput\ufffd"
    element = ET.Element("title")
    element.text = _xml_text("a\x00b")
    ET.fromstring(ET.tostring(element))  # parses: no character XML 1.0 forbids


# --- change points over a build history, as /regressions/, its feed and home list them ------------------------

HISTORY_ORDER = ("24A5264n", "24A5301a", "24A335", "24B5010b")
"""The iPhone's builds in version order; measured in another order (the release 24A335 first)."""
HISTORY_MEASURED = {"24A335": 1, "24B5010b": 2, "24A5301a": 3, "24A5264n": 4}
FLAT_MAC = "Mac17,2"
FLAT_ORDER = ("26A5353q", "26A5361b", "26A5378f", "26B5012a")


@pytest.fixture(scope="module")
def history_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An iPhone whose median TTFT moves by 0.1 s from the release 24A335 on, and a Mac whose four builds are noise."""
    root = tmp_path_factory.mktemp("history-site")
    folder = root / "runs"
    one = (rb.TASK_CAPTURE,)
    for build, n in HISTORY_MEASURED.items():
        slower = 0.1 if HISTORY_ORDER.index(build) >= 2 else 0.0
        rb.write_run(BASE.but(build=build, started=day(n), noise_seed=n, ttft_offset=slower, scenarios=one),
                     folder, f"iphone-{build}")
    for i, build in enumerate(FLAT_ORDER):
        rb.write_run(BASE.but(hardware=FLAT_MAC, device="MacBook Pro", system="macOS", version="26.0", build=build,
                              started=day(10 + i), noise_seed=30 + i, scenarios=one), folder, f"mac-{build}")
    assert ingest_paths([folder], root / "db.duckdb").ok
    return root / "db.duckdb"


@pytest.fixture()
def history_site(history_db: Path) -> Iterator[SiteContext]:
    con = duckdb.connect(str(history_db), read_only=True)
    try:
        yield site_context(con, Renderer())
    finally:
        con.close()


def _landing(site: SiteContext, href: str) -> ComparisonSection:
    """The comparison page section an href lands on (``/compare/DEVICE/A..B/#anchor``): it must exist."""
    path, _, anchor = href.partition("#")
    _, kind, device, pair, _ = path.split("/", 4)
    assert kind == "compare" and anchor
    baseline, candidate = pair.split("..")
    page = comparison_page(site, Filters(), device, baseline, candidate)
    (found,) = [s for s in page.sections if s.anchor == anchor]
    assert found.comparison is not None
    assert {r.os_build for r in found.comparison.baseline.runs} == {baseline}
    assert {r.os_build for r in found.comparison.candidate.runs} == {candidate}
    return found


def test_regressions_lists_the_change_point_at_the_planted_build_and_none_for_a_flat_history(
    history_site: SiteContext,
) -> None:
    page = regressions_page(history_site, Filters())
    rows = [(r.cells[0].text, r.cells[1], r.cells[3], r.cells[4]) for r in page.regressions.rows]
    assert ("24A5301a → 24A335", "iPhone 17 Pro (iPhone18,1)", "Natural-language task capture", "Median TTFT") in rows
    assert not [r for r in (*page.regressions.rows, *page.improvements.rows) if FLAT_MAC in r.cells[1]]
    (moved,) = [c for c in history_site.change_list().changes if c.history.figure.key == "ttft_median"]
    assert (moved.baseline_build, moved.candidate_build) == ("24A5301a", "24A335")
    assert moved.point.before[-1] == "24A5301a" and moved.point.after == ("24A335", "24B5010b")
    assert moved.point.delta == pytest.approx(0.1, abs=0.03) and moved.is_regression
    low, high = moved.point.interval  # type: ignore[misc]
    assert low <= moved.point.delta <= high and low > 0
    assert len(moved.runs_before) == len(moved.point.before) and len(moved.runs_after) == 2
    # The builds measured out of version order are still compared in it: every step is adjacent in version.
    iphone = [(s.baseline_build, s.candidate_build) for s in history_site.regressions().steps
              if s.group.hardware_model == "iPhone18,1"]
    assert iphone == list(itertools.pairwise(HISTORY_ORDER))


def test_the_false_discovery_level_is_stated_on_regressions(history_site: SiteContext) -> None:
    kind = next(k for k in PAGES if k.name == "regressions")
    html = render_page(history_site, kind, Filters())
    assert str(escape(method_statement(DEFAULT_LEVEL))) in html
    assert "false-discovery rate at 5%" in html
    assert history_site.change_list().level == DEFAULT_LEVEL


def test_every_change_listed_links_to_a_section_that_exists_and_shows_the_same_builds(history_site: SiteContext) -> None:
    page = regressions_page(history_site, Filters())
    rows = [*page.regressions.rows, *page.improvements.rows, *page.samples.rows]
    assert rows
    for row in rows:
        before, after = row.cells[0].text.split(" → ")
        section = _landing(history_site, row.cells[0].href)
        assert row.cells[0].href.endswith(f"/{before}..{after}/#{section.anchor}")
    # A change point's section shows it with the same numbers, and the list's level.
    for row in (*page.regressions.rows, *page.improvements.rows):
        section = _landing(history_site, row.cells[0].href)
        assert [c for c in section.change_points if row.cells[5] in c and row.cells[4] in c]
        assert section.change_statement == method_statement(DEFAULT_LEVEL)
    home = home_page(history_site, Filters())
    assert home.changes and all(_landing(history_site, c.href) for c in home.changes)
    feed = ET.fromstring(regressions_feed(history_site, Filters()))
    links = [e.find(f"{ATOM}link").get("href") for e in feed.findall(f"{ATOM}entry")]  # type: ignore[union-attr]
    assert links and all(_landing(history_site, "/" + h.split("/", 3)[3]) for h in links)


def test_home_and_the_feed_list_the_same_change_points_with_the_same_numbers(history_site: SiteContext) -> None:
    listed = history_site.change_list()
    home = home_page(history_site, Filters())
    assert [c.text for c in home.changes] == [c.headline() for c in newest_first(listed.listed())][:8]
    feed = ET.fromstring(regressions_feed(history_site, Filters()))
    titles = {e.findtext(f"{ATOM}title") for e in feed.findall(f"{ATOM}entry")}
    assert titles == {c.headline() for c in listed.regressions()}
    (moved,) = [c for c in listed.changes if c.history.figure.key == "ttft_median"]
    page = regressions_page(history_site, Filters())
    (row,) = [r for r in page.regressions.rows if r.cells[4] == "Median TTFT"]
    assert row.cells[5] == moved.size_text() and row.cells[6] == moved.interval_text()
    assert moved.size_text() in moved.headline() and moved.headline() in titles


def test_serve_answers_regressions_with_the_same_change_points_and_level(history_db: Path) -> None:
    client = create_app(history_db, host="127.0.0.1", port=8000).test_client()
    served = client.get("/regressions/", headers={"Host": "127.0.0.1:8000"})
    assert served.status_code == 200
    html = served.get_data(as_text=True)
    assert str(escape(method_statement(DEFAULT_LEVEL))) in html
    con = duckdb.connect(str(history_db), read_only=True)
    try:
        page = regressions_page(site_context(con, Renderer()), Filters())
    finally:
        con.close()
    for row in page.regressions.rows:
        assert f'href="{row.cells[0].href}"' in html and row.cells[5] in html


def test_two_builds_of_five_samples_give_no_small_p_value_and_a_list_of_twenty_keeps_none() -> None:
    # site/methodology.md (#changepoints): five samples over two builds have 2**5 = 32 ways to be shuffled.
    step = np.array([[1.0, 2.0], [1.1, 2.1], [0.9, 1.9], [1.2, 2.2], [1.05, 2.05]])
    series = [Series((f"phone-{i}", "cfg", "rev", "w", "ttft"), ("24A100", "24A200"), step) for i in range(20)]
    assert all(t.p_value > 0.03 for s in series for t in find_change_points(s).tests)
    assert changes_over_history(series).change_points == ()


def test_a_site_whose_histories_are_noise_says_so_on_home_and_states_the_level_on_regressions(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "runs"
    one = (rb.TASK_CAPTURE,)
    for i, build in enumerate(FLAT_ORDER):
        rb.write_run(BASE.but(hardware=FLAT_MAC, device="MacBook Pro", system="macOS", version="26.0", build=build,
                              started=day(10 + i), noise_seed=30 + i, scenarios=one), folder, f"mac-{build}")
    assert ingest_paths([folder], tmp_path / "db.duckdb").ok
    con = duckdb.connect(str(tmp_path / "db.duckdb"), read_only=True)
    try:
        site = site_context(con, Renderer())
        assert not site.change_list().changes
        home = render_page(site, next(k for k in PAGES if k.name == "home"), Filters())
        assert "No figure's history moved at any build, at the false-discovery level the regressions page" in home
        regressions = render_page(site, next(k for k in PAGES if k.name == "regressions"), Filters())
        assert str(escape(method_statement(DEFAULT_LEVEL))) in regressions
    finally:
        con.close()

